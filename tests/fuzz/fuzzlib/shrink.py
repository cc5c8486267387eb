"""Shrinking a failing module to a small one that still fails the same way (delta debugging
over outputs, instructions and operands).

`still_fails(text, inputs) -> bool` is the test. Each round tries, keeping every change the
test still fails on:
  1. outputs: the root becomes one output of the failing ones (then only what it needs is
     left: dead instructions, computations and parameters go);
  2. cuts: an instruction becomes a new parameter fed with the value it had (XLA's value
     when XLA can run the module, else the interpreter's), which drops everything only it
     needed; instructions nearest the root are tried first, so one cut removes the most;
  3. bypasses: an instruction whose operand has its shape is replaced by that operand;
  4. inputs: each parameter's array becomes all zeros, then all ones, where that still fails.
Rounds repeat until one changes nothing (or the budget of tests is spent).
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import flatten
from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.ir import Instruction
from xlapy.hlo.parser import parse
from xlapy.passes.dce import DCE


def _drop_unused_parameters(module, inputs):
    entry = module.entry
    keep, new_inputs = [], []
    for p, x in zip(list(entry.parameters), inputs):
        if p.users or p is entry.root:
            keep.append(p)
            new_inputs.append(x)
        else:
            entry.instructions.remove(p)
            p.parent = None
    for i, p in enumerate(keep):
        p.parameter_number = i
    entry.parameters = keep
    return new_inputs


def _finish(module, inputs):
    DCE().run(module)
    inputs = _drop_unused_parameters(module, inputs)
    return module.to_string(), inputs


def _values(module, inputs, oracle):
    """Every entry instruction's value (by name), from `oracle(text, inputs)` on a module
    whose root returns all array-shaped instructions."""
    probe = module.clone()
    entry = probe.entry
    arrays = [i for i in entry.instructions if i.shape.is_array and i.opcode != "parameter"]
    if not arrays:
        return {}
    from xlapy.hlo.shapes import Shape
    root = Instruction("tuple", Shape.tuple([i.shape for i in arrays]), arrays,
                       name="probe_root")
    entry.add_instruction(root)
    entry.root = root
    try:
        outs = oracle(probe.to_string(), inputs)
    except Exception:
        return {}
    return {i.name: np.asarray(v) for i, v in zip(arrays, outs)}


def interpreter_oracle(text, inputs):
    module = parse(text)
    with np.errstate(all="ignore"):
        return flatten(Evaluator(flush_denormals=True).evaluate(module, list(inputs)))


class Shrinker:
    def __init__(self, still_fails, oracle=interpreter_oracle, budget: int = 400):
        self.still_fails = still_fails
        self.oracle = oracle
        self.budget = budget
        self.tests = 0

    def _try(self, text, inputs) -> bool:
        if self.tests >= self.budget:
            return False
        self.tests += 1
        try:
            return bool(self.still_fails(text, inputs))
        except Exception:
            return False

    def shrink(self, text: str, inputs: list, outputs=()):
        text, inputs = self._outputs(text, inputs, outputs)
        while self.tests < self.budget:
            before = (text, len(text))
            text, inputs = self._cuts(text, inputs)
            text, inputs = self._bypasses(text, inputs)
            text, inputs = self._simplify_inputs(text, inputs)
            if before[0] == text:
                break
        return text, inputs

    def _outputs(self, text, inputs, outputs):
        module = parse(text)
        root = module.entry.root
        if root.opcode != "tuple" or len(root.operands) <= 1:
            return text, inputs
        order = list(outputs) + [i for i in range(len(root.operands)) if i not in outputs]
        leaf = 0
        for i in order:
            m = parse(text)
            r = m.entry.root
            if i >= len(r.operands):
                continue
            target = r.operands[i]
            if not target.shape.is_array:
                continue
            m.entry.root = target
            r.drop_operands()
            m.entry.instructions.remove(r)
            t2, in2 = _finish(m, list(inputs))
            if self._try(t2, in2):
                return t2, in2
            leaf += 1
            if leaf > 6:
                break
        return text, inputs

    def _cuts(self, text, inputs):
        module = parse(text)
        values = _values(module, inputs, self.oracle)
        names = [i.name for i in reversed(module.entry.post_order())
                 if i.name in values and i.opcode not in ("parameter",)]
        for name in names:
            m = parse(text)
            entry = m.entry
            try:
                instr = entry.instruction(name)
            except KeyError:
                continue
            if instr is entry.root and len(entry.instructions) <= 1:
                continue
            p = Instruction("parameter", instr.shape, (), name=f"cut.{name}",
                            parameter_number=len(entry.parameters))
            entry.add_instruction(p)
            if instr is entry.root:
                entry.root = p
            instr.replace_all_uses_with(p)
            t2, in2 = _finish(m, list(inputs) + [values[name]])
            if len(t2) < len(text) and self._try(t2, in2):
                text, inputs = t2, in2
        return text, inputs

    def _bypasses(self, text, inputs):
        module = parse(text)
        names = [i.name for i in reversed(module.entry.post_order())
                 if i.opcode != "parameter"]
        for name in names:
            m = parse(text)
            try:
                instr = m.entry.instruction(name)
            except KeyError:
                continue
            for k, o in enumerate(instr.operands):
                if o.shape == instr.shape:
                    m2 = parse(text)
                    i2 = m2.entry.instruction(name)
                    o2 = i2.operands[k]
                    if i2 is m2.entry.root:
                        m2.entry.root = o2
                    i2.replace_all_uses_with(o2)
                    t2, in2 = _finish(m2, list(inputs))
                    if len(t2) < len(text) and self._try(t2, in2):
                        text, inputs = t2, in2
                        break
        return text, inputs

    def _simplify_inputs(self, text, inputs):
        inputs = list(inputs)
        for k, x in enumerate(inputs):
            a = np.asarray(x)
            if a.size <= 1 and a.dtype == np.bool_:
                continue
            for fill in (0, 1):
                cand = np.full(a.shape, fill).astype(a.dtype)
                if np.array_equal(cand, a, equal_nan=False):
                    break
                trial = inputs[:k] + [cand] + inputs[k + 1:]
                if self._try(text, trial):
                    inputs = trial
                    break
        return text, inputs
