"""Reduction splitting: a large reduction to a scalar becomes two reductions.

  reduce(x: [n]) -> reduce(reduce(reshape(x, [B, n/B]), dims={1}), dims={0})
  reduce(x: [A, ...]) (all dims) -> reduce(reduce(x, dims={1..k-1}), dims={0})

The first stage is a row reduction with B (or A) independent rows: vectorized along the
rows and split across threads; the second combines B partial results. Only when the init
value is the reducer's identity (it is applied in both stages), the reducer is a single
associative op (add, multiply, maximum, minimum, and, or) and the input is large. The
result differs from a sequential reduction only by the association of the operations.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.ir import Instruction
from xlapy.hlo.reducers import identity, simple_reducer
from xlapy.hlo.shapes import Shape
from xlapy.passes.rewrite import InstructionPass

MIN_ELEMENTS = 1 << 16
MAX_ROWS = 4096
MIN_ROW = 256


def _identity_init(red: Instruction, op: str) -> bool:
    init = red.operands[1]
    if init.opcode != "constant" or init.literal is None:
        return False
    v = np.asarray(init.literal).reshape(())
    ident = identity(op, init.shape.element_type)
    if init.shape.element_type.is_float and np.isnan(v):
        return False
    return bool(v == ident)


def _rows(n: int) -> int | None:
    for b in range(min(MAX_ROWS, n // MIN_ROW), 15, -1):
        if n % b == 0:
            return b
    return None


class ReductionSplitter(InstructionPass):
    name = "reduction-splitter"
    fused_too = True

    def rewrite(self, comp, r) -> bool:
        if r.opcode != "reduce" or len(r.operands) != 2 or r.shape.rank != 0:
            return False
        x = r.operands[0]
        op = simple_reducer(r.attrs["to_apply"])
        if (op is None or x.shape.size < MIN_ELEMENTS or not x.shape.has_default_layout
                or not _identity_init(r, op)):
            return False
        t = x.shape.element_type
        if x.shape.rank == 1:
            b = _rows(x.shape.size)
            if b is None:
                return False
            x2 = Instruction("reshape", Shape.array(t, (b, x.shape.size // b)), [x],
                             name="reshape", metadata=dict(r.metadata))
            comp.add_instruction(x2)
            rows = b
        else:
            if x.shape.dims[0] < 16:
                return False
            x2, rows = x, x.shape.dims[0]
        first = Instruction("reduce", Shape.array(t, (rows,)), [x2, r.operands[1]],
                            {"dimensions": tuple(range(1, x2.shape.rank)),
                             "to_apply": r.attrs["to_apply"]}, "reduce", dict(r.metadata))
        comp.add_instruction(first)
        second = Instruction("reduce", r.shape, [first, r.operands[1]],
                             {"dimensions": (0,), "to_apply": r.attrs["to_apply"]},
                             "reduce", dict(r.metadata))
        comp.add_instruction(second)
        comp.replace_instruction(r, second)
        comp.instructions = comp.post_order()
        return True
