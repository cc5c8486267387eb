"""Tuple simplification: forward tuple elements through get-tuple-element, and drop
tuples that rebuild a tuple they were taken apart from.

Rules (each non-fusion computation, walked in post order):
  get-tuple-element(tuple(a0, ..., an), k)                  -> ak
  tuple(gte(x, 0), gte(x, 1), ..., gte(x, n-1)), x of n elements -> x

Invariants: a rewrite is applied only when the replacement has exactly the instruction's
shape (layouts included); the replaced instruction and operands left dead by it are
removed; parameters are never removed. After this pass a while body that passes its state
through unchanged has its parameter as root.
"""

from __future__ import annotations

import logging

from xlapy.hlo.ir import Instruction
from xlapy.passes.rewrite import InstructionPass, replace_with

log = logging.getLogger("xlapy.passes")


def forwarded(instr: Instruction) -> Instruction | None:
    """What `instr` can be replaced by, or None."""
    if instr.opcode == "get-tuple-element":
        t = instr.operands[0]
        if t.opcode == "tuple":
            return t.operands[instr.attrs["index"]]
    elif instr.opcode == "tuple" and instr.operands:
        first = instr.operands[0]
        if first.opcode != "get-tuple-element":
            return None
        source = first.operands[0]
        shapes = source.shape.tuple_shapes
        if shapes is None or len(shapes) != len(instr.operands):
            return None
        for k, op in enumerate(instr.operands):
            if (op.opcode != "get-tuple-element" or op.operands[0] is not source
                    or op.attrs.get("index") != k):
                return None
        return source
    return None


class TupleSimplifier(InstructionPass):
    """Pass: gte(tuple) -> element, tuple(gte(x, 0..n-1)) -> x."""

    name = "tuple-simplifier"
    post_order = True

    def rewrite(self, comp, instr) -> bool:
        new = forwarded(instr)
        if new is None or not new.shape.equal_with_layout(instr.shape):
            return False
        log.debug("tuple-simplifier: %s -> %s", instr.name, new.name)
        replace_with(comp, instr, new)
        return True
