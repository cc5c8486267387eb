"""A convolution with few rows and a deep contraction (a filter gradient: M = input
features x window, N = output features, K = batch x output positions) as gemms over
blocks of its contracting positions (the plan: passes/conv_plan.kblock_plan).

The contracting positions are split in blocks of kb, and the blocks in one contiguous
range per thread. For each of its blocks a thread builds the block of the patch matrix,
A[:, k0 : k0 + kb] (in its slice of the scratch space, where it stays in cache), row-major
(NCHW / NCW operands: whole im2col lines of each row) or column-major (NHWC / NWC: a range
of A^T's rows), and adds A_blk . B_blk to its own C on its own (no fork and join per
block), B_blk being rows k0 .. k0 + kb of the kernel matrix read in place (a block lies in
one run of positions along which the kernel is one stride: the output gradient of one
batch element, or all of it). The first thread's C is the result; the others' are summed
into it at the end, in thread order (the same sums for every run).

Against the forms before: the row-blocked form (emitters/conv.py's emit_conv_blocked)
copied the kernel matrix into [K, N] and packed all of it again for each block of 48 rows
(6 times for the NCHW 8x32x32x32 3x3 -> 64 filter gradient); the depth-blocked one
(emit_conv_depth_blocked) ran each block's im2col and gemm across the threads, three
forks and joins per block, with C shared (the NHWC 7x7 filter gradient's 1568 x 64).
"""

from __future__ import annotations

import dataclasses

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_im2col import (im2col_fn, im2col_lines, new_fn, ptrs,
                                                      umin)
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, put, workspace_bytes
from xlapy.backends.cpu.passes.conv_plan import strides_of
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range

PARALLEL_FLOPS = 1 << 22   # smaller convolutions run on the calling thread (as conv.py)


def _align(n: int) -> int:
    return -(-n // 64) * 64


def emit_conv_kblocked(pe, instr, plan, kp, out_ptr, lhs_ptr, rhs_ptr) -> None:
    b, me = pe.b, pe.me
    es = 8 if plan.t == "f64" else 4
    n_blocks = (plan.k // kp.run) * kp.blocks_per_run
    units = min(me.num_threads, n_blocks) \
        if me.use_threads and plan.flops() >= PARALLEL_FLOPS else 1
    a_bytes = _align(plan.m * kp.kb * es)
    ws_bytes = _align(workspace_bytes(plan.t, plan.m, plan.n, kp.kb, 1, _swap(plan)))
    slice_bytes = a_bytes + ws_bytes
    c_bytes = _align(plan.m * plan.n * es)
    scratch = me.scratch(b, pe.arena, units * slice_bytes + (units - 1) * c_bytes)
    partials = b.gep(scratch, [c64(units * slice_bytes)], source_etype=T.I8)
    fn = _units_fn(pe, instr, plan, kp, units, n_blocks, a_bytes, slice_bytes, c_bytes)
    ctx = pe.table([lhs_ptr, rhs_ptr, out_ptr, scratch, partials])
    if units > 1:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
        b.call(_sum_fn(pe, instr, plan, units, c_bytes),
               [pe.table([out_ptr, partials]), c64(0), c64(plan.m * plan.n)])
    else:
        b.call(fn, [ctx, c64(0), c64(1)])


def _units_fn(pe, instr, plan, kp, units, n_blocks, a_bytes, slice_bytes, c_bytes):
    """fn(ctx = [lhs, rhs, out, scratch, partial Cs], u0, u1): the blocks of units (thread
    shares) [u0, u1), unit u in scratch slice u, adding to the result (u = 0) or to partial
    C u - 1."""
    fn, b = new_fn(pe, f"conv.kblocks.{instr.name}")
    ctx, u0, u1 = fn.args
    lhs_ptr, rhs_ptr, out_ptr, scratch, partials = ptrs(b, ctx, 5)
    es = 8 if plan.t == "f64" else 4
    dn = instr.attrs["dim_labels"]
    ostride = strides_of(instr.operands[1].shape)[dn.kernel_output_feature]
    # row-major, the patch matrix's work items are lines (no planes: a block is part of
    # each row); column-major, they are A^T's rows' lines or planes, per_k of them a row
    im2col = im2col_fn(pe, instr, dataclasses.replace(plan, plane=False)
                       if kp.rows_first else plan)
    per_row = plan.k // kp.line   # im2col lines of a row of A
    per_k = im2col_lines(plan) // plan.k
    ictx = entry_alloca(b, T.PTR, c64(3))
    b.store(lhs_ptr, b.gep(ictx, [c64(0)], source_etype=T.PTR))
    b.store(ir.Constant(T.PTR, None), b.gep(ictx, [c64(2)], source_etype=T.PTR))
    slots = entry_alloca(b, T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, plan.t, plan.m, plan.n, kp.kb,
                   (kp.kb, 1) if kp.rows_first else (1, plan.m),
                   (kp.b_stride, ostride), plan.c_strides, c64(0), 1, swap=_swap(plan))
    with for_range(b, u0, u1, name="unit") as u:
        a_buf = b.gep(scratch, [b.mul(u, c64(slice_bytes))], source_etype=T.I8)
        put(b, slots, "ws", b.gep(a_buf, [c64(a_bytes)], source_etype=T.I8))
        c_u = b.select(b.icmp_unsigned("==", u, c64(0)), out_ptr, b.gep(
            partials, [b.mul(b.sub(u, c64(1)), c64(c_bytes))], source_etype=T.I8))
        # units <= blocks: each unit gets at least one block
        blk0 = b.udiv(b.mul(u, c64(n_blocks)), c64(units))
        blk1 = b.udiv(b.mul(b.add(u, c64(1)), c64(n_blocks)), c64(units))
        with for_range(b, blk0, blk1, name="block") as blk:
            run_i = b.udiv(blk, c64(kp.blocks_per_run))
            in_run = b.mul(b.urem(blk, c64(kp.blocks_per_run)), c64(kp.kb))
            kc = umin(b, c64(kp.kb), b.sub(c64(kp.run), in_run))
            k0 = b.add(b.mul(run_i, c64(kp.run)), in_run)
            if kp.rows_first:
                # the block of A, row by row: row r's lines q0 .. q0 + kc / line, at
                # a_buf + r * kb (A's row r starts at r * K in the whole matrix's numbering)
                q0 = b.udiv(k0, c64(kp.line))
                nq = b.udiv(kc, c64(kp.line))
                with for_range(b, 0, plan.m, name="r") as r:
                    first = b.add(b.mul(r, c64(per_row)), q0)
                    origin = b.sub(b.mul(r, c64(kp.kb)), b.mul(first, c64(kp.line)))
                    b.store(b.gep(a_buf, [b.mul(origin, c64(es))], source_etype=T.I8),
                            b.gep(ictx, [c64(1)], source_etype=T.PTR))
                    b.call(im2col, [ictx, first, b.add(first, nq)])
            else:
                # column-major: A^T's rows k0 .. k0 + kc are work items k0 * per_k ..,
                # A^T's row k at a_buf + (k - k0) * M
                origin = b.sub(c64(0), b.mul(k0, c64(plan.m * es)))
                b.store(b.gep(a_buf, [origin], source_etype=T.I8),
                        b.gep(ictx, [c64(1)], source_etype=T.PTR))
                b.call(im2col, [ictx, b.mul(k0, c64(per_k)),
                                b.mul(b.add(k0, kc), c64(per_k))])
            # B's rows k0 .. k0 + kc: the run's offset in the kernel, then one stride
            off, rem = b.mul(in_run, c64(kp.b_stride)), run_i
            for size, stride in reversed(kp.b_outer):
                off = b.add(off, b.mul(b.urem(rem, c64(size)), c64(stride)))
                rem = b.udiv(rem, c64(size))
            b_blk = b.gep(rhs_ptr, [b.mul(off, c64(es))], source_etype=T.I8)
            put(b, slots, "K", kc)
            put(b, slots, "beta", b.select(b.icmp_unsigned("==", blk, blk0), c64(0),
                                           b.bitcast(ir.Constant(T.F64, 1.0), T.I64)))
            gemm.call(b, a_buf, b_blk, c_u)
    b.ret_void()
    return fn


def _swap(plan) -> bool | None:
    """C^T = B^T . A^T where C's columns are its contiguous dim (NCHW / NCW filter
    gradients: the input features and window positions are the rows, the output features
    a plane apart): C^T's tiles are stored a row of contiguous elements at a time, C's
    element by element (as conv.swapped_for); else the gemm's own choice (None)."""
    if plan.c_strides[0] == 1 and plan.c_strides[1] != 1 and plan.n > 1:
        return True
    return None


def _sum_fn(pe, instr, plan, units, c_bytes):
    """fn(ctx = [out, partial Cs], e0, e1): out[e] += each partial C's element e (C's
    element strides are the result's, so C covers its M x N elements; in unit order)."""
    fn, b = new_fn(pe, f"conv.kblocks_sum.{instr.name}")
    ctx, e0, e1 = fn.args
    out_ptr, partials = ptrs(b, ctx, 2)
    fty = T.value_type(instr.shape.element_type)
    with for_range(b, e0, e1, name="e") as e:
        at = b.gep(out_ptr, [e], source_etype=fty)
        acc = b.load(at, typ=fty)
        for u in range(1, units):
            p = b.gep(partials, [c64((u - 1) * c_bytes)], source_etype=T.I8)
            acc = b.fadd(acc, b.load(b.gep(p, [e], source_etype=fty), typ=fty))
        b.store(acc, at)
    b.ret_void()
    return fn
