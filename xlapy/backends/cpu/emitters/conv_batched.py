"""Convolutions whose output rows do not collapse because the batch is outside the
features (NCHW / NCW): one gemm per batch element, each building its own patch matrix
(the plan: conv_plan.batched_plan, the convolution of one batch element).

The batch elements are split in one contiguous range per thread; for each of its elements
a thread builds that element's patch matrix in its slice of the scratch space (a few
hundred KB: it stays in the core's L2 cache while the gemm packs it) and multiplies it by
the kernel matrix into the element's output, on its own. Before (emitters/conv.py), the
patch matrix of the whole batch was built first, across the threads (the NCW 16x128x124
window 5 input gradient's: 5 MB, written to memory and read back by the gemms).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_im2col import (im2col_fn, im2col_lines, new_fn,
                                                      pack_kernel_fn, ptrs)
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, put, workspace_bytes
from xlapy.backends.cpu.passes.conv_plan import strides_of
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range

PARALLEL_FLOPS = 1 << 22   # smaller convolutions run on the calling thread (as conv.py)


def _align(n: int) -> int:
    return -(-n // 64) * 64


def _swap(p1) -> bool:
    """gemm_kernel.swaps for the element's gemm, except where the kernel runs it unpacked
    (its direct phase; as conv.swapped_for)."""
    csa = 1 if p1.a_rows_first else p1.m
    if p1.c_strides[0] == 1 and p1.c_strides[1] != 1 and p1.n > 1:
        return True   # C's columns are its contiguous dim (NCHW): C^T has contiguous rows
    if p1.n > 1 and gk.direct_call(p1.t, p1.m, p1.n, vector_bits(),
                                   csa == 1 and p1.c_strides[1] == 1
                                   and (p1.b_strides or (0, 1))[1] == 1):
        return False
    return gk.swaps(p1.t, p1.m, p1.n, vector_bits())


def emit_conv_batched(pe, instr, plan, bp, out_ptr, lhs_ptr, rhs_ptr) -> None:
    p1, one = bp
    b, me = pe.b, pe.me
    es = 8 if plan.t == "f64" else 4
    n_batch = plan.outer[0][0]
    units = min(me.num_threads, n_batch) \
        if me.use_threads and plan.flops() >= PARALLEL_FLOPS else 1
    swap = _swap(p1)
    a_bytes = _align(p1.m * p1.k * es)
    slice_bytes = a_bytes + _align(workspace_bytes(p1.t, p1.m, p1.n, p1.k, 1, swap))
    bc_bytes = 0 if plan.b_strides else _align(plan.k * plan.n * es)
    scratch = me.scratch(b, pe.arena, bc_bytes + units * slice_bytes)
    slices = b.gep(scratch, [c64(bc_bytes)], source_etype=T.I8)
    if plan.b_strides:
        b_mat = rhs_ptr
    else:   # the kernel as a [K, N] matrix (its contracting dims are not one stride)
        b_mat = scratch
        b.call(pack_kernel_fn(pe, instr, plan), [pe.table([rhs_ptr, scratch]), c64(0),
                                                  c64(1)])
    fn = _units_fn(pe, instr, plan, p1, one, units, n_batch, a_bytes, slice_bytes, swap)
    ctx = pe.table([lhs_ptr, b_mat, out_ptr, slices])
    if units > 1:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
    else:
        b.call(fn, [ctx, c64(0), c64(1)])


def _units_fn(pe, instr, plan, p1, one, units, n_batch, a_bytes, slice_bytes, swap):
    """fn(ctx = [lhs, B, out, slices], u0, u1): the batch elements of units (thread
    shares) [u0, u1), unit u in slice u."""
    fn, b = new_fn(pe, f"conv.batched.{instr.name}")
    ctx, u0, u1 = fn.args
    lhs_ptr, b_mat, out_ptr, slices = ptrs(b, ctx, 4)
    es = 8 if plan.t == "f64" else 4
    dn = instr.attrs["dim_labels"]
    lstep = strides_of(instr.operands[0].shape)[dn.input_batch] * es
    ostep = strides_of(instr.shape)[dn.output_batch] * es
    im2col = im2col_fn(pe, one, p1)
    lines = im2col_lines(p1)
    ictx = entry_alloca(b, T.PTR, c64(3))
    b.store(ir.Constant(T.PTR, None), b.gep(ictx, [c64(2)], source_etype=T.PTR))
    slots = entry_alloca(b, T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, p1.t, p1.m, p1.n, p1.k,
                   (p1.k, 1) if p1.a_rows_first else (1, p1.m),
                   plan.b_strides or (plan.n, 1), p1.c_strides, c64(0), 1, swap=swap)
    with for_range(b, u0, u1, name="unit") as u:
        a_buf = b.gep(slices, [b.mul(u, c64(slice_bytes))], source_etype=T.I8)
        put(b, slots, "ws", b.gep(a_buf, [c64(a_bytes)], source_etype=T.I8))
        b.store(a_buf, b.gep(ictx, [c64(1)], source_etype=T.PTR))
        o0 = b.udiv(b.mul(u, c64(n_batch)), c64(units))
        o1 = b.udiv(b.mul(b.add(u, c64(1)), c64(n_batch)), c64(units))
        with for_range(b, o0, o1, name="o") as o:
            b.store(b.gep(lhs_ptr, [b.mul(o, c64(lstep))], source_etype=T.I8),
                    b.gep(ictx, [c64(0)], source_etype=T.PTR))
            b.call(im2col, [ictx, c64(0), c64(lines)])
            gemm.call(b, a_buf, b_mat, b.gep(out_ptr, [b.mul(o, c64(ostep))],
                                             source_etype=T.I8))
    b.ret_void()
    return fn
