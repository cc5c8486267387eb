"""Column-reduction kernels, the plan: a fusion whose one reduce keeps only its input's minor
(contiguous) dimension, e.g. [R, C] -> [C] (every bias gradient), possibly followed by an
elementwise epilogue (the bias update), runs as a column kernel
(emitters/column_kernel.py): rows outermost, a block of columns innermost.

  column_plan(fusion) -> ColumnPlan(reduce, blocks, column root, root elements) or None

Used by the cpu pipeline (ColumnFusion merges a gradient and its bias gradient only when
the result is such a kernel), by in-place and donation analysis (overwritable_operands),
and by the emitter.
"""

from __future__ import annotations

from typing import NamedTuple

from xlapy.hlo.ir import Instruction, operand_closure
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.reducers import simple_reducer
from xlapy.hlo.shapes import same_buffer_shape

BLOCK = 256       # columns per block (the accumulator: BLOCK elements on the stack) ...
WIDE_BLOCK = 512  # ... or this many from 2 * WIDE_BLOCK columns on: each thread then reads
                  # longer contiguous runs of every row (the MLP step's merged bias-gradient
                  # kernels, 256x1024, in benchmarks/mlp_breakdown.py's profile: 0.26 ms with
                  # 256-column blocks, 0.18 ms with 512)


def block_size(columns: int) -> int:
    return WIDE_BLOCK if columns >= 2 * WIDE_BLOCK else BLOCK


MIN_COLUMNS = 16


class ColumnPlan(NamedTuple):
    red: Instruction            # the reduce
    blocks: int                 # blocks of columns (the parallel dimension)
    column_root: Instruction    # the root element holding the reduction (its epilogue)
    elements: list              # the root's elements (the root itself when not a tuple)


def column_plan(instr: Instruction) -> ColumnPlan | None:
    """The plan if instr is a column reduction kernel, else None."""
    comp = instr.fused_computation if instr.opcode == "fusion" else None
    if comp is None:
        return None
    reduces = [i for i in comp.instructions if i.opcode == "reduce"]
    if len(reduces) != 1:
        return None
    red = reduces[0]
    if len(red.operands) != 2 or simple_reducer(red.attrs["to_apply"]) is None:
        return None
    x = red.operands[0].shape
    dims = set(red.attrs["dimensions"])
    kept = [d for d in range(x.rank) if d not in dims]
    if len(kept) != 1 or kept[0] != x.minor_to_major[0]:
        return None
    if x.dims[kept[0]] < MIN_COLUMNS or x.size // max(x.dims[kept[0]], 1) < 2:
        return None
    split = split_outputs(comp, red)
    if split is None:
        return None
    column_root, _ = split
    # every other instruction must be elementwise at the output's index (an epilogue), or
    # feed the reduction or an output of the input's dimensions
    feeding = _feeders(red)
    for e in split[1]:
        feeding |= _feeders(e) | {id(e)}
    for i in comp.instructions:
        if i is red or i.opcode in ("parameter", "constant", "tuple") or id(i) in feeding:
            continue
        if i.shape.dims != column_root.shape.dims and i.opcode != "broadcast":
            return None
    blocks = -(-x.dims[kept[0]] // block_size(x.dims[kept[0]]))
    return ColumnPlan(red, blocks, column_root, comp.root_elements())


def split_outputs(comp, red: Instruction):
    """(the root element holding the reduction, [root elements with the reduction input's
    dimensions and layout, which must not depend on the reduction]) or None."""
    x = red.operands[0].shape
    column, full = [], []
    for e in comp.root_elements():
        if e.shape.is_tuple:
            return None
        if e is red or id(red) in _feeders(e):
            column.append(e)
        elif e.shape.dims == x.dims and e.shape.minor_to_major == x.minor_to_major:
            full.append(e)
        else:
            return None
    if len(column) != 1 or column[0].shape.dims != red.shape.dims:
        return None
    return column[0], full


def _feeders(x: Instruction) -> set:
    """ids of the instructions x depends on (not x itself)."""
    return {id(i) for i in operand_closure(x) if i is not x}


def overwritable_operands(instr: Instruction, element: int | None = None) -> list[int]:
    """Operands whose buffer the column output (root element `element` of a multi-output
    kernel) may be written into, for donation: arrays of the column output's shape that
    the fused computation reads only at the output's own column, either in the epilogue
    (elementwise on column-shaped values, up to the column output) or broadcast along the
    rows. A block of columns reads those columns in its row loop and epilogue before the
    epilogue writes them, and no other block touches them. (A bias b read as b + x and
    updated as b - lr * sum(g): the bias update can go where b was.)"""
    plan = column_plan(instr)
    if plan is None:
        return []
    red, column_root = plan.red, plan.column_root
    comp = instr.fused_computation
    if element is not None and plan.elements[element] is not column_root:
        return []
    x = red.operands[0].shape
    row_broadcast = [x.minor_to_major[0]]
    cols = column_root.shape

    def per_column(v) -> bool:
        for u in v.users:
            if u is comp.root and u.opcode == "tuple":
                if v is not column_root:
                    return False
            elif u.opcode == "broadcast" and list(u.attrs.get("dimensions", ())) == \
                    row_broadcast and u.shape.dims == x.dims:
                continue
            elif u.opcode in ELEMENTWISE and u.shape.dims == cols.dims and u is not red:
                if not per_column(u):
                    return False
            else:
                return False
        return True

    params = {p.parameter_number: p for p in comp.parameters}
    return [k for k, o in enumerate(instr.operands)
            if k in params and same_buffer_shape(o.shape, cols) and per_column(params[k])]


