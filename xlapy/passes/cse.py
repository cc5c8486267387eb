"""Common subexpression elimination.

Algorithm: walk each non-fusion computation in post order, keeping a table from an
instruction's key to the first instruction seen with that key. The key is
  (opcode, shape with layout, operands by identity, parameter number, attributes, literal)
where computation-valued attributes compare structurally (two reducers `region_0` and
`region_2` that both compute max(x, y) are equal; see `computation_key`), other attribute
values by value, and constant literals bitwise (dtype, dims and bytes: NaN payloads and
-0.0 count). Metadata does not take part. For the commutative opcodes (add, multiply,
maximum, minimum, and, or, xor) the operands are compared as a multiset, so a+b merges with
b+a. An instruction whose key is in the table has its uses redirected to the earlier one and
is removed; since users come later in post order, their keys already see the merged
operands, so one walk reaches the fixed point.

Never merged: parameters, constants printed as {...} (their values are unknown),
side-effecting instructions (rng, custom-calls with custom_call_has_side_effect, calls and
loops containing such), after-all.

Invariants: the first instruction in post order survives, with its name and metadata; the
module stays verifiable; fusion computations are not touched.
"""

from __future__ import annotations

import logging

import numpy as np

from xlapy.hlo.attributes import Raw
from xlapy.hlo.ir import ELIDED, Computation, Instruction, Module
from xlapy.hlo.opcodes import COMMUTATIVE, NEVER_MERGED
from xlapy.passes.rewrite import has_side_effect, non_fusion_computations

log = logging.getLogger("xlapy.passes")

# COMMUTATIVE and NEVER_MERGED come from the opcode table (its commutative and never_merged
# columns).


class _Unique:
    """A key part equal only to itself (for values that must never match)."""


def literal_key(literal):
    if literal is None:
        return None
    if literal is ELIDED:
        return _Unique()
    if isinstance(literal, tuple):
        return tuple(literal_key(x) for x in literal)
    arr = np.asarray(literal)
    return (arr.dtype.str, arr.shape, arr.tobytes())


class KeyMaker:
    """Builds instruction keys; caches computation keys for one run."""

    def __init__(self):
        self._computations: dict[int, tuple] = {}

    def attr_key(self, value):
        if isinstance(value, Computation):
            return ("computation", self.computation_key(value))
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], Computation):
            return tuple(self.attr_key(c) for c in value)
        if isinstance(value, Raw):
            return ("raw", str(value))
        if isinstance(value, list):
            return tuple(self.attr_key(v) for v in value)
        try:
            hash(value)
        except TypeError:
            return ("repr", repr(value))
        return (type(value).__name__, value)

    def attrs_key(self, instr: Instruction) -> tuple:
        return tuple((k, self.attr_key(v)) for k, v in instr.attrs.items())

    def computation_key(self, comp: Computation) -> tuple:
        """Structural identity of a computation, independent of names: its instructions
        in post order with operands as positions."""
        key = self._computations.get(id(comp))
        if key is not None:
            return key
        self._computations[id(comp)] = ("recursive", id(comp))  # guards against cycles
        position: dict[int, int] = {}
        rows = []
        for k, instr in enumerate(comp.post_order()):
            position[id(instr)] = k
            rows.append((instr.opcode, instr.shape, instr.parameter_number,
                         tuple(position[id(o)] for o in instr.operands),
                         self.attrs_key(instr), literal_key(instr.literal)))
        key = (tuple(rows), position.get(id(comp.root)))
        self._computations[id(comp)] = key
        return key

    def instruction_key(self, instr: Instruction):
        """The CSE key, or None if the instruction must not be merged."""
        if instr.opcode in NEVER_MERGED or has_side_effect(instr):
            return None
        if instr.opcode == "constant" and (instr.literal is ELIDED or instr.literal is None):
            return None
        operands = tuple(id(o) for o in instr.operands)
        if instr.opcode in COMMUTATIVE:
            operands = tuple(sorted(operands))
        return (instr.opcode, instr.shape, operands, self.attrs_key(instr),
                literal_key(instr.literal))


class CSE:
    """Pass: merge identical instructions."""

    name = "cse"

    def run(self, module: Module) -> bool:
        keys = KeyMaker()
        changed = False
        for comp in non_fusion_computations(module):
            changed |= self._run_on(comp, keys)
        return changed

    @staticmethod
    def _run_on(comp: Computation, keys: KeyMaker) -> bool:
        table: dict = {}
        changed = False
        for instr in comp.post_order():
            key = keys.instruction_key(instr)
            if key is None:
                continue
            first = table.setdefault(key, instr)
            if first is instr:
                continue
            log.debug("cse: %s is %s", instr.name, first.name)
            instr.replace_all_uses_with(first)
            comp.remove_instruction(instr)
            changed = True
        return changed
