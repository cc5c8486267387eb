"""Constant folding: evaluate instructions whose operands are all constants.

Algorithm: walk each non-fusion computation in post order; an instruction whose operands
are all `constant` instructions (with known values) is evaluated with the reference
interpreter's rule for its opcode and replaced by a constant of the same shape and layout.
Because the walk is in post order, chains of foldable instructions fold in one run.

Not folded:
  - parameters, constants, iota and broadcast (folding them would only make the module
    bigger: a broadcast of a scalar constant stays a broadcast), tuples, after-all,
    optimization-barrier, while loops (could run for long), custom-calls and anything with
    side effects (rng, side-effecting custom-calls, calls that contain them);
  - tuple-shaped and token results;
  - results with more than `max_elements` elements (2**16 by default) unless every element
    is the same, in which case the result becomes broadcast(scalar constant); results are
    not even evaluated above `max_evaluated_elements`;
  - anything the interpreter cannot evaluate (EvaluationError or any other error is
    caught and the instruction is skipped) or evaluates to the wrong dtype/shape.

Invariants: the module stays verifiable; a folded constant keeps the instruction's metadata;
operands left without users are removed.
"""

from __future__ import annotations

import logging

import numpy as np

from xlapy.hlo.evaluator import EVAL_RULES, Evaluator
from xlapy.hlo.ir import ELIDED, Computation, Instruction, Module
from xlapy.hlo.opcodes import NOT_FOLDED
from xlapy.passes.rewrite import has_side_effect, non_fusion_computations, replace_with
from xlapy.passes.simplifier_rules_common import make, splat

log = logging.getLogger("xlapy.passes")

# NOT_FOLDED: the opcode table's not_folded column (each row says why).


class ConstantFolding:
    """Pass: replace instructions computed from constants only by constants."""

    name = "constant_folding"

    def __init__(self, max_elements: int = 1 << 16, max_evaluated_elements: int = 1 << 22):
        self.max_elements = max_elements
        self.max_evaluated_elements = max_evaluated_elements

    def run(self, module: Module) -> bool:
        evaluator = Evaluator(max_loop_iterations=100_000)
        changed = False
        for comp in non_fusion_computations(module):
            for instr in comp.post_order():
                if instr.parent is comp and self._foldable(instr):
                    changed |= self._fold(comp, instr, evaluator)
        return changed

    def _foldable(self, instr: Instruction) -> bool:
        if instr.opcode in NOT_FOLDED or not instr.operands:
            return False
        if not instr.shape.is_array or instr.shape.size > self.max_evaluated_elements:
            return False
        for o in instr.operands:
            if (o.opcode != "constant" or o.literal is ELIDED or o.literal is None
                    or not o.shape.is_array):
                return False
        return not has_side_effect(instr)

    def _fold(self, comp: Computation, instr: Instruction, evaluator) -> bool:
        rule = EVAL_RULES.get(instr.opcode)
        if rule is None:
            return False
        args = [np.array(o.literal, o.shape.dtype) for o in instr.operands]  # copies
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(rule(evaluator, instr, args))
        except Exception as e:
            log.debug("constant_folding: cannot evaluate %s: %s", instr.name, e)
            return False
        shape = instr.shape
        if value.dtype != shape.dtype or value.shape != shape.dims:
            log.debug("constant_folding: %s evaluated to %s%s, expected %s", instr.name,
                      value.dtype, value.shape, shape)
            return False
        if value.size > self.max_elements:
            flat = value.reshape(-1)
            if flat.tobytes() != np.repeat(flat[:1], flat.size).tobytes():
                log.debug("constant_folding: %s has %d elements (> %d), not folded",
                          instr.name, value.size, self.max_elements)
                return False
            new = splat(flat[0], shape)
        else:
            new = make("constant", shape, literal=np.array(value, order="C"))  # own copy, 0-d kept
        log.debug("constant_folding: %s folded", instr.name)
        replace_with(comp, instr, new)
        return True
