"""Transposes through shared-memory tiles: a transpose or layout-changing copy (alone, or
a fusion of one on a parameter) that swaps the two minor-most physical dimensions of its
operand, [batch, R, C] -> [batch, C, R] in memory order.

Each block moves one TILE x TILE tile: its TILE x TILE_ROWS threads read TILE_ROWS rows
at a time along C (adjacent threads, adjacent addresses) into shared memory, barrier, then
write the tile's columns along R (adjacent again). The shared tile has one padding column,
so reading a column touches TILE different banks.
"""

from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import I32, new_kernel, sreg
from xlapy.backends.gpu.emitters.launch import TILE, TILE_ROWS, LaunchDims, transpose_launch
from xlapy.backends.gpu.emitters.reduction import barrier
from xlapy.backends.llvm import types as T
from xlapy.hlo.ir import Instruction

MIN_ELEMENTS = 1024   # smaller transposes stay loop kernels


class TransposePlan(NamedTuple):
    batch: int
    rows: int      # R: the operand's second most-minor physical dimension
    cols: int      # C: its most-minor

    @property
    def launch(self) -> LaunchDims:
        return transpose_launch(self.batch, self.rows, self.cols)


def transpose_plan(instr: Instruction) -> TransposePlan | None:
    op = instr
    if len(instr.operands) != 1:
        return None
    if instr.opcode == "fusion":
        root = instr.fused_computation.root
        if root.opcode not in ("transpose", "copy") or root.operands[0].opcode != "parameter":
            return None
        op = root
    elif instr.opcode not in ("transpose", "copy"):
        return None
    src, dst = op.operands[0].shape, op.shape
    if src.is_tuple or dst.is_tuple or src.element_type != dst.element_type:
        return None
    if dst.size < MIN_ELEMENTS:
        return None
    perm = op.attrs["dimensions"] if op.opcode == "transpose" else list(range(dst.rank))
    # physical order (major -> minor) of the output, as operand dimensions; ignoring size-1
    out_phys = [perm[d] for d in reversed(dst.minor_to_major) if dst.dims[d] != 1]
    in_phys = [d for d in reversed(src.minor_to_major) if src.dims[d] != 1]
    if len(in_phys) not in (2, 3) or sorted(out_phys) != sorted(in_phys):
        return None
    if out_phys[:-2] != in_phys[:-2] or out_phys[-2:] != in_phys[-2:][::-1]:
        return None
    batch = src.dims[in_phys[0]] if len(in_phys) == 3 else 1
    return TransposePlan(batch, src.dims[in_phys[-2]], src.dims[in_phys[-1]])


def emit_transpose(module: ir.Module, instr: Instruction, plan: TransposePlan,
                   name: str) -> ir.Function:
    t = instr.shape.element_type
    ety = T.storage_type(t)
    fn, b = new_kernel(module, name, 2)
    out, src = fn.args
    tile_ty = ir.ArrayType(ir.ArrayType(ety, TILE + 1), TILE)
    tile = ir.GlobalVariable(module, tile_ty, module.get_unique_name(f"{name}.tile"),
                             addrspace=3)
    tile.linkage = "internal"
    tile.initializer = ir.Constant(tile_ty, ir.Undefined)
    tile.align = 16

    def i64(v):
        return b.zext(v, T.I64)

    bx, by, bz = (i64(sreg(b, f"ctaid.{a}")) for a in "xyz")
    tx, ty = i64(sreg(b, "tid.x")), i64(sreg(b, "tid.y"))
    tile_c = b.mul(bx, ir.Constant(T.I64, TILE))
    tile_r = b.mul(by, ir.Constant(T.I64, TILE))
    rows, cols = ir.Constant(T.I64, plan.rows), ir.Constant(T.I64, plan.cols)
    base = b.mul(bz, ir.Constant(T.I64, plan.rows * plan.cols))

    def in_bounds(r, c):
        return b.and_(b.icmp_unsigned("<", r, rows), b.icmp_unsigned("<", c, cols))

    def tile_ptr(i, j):
        return b.gep(tile, [ir.Constant(I32, 0), b.trunc(i, I32), b.trunc(j, I32)],
                     inbounds=True)

    for k in range(0, TILE, TILE_ROWS):   # read rows along C
        i = b.add(ty, ir.Constant(T.I64, k))
        r, c = b.add(tile_r, i), b.add(tile_c, tx)
        with b.if_then(in_bounds(r, c)):
            off = b.add(base, b.add(b.mul(r, cols), c))
            v = b.load(b.gep(src, [off], inbounds=True, source_etype=ety), typ=ety)
            b.store(v, tile_ptr(i, tx))
    barrier(b)
    for k in range(0, TILE, TILE_ROWS):   # write the tile's columns along R
        j = b.add(ty, ir.Constant(T.I64, k))
        c, r = b.add(tile_c, j), b.add(tile_r, tx)
        with b.if_then(in_bounds(r, c)):
            off = b.add(base, b.add(b.mul(c, rows), r))
            b.store(b.load(tile_ptr(tx, j), typ=ety),
                    b.gep(out, [off], inbounds=True, source_etype=ety))
    b.ret_void()
    return fn
