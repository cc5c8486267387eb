"""Convolution through xlapy's own gemm (the plan: passes/conv_plan.py).

For each feature (or batch) group: the lhs patch matrix A is built in the scratch space by
an im2col kernel on the thread pool (or A is a strided view of the lhs: no copy), the
kernel is used in place as B (or copied into a [K, N] matrix first when its contracting
dims are not adjacent in memory), and xlapy's gemm (gemm_kernel.py) computes C = A . B
straight into the output, whose row dims the plan collapsed (more-major row dims that do
not collapse are looped over, a gemm each). A gemm epilogue fusion around a convolution
(passes/gemm_epilogue.py) hands emit_conv_gemm the epilogue to run on each finished tile.

The patch and kernel matrices are built by conv_im2col.py. Where the output's rows do not
collapse (NCHW, NCW: a gemm per batch element), the gemms run side by side on the pool.

A row-major patch matrix larger than BLOCK_BYTES is never built whole (emit_conv_blocked):
each thread builds a block of its rows in its slice of the scratch space, where it stays
in the L2 cache, and multiplies it at once. Measured (one thread, CPU time, loaded 2-core
Zen 4 machine, conv + bias + relu): the deep-MNIST CNN's 50x14x14x32 5x5 -> 64 layer
12.3 ms -> 10.5 ms (JAX 10.5), the ResNet block's 16x32x32x64 3x3 -> 64 14.1 -> 12.0
(JAX 13.0); 95-100 GFLOP/s, against the machine's 98-102 for a 1536^3 gemm (xlapy's and
OpenBLAS's alike). The block size (96 KB to 768 KB) made no measurable difference.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_depthwise import emit_depthwise
from xlapy.backends.cpu.emitters.conv_direct import (direct_plan, emit_conv_direct,
                                                     emit_relayout_direct, relayout_plan)
from xlapy.backends.cpu.emitters.conv_depthwise_filter import emit_filter_grad
from xlapy.backends.cpu.emitters.conv_one_output import emit_one_output
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, put, workspace_bytes
from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.conv_guard import guarded
from xlapy.backends.cpu.emitters.conv_im2col import (im2col_fn, im2col_inner, im2col_lines,
                                                      new_fn, pack_kernel_fn, pdims, ptrs,
                                                      umin)
from xlapy.backends.cpu.emitters.conv_batched import emit_conv_batched
from xlapy.backends.cpu.emitters.conv_kblocked import emit_conv_kblocked
from xlapy.backends.cpu.emitters.conv_winograd import emit_guarded
from xlapy.backends.cpu.passes.conv_plan import (batched_plan, conv_plan, depthwise_plan,
                                                 filter_grad_plan, kblock_plan,
                                                 one_output_plan, strides_of)
from xlapy.backends.cpu.passes.winograd_plan import winograd_plan
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range

GEMM_PARALLEL_FLOPS = 1 << 22   # smaller gemms run on the calling thread (as gemm.py)
# NCHW / NCW convolutions the batched path would take run as their NHWC / NWC form through
# the direct kernel where that takes it (conv_direct.emit_relayout_direct)
RELAYOUT_DIRECT = True
IM2COL_PARALLEL_ELEMENTS = 1 << 15
# a row block of the patch matrix built at a time (blocked_rows): small enough to stay in
# the core's L2 cache beside the kernel matrix while the gemm reads it
BLOCK_BYTES = 384 << 10
BLOCK_ROW_UNIT = 48     # block rows: a multiple of the micro-tiles' (12) and direct rows (4)
MIN_DEPTH_BLOCK = 256   # contracting positions per depth block at least (gemm_params.KC)


def _esize(t: str) -> int:
    return {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}[t]


def _align(n: int) -> int:
    return -(-n // 64) * 64


@custom_emitter("convolution")
def emit_conv(pe, instr, dest, operands) -> bool:
    if not (depthwise_plan(instr) or filter_grad_plan(instr) or one_output_plan(instr)
            or conv_plan(instr)):
        return False   # the elemental loop

    def fast():
        if not (emit_depthwise(pe, instr, dest, operands)
                or emit_filter_grad(pe, instr, dest, operands)
                or emit_one_output(pe, instr, dest, operands)):
            emit_conv_gemm(pe, instr, conv_plan(instr), dest[0], operands[0], operands[1])

    def other():
        guarded(pe, instr, instr.operands[1], operands[1], fast,
                lambda: pe.run_kernel(instr, dest, operands))

    wp = winograd_plan(instr)
    if wp is not None:
        emit_guarded(pe, instr, wp, dest[0], operands[0], operands[1], other)
    else:
        other()
    return True


def swapped_for(plan) -> bool:
    """Whether the gemm computes C^T = B^T . A^T (few output features): its epilogue tiles
    are then transposed (as gemm.swapped_for)."""
    return _swaps(plan, plan.m, _a_strides(plan)[1])


def _swaps(plan, m: int, csa: int) -> bool:
    """gemm_kernel.swaps for a gemm of m rows, except where the kernel runs it without
    packing (its direct phase: A's, B's and C's rows contiguous and C thin; as
    gemm.swapped_for): the input gradient's 50x14x14x64 5x5 -> 32 took 26.9 ms swapped,
    10.4 ms direct (one thread)."""
    if plan.c_strides[0] == 1 and plan.c_strides[1] != 1 and plan.n > 1:
        return True   # C's columns are its contiguous dim (NCHW): C^T has contiguous rows
    if plan.n > 1 and gk.direct_call(plan.t, m, plan.n, vector_bits(),
                                     csa == 1 and plan.c_strides[1] == 1
                                     and (plan.b_strides or (0, 1))[1] == 1):
        return False
    return gk.swaps(plan.t, m, plan.n, vector_bits())


def emit_conv_gemm(pe, instr, plan, out_ptr, lhs_ptr, rhs_ptr, epilogue=None) -> None:
    kp = None if epilogue else kblock_plan(plan, instr.operands[1].shape,
                                           instr.attrs["dim_labels"])
    if kp is not None:
        emit_conv_kblocked(pe, instr, plan, kp, out_ptr, lhs_ptr, rhs_ptr)
        return
    bp = None if epilogue else batched_plan(instr, plan)
    rp = relayout_plan(instr) if bp is not None and RELAYOUT_DIRECT else None
    if rp is not None:
        emit_relayout_direct(pe, instr, rp, out_ptr, lhs_ptr, rhs_ptr)
        return
    if bp is not None:
        emit_conv_batched(pe, instr, plan, bp, out_ptr, lhs_ptr, rhs_ptr)
        return
    dp = direct_plan(instr, plan) if epilogue is None or not swapped_for(plan) else None
    if dp is not None:
        emit_conv_direct(pe, instr, plan, dp, out_ptr, lhs_ptr, rhs_ptr, epilogue)
        return
    rows_blk = blocked_rows(plan)
    if rows_blk:
        emit_conv_blocked(pe, instr, plan, rows_blk, out_ptr, lhs_ptr, rhs_ptr, epilogue)
        return
    depth_blk = blocked_depth(plan)
    if depth_blk:
        emit_conv_depth_blocked(pe, instr, plan, depth_blk, out_ptr, lhs_ptr, rhs_ptr,
                                epilogue)
        return
    b, me = pe.b, pe.me
    t, es = plan.t, _esize(plan.t)
    ec = _esize(gk.compute_type(t))   # C's elements: the sums' type
    a = instr.attrs
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    dn = a["dim_labels"]
    a_bytes = 0 if plan.a_view else _align(plan.m_total * plan.k * es)
    flops = 2 * plan.m * plan.n * plan.k
    n_outer = 1
    for size, _ in plan.outer:
        n_outer *= size
    # the outer row loop split across the pool's threads, a one-thread gemm each
    units = min(me.num_threads, n_outer) if me.use_threads and epilogue is None \
        and n_outer >= me.num_threads and flops * n_outer >= GEMM_PARALLEL_FLOPS else 1
    chunks = me.num_threads if me.use_threads and flops >= GEMM_PARALLEL_FLOPS \
        and units == 1 else 1
    ws_unit = _align(workspace_bytes(t, plan.m, plan.n, plan.k, chunks, swapped_for(plan)))
    ws_bytes = ws_unit * units
    out_ptr, final, bc_buf, (a_buf, ws) = _scratch(pe, instr, plan, out_ptr, rhs_ptr,
                                                   [a_bytes, ws_bytes])
    im2col = None if plan.a_view else im2col_fn(pe, instr, plan)
    gemm = OwnGemm(b, pe.alloca(T.I64, c64(len(gk.ARGS))), t, plan.m, plan.n, plan.k,
                   _a_strides(plan), plan.b_strides or (plan.n, 1), plan.c_strides, ws, chunks,
                   epilogue, swap=swapped_for(plan))

    ost = _strides(out)
    rst = _strides(rhs)
    lst = _strides(lhs)
    i_group = rhs.dims[dn.kernel_input_feature]

    def at(p, elements):
        return b.gep(p, [elements], source_etype=T.I8) if elements is not None else p

    def bytes_of(v, unit, size=es):
        return b.mul(v, c64(unit * size))

    def group_body(g):
        # per-group operand offsets (elements): output features, kernel output features,
        # and the lhs features (feature groups) or batch (batch groups)
        c_g = at(out_ptr, bytes_of(g, plan.n * ost[dn.output_feature], ec))
        if plan.b_strides:
            b_g = at(rhs_ptr, bytes_of(g, plan.n * rst[dn.kernel_output_feature]))
        else:
            b_g = at(bc_buf, bytes_of(g, plan.k * plan.n))
        if plan.batch_groups:
            l_g = at(lhs_ptr, bytes_of(g, out.dims[dn.output_batch] * lst[dn.input_batch]))
        else:
            l_g = at(lhs_ptr, bytes_of(g, i_group * lst[dn.input_feature]))
        if im2col is not None:
            ptrs = pe.table([lhs_ptr, a_buf, b.inttoptr(g, T.PTR)])
            lines = im2col_lines(plan)
            total = lines * im2col_inner(plan)
            if me.use_threads and total >= IM2COL_PARALLEL_ELEMENTS and lines >= 2:
                grain = max(lines // (4 * me.num_threads), 1)
                b.call(threadpool.declare(pe.llmod), [im2col, ptrs, c64(lines), c64(grain)])
            else:
                b.call(im2col, [ptrs, c64(0), c64(lines)])

        a_base = a_buf if im2col is not None else l_g
        if n_outer == 1:
            gemm.call(b, a_base, b_g, c_g)
        elif units > 1:
            fn = _outer_fn(pe, instr, plan, n_outer, units, ws_unit, im2col is not None)
            ctx = pe.table([a_base, b_g, c_g, ws])
            b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
        else:
            with for_range(b, 0, n_outer, name="conv.outer") as o:
                _outer_gemm(b, plan, gemm, o, a_base, b_g, c_g, im2col is not None)

    _each_group(b, plan, group_body)
    if final is not None:
        _round(b, out, out_ptr, final)


def _outer_gemm(b, plan, gemm, o, a_base, b_g, c_g, materialized: bool) -> None:
    """The gemm of the outer row index o (an i64)."""
    es, ec = _esize(plan.t), _esize(gk.compute_type(plan.t))
    c_off, a_off = c64(0), c64(0)
    rem = o
    for (size, stride), lstride in zip(reversed(plan.outer), reversed(_outer_lhs(plan))):
        idx = b.urem(rem, c64(size))
        rem = b.udiv(rem, c64(size))
        c_off = b.add(c_off, b.mul(idx, c64(stride)))
        a_off = b.add(a_off, b.mul(idx, c64(lstride)))
    if materialized:
        a_off = b.mul(o, c64(plan.m * plan.k if plan.a_rows_first else plan.m))
    c_o = b.gep(c_g, [b.mul(c_off, c64(ec))], source_etype=T.I8)
    a_o = b.gep(a_base, [b.mul(a_off, c64(es))], source_etype=T.I8)
    gemm.call(b, a_o, b_g, c_o)


def _outer_fn(pe, instr, plan, n_outer, units, ws_unit, materialized) -> ir.Function:
    """fn(ctx = [A, B, C of the group, workspace], u0, u1): the gemms of the outer row
    indices of units (thread shares) [u0, u1), one thread each, unit u with its slice of
    the workspace. A convolution whose rows do not collapse (NCHW's batch) runs its
    gemms side by side rather than each split across the threads: NCHW 8x32x32x32 3x3
    stride 2 -> 64: 1.75 -> 1.48 ms CPU time, NCH 16x64x128 window 5 -> 128: 2.66 -> 2.45
    (JAX 1.49 and 2.48, load 7-13)."""
    fn, b = new_fn(pe, f"conv.outer.{instr.name}")
    ctx, u0, u1 = fn.args
    a_base, b_g, c_g, ws = ptrs(b, ctx, 4)
    slots = entry_alloca(b, T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, plan.t, plan.m, plan.n, plan.k, _a_strides(plan),
                   plan.b_strides or (plan.n, 1), plan.c_strides, c64(0), 1,
                   swap=swapped_for(plan))
    per = -(-n_outer // units)
    with for_range(b, u0, u1, name="unit") as u:
        put(b, slots, "ws", b.gep(ws, [b.mul(u, c64(ws_unit))], source_etype=T.I8))
        o0 = umin(b, b.mul(u, c64(per)), c64(n_outer))
        o1 = umin(b, b.add(o0, c64(per)), c64(n_outer))
        with for_range(b, o0, o1, name="o") as o:
            _outer_gemm(b, plan, gemm, o, a_base, b_g, c_g, materialized)
    b.ret_void()
    return fn


def blocked_rows(plan) -> int:
    """Rows of the patch matrix A per block when the convolution runs a block at a time
    (emit_conv_blocked), else 0: A materialized row-major ([M, K], each of its lines part of
    one row), no outer row loops, and more rows than one block holds."""
    if plan.a_view or not plan.a_rows_first or plan.outer or pdims(plan)[-1][0] != "c":
        return 0
    rows = BLOCK_BYTES // (plan.k * _esize(plan.t))
    rows = max(rows // BLOCK_ROW_UNIT, 1) * BLOCK_ROW_UNIT
    return rows if plan.m > rows else 0


def emit_conv_blocked(pe, instr, plan, rows_blk, out_ptr, lhs_ptr, rhs_ptr, epilogue) -> None:
    """The convolution as gemms of `rows_blk` rows of the output each: a block of the patch
    matrix is built in a slice of the scratch space (it stays in the core's cache) and
    multiplied at once, so the whole patch matrix is never written to memory and read back.
    The blocks are split across the pool's threads (`chunks` contiguous ranges, each with
    its own slice); the epilogue, if any, runs on each finished tile as in one gemm."""
    b, me = pe.b, pe.me
    t, es = plan.t, _esize(plan.t)
    out = instr.shape
    n_blocks = -(-plan.m // rows_blk)
    flops = 2 * plan.m * plan.n * plan.k
    chunks = min(me.num_threads, n_blocks) \
        if me.use_threads and flops >= GEMM_PARALLEL_FLOPS else 1
    swap = _swaps(plan, rows_blk, 1)   # a block of A: row-major
    ws_bytes = 0
    for mb in {rows_blk, plan.m - (n_blocks - 1) * rows_blk}:
        rows, cols = (plan.n, mb) if swap else (mb, plan.n)
        ws_bytes = max(ws_bytes, gk.workspace_bytes(t, vector_bits(), rows, plan.k, 1, cols))
    a_bytes = _align(rows_blk * plan.k * es)
    slice_bytes = a_bytes + _align(ws_bytes)
    out_ptr, final, bc_buf, (slices,) = _scratch(pe, instr, plan, out_ptr, rhs_ptr,
                                                 [chunks * slice_bytes])
    fn = _blocks_fn(pe, instr, plan, rows_blk, chunks, a_bytes, slice_bytes, swap, epilogue)

    def group_body(g):
        c_g, b_g = _group_operands(b, instr, plan, g, out_ptr, rhs_ptr, bc_buf)
        ctx = pe.table([lhs_ptr, c_g, b_g, slices, b.inttoptr(g, T.PTR),
                        epilogue[1] if epilogue else ir.Constant(T.PTR, None)])
        if chunks > 1:
            b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(chunks), c64(1)])
        else:
            b.call(fn, [ctx, c64(0), c64(1)])

    _each_group(b, plan, group_body)
    if final is not None:
        _round(b, out, out_ptr, final)


def _scratch(pe, instr, plan, out_ptr, rhs_ptr, sizes):
    """(C, the bf16 / f16 result or None, the kernel copied as [K, N] (when not read in
    place), regions of the byte sizes given) in the scratch space: a narrow result's f32
    sums first, laid out as the result and rounded at the end (_round)."""
    b, es = pe.b, _esize(plan.t)
    out = instr.shape
    narrow = out.element_type.name != gk.compute_type(plan.t)
    c_bytes = _align(out.size * _esize(gk.compute_type(plan.t))) if narrow else 0
    bc_bytes = 0 if plan.b_strides else _align(plan.groups * plan.k * plan.n * es)
    scratch = pe.me.scratch(b, pe.arena, c_bytes + bc_bytes + sum(map(_align, sizes)))
    final = None
    if narrow:
        final, out_ptr = out_ptr, scratch
    bc_buf = b.gep(scratch, [c64(c_bytes)], source_etype=T.I8)
    regions, at = [], c_bytes + bc_bytes
    for size in sizes:
        regions.append(b.gep(scratch, [c64(at)], source_etype=T.I8))
        at += _align(size)
    if not plan.b_strides:
        b.call(pack_kernel_fn(pe, instr, plan),
               [pe.table([rhs_ptr, bc_buf]), c64(0), c64(plan.groups)])
    return out_ptr, final, bc_buf, regions


def _group_operands(b, instr, plan, g, out_ptr, rhs_ptr, bc_buf):
    """(C, B) of group g (an i64): its output features, and its kernel matrix."""
    dn = instr.attrs["dim_labels"]
    es, ec = _esize(plan.t), _esize(gk.compute_type(plan.t))
    c_g = b.gep(out_ptr, [b.mul(g, c64(plan.n * _strides(instr.shape)[dn.output_feature]
                                       * ec))], source_etype=T.I8)
    if plan.b_strides:
        rst = _strides(instr.operands[1].shape)
        b_g = b.gep(rhs_ptr, [b.mul(g, c64(plan.n * rst[dn.kernel_output_feature] * es))],
                    source_etype=T.I8)
    else:
        b_g = b.gep(bc_buf, [b.mul(g, c64(plan.k * plan.n * es))], source_etype=T.I8)
    return c_g, b_g


def _each_group(b, plan, body) -> None:
    """body(g) for each group g (an i64), in a loop when there are several."""
    if plan.groups == 1:
        body(c64(0))
    else:
        with for_range(b, 0, plan.groups, name="conv.group") as g:
            body(g)


def _round(b, out, sums, final) -> None:
    """The bf16 / f16 result: the f32 sums (laid out as the result) rounded once."""
    with for_range(b, 0, out.size, name="conv.round") as i:
        x = b.load(b.gep(sums, [i], source_etype=T.F32), typ=T.F32)
        b.store(T.from_float(b, x, out.element_type),
                b.gep(final, [i], source_etype=T.storage_type(out.element_type)))


def blocked_depth(plan) -> int:
    """Contracting positions of the patch matrix per block when the convolution runs a
    depth block at a time (emit_conv_depth_blocked), else 0: A materialized column-major
    ([K, M], its lines each part of one column: a filter gradient, whose innermost lhs
    dim is a row dim), no outer row loops, and more columns than one block holds."""
    if plan.a_view or plan.a_rows_first or plan.outer or pdims(plan)[-1][0] != "r":
        return 0
    cols = BLOCK_BYTES // (plan.m * _esize(plan.t))
    cols = max(cols // BLOCK_ROW_UNIT * BLOCK_ROW_UNIT, MIN_DEPTH_BLOCK)
    return cols if plan.k > cols else 0


def emit_conv_depth_blocked(pe, instr, plan, depth, out_ptr, lhs_ptr, rhs_ptr,
                            epilogue) -> None:
    """The convolution as a sum of gemms over blocks of `depth` contracting positions:
    each block of the column-major patch matrix is built (on the pool) in the scratch
    space, where it stays in cache, and multiplied into C (C += A_blk . B_blk after the
    first block); the epilogue, if any, runs on the tiles of the last block's gemm."""
    b, me = pe.b, pe.me
    t, es = plan.t, _esize(plan.t)
    out = instr.shape
    a_bytes = _align(depth * plan.m * es)
    flops = 2 * plan.m * plan.n * depth
    chunks = me.num_threads if me.use_threads and flops >= GEMM_PARALLEL_FLOPS else 1
    swap = swapped_for(plan)
    ws_bytes = workspace_bytes(t, plan.m, plan.n, depth, chunks, swap)
    out_ptr, final, bc_buf, (a_buf, ws) = _scratch(pe, instr, plan, out_ptr, rhs_ptr,
                                                   [a_bytes, ws_bytes])
    rsb = plan.b_strides[0] if plan.b_strides else plan.n
    im2col = im2col_fn(pe, instr, plan)
    lines_per_k = im2col_lines(plan) // plan.k
    n_blocks = -(-plan.k // depth)
    slots = pe.alloca(T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, t, plan.m, plan.n, depth, _a_strides(plan),
                   plan.b_strides or (plan.n, 1), plan.c_strides, ws, chunks, epilogue,
                   swap=swap)
    ictx = pe.table([lhs_ptr, a_buf, ir.Constant(T.PTR, None)])
    pool = threadpool.declare(pe.llmod)
    shifted = None   # the block's lines on the pool: im2col on [lo + start, lo + end)
    if me.use_threads and depth * plan.m >= IM2COL_PARALLEL_ELEMENTS \
            and depth * lines_per_k >= 2:
        shifted = _shifted_lines_fn(pe, instr, im2col)
        sctx = pe.table([ictx, ir.Constant(T.PTR, None)])

    def group_body(g):
        c_g, b_g = _group_operands(b, instr, plan, g, out_ptr, rhs_ptr, bc_buf)
        b.store(b.inttoptr(g, T.PTR), b.gep(ictx, [c64(2)], source_etype=T.PTR))
        with for_range(b, 0, n_blocks, name="conv.depth") as blk:
            k0 = b.mul(blk, c64(depth))
            kb = umin(b, c64(depth), b.sub(c64(plan.k), k0))
            # A^T's row k is at a_buf + (k - k0) * M: the block's columns of A
            origin = b.gep(a_buf, [b.sub(c64(0), b.mul(k0, c64(plan.m * es)))],
                           source_etype=T.I8)
            b.store(origin, b.gep(ictx, [c64(1)], source_etype=T.PTR))
            lo, hi = b.mul(k0, c64(lines_per_k)), b.mul(b.add(k0, kb), c64(lines_per_k))
            if shifted is not None:
                b.store(b.inttoptr(lo, T.PTR), b.gep(sctx, [c64(1)], source_etype=T.PTR))
                grain = max(depth * lines_per_k // (4 * me.num_threads), 1)
                b.call(pool, [shifted, sctx, b.sub(hi, lo), c64(grain)])
            else:
                b.call(im2col, [ictx, lo, hi])
            first = b.icmp_unsigned("==", blk, c64(0))
            last = b.icmp_unsigned("==", blk, c64(n_blocks - 1))
            put(b, slots, "K", kb)
            put(b, slots, "beta", b.select(first, c64(0), b.bitcast(
                ir.Constant(T.F64, 1.0), T.I64)))
            if epilogue:
                put(b, slots, "epi", b.select(last, b.ptrtoint(epilogue[0], T.I64), c64(0)))
            gemm.call(b, a_buf, b.gep(b_g, [b.mul(k0, c64(rsb * es))], source_etype=T.I8),
                      c_g)

    _each_group(b, plan, group_body)
    if final is not None:
        _round(b, out, out_ptr, final)


def _shifted_lines_fn(pe, instr, im2col) -> ir.Function:
    """fn(ctx = [im2col's ctx, lo], start, end): im2col(ctx[0], lo + start, lo + end)."""
    fn, b = new_fn(pe, f"conv.im2col_block.{instr.name}")
    ctx, start, end = fn.args
    ictx, lo = ptrs(b, ctx, 2)
    lo = b.ptrtoint(lo, T.I64)
    b.call(im2col, [ictx, b.add(lo, start), b.add(lo, end)])
    b.ret_void()
    return fn


def _blocks_fn(pe, instr, plan, rows_blk, chunks, a_bytes, slice_bytes, swap, epilogue):
    """fn(ctx = [lhs, C of the group, B of the group, slices, g, epilogue ctx], u0, u1):
    the row blocks of units (thread shares) [u0, u1), unit u in slice u."""
    fn, b = new_fn(pe, f"conv.blocks.{instr.name}")
    ctx, u0, u1 = fn.args
    lhs_ptr, c_g, b_g, slices, gp, ectx = ptrs(b, ctx, 6)
    t, es = plan.t, _esize(plan.t)
    ec = _esize(gk.compute_type(t))
    im2col = im2col_fn(pe, instr, plan)
    lines_per_row = im2col_lines(plan) // plan.m
    n_blocks = -(-plan.m // rows_blk)
    per = -(-n_blocks // chunks)
    ictx = entry_alloca(b, T.PTR, c64(3))
    b.store(lhs_ptr, b.gep(ictx, [c64(0)], source_etype=T.PTR))
    b.store(gp, b.gep(ictx, [c64(2)], source_etype=T.PTR))
    epi = None
    if epilogue:
        wctx = entry_alloca(b, T.PTR, c64(2))
        b.store(ectx, b.gep(wctx, [c64(0)], source_etype=T.PTR))
        epi = (_offset_epilogue(pe, instr, plan, epilogue[0], swap), wctx)
    slots = entry_alloca(b, T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, t, rows_blk, plan.n, plan.k, (plan.k, 1),
                   plan.b_strides or (plan.n, 1), plan.c_strides, c64(0), 1, epi, swap=swap)
    with for_range(b, u0, u1, name="unit") as u:
        a_buf = b.gep(slices, [b.mul(u, c64(slice_bytes))], source_etype=T.I8)
        put(b, slots, "ws", b.gep(a_buf, [c64(a_bytes)], source_etype=T.I8))
        blk0 = umin(b, b.mul(u, c64(per)), c64(n_blocks))
        blk1 = umin(b, b.add(blk0, c64(per)), c64(n_blocks))
        with for_range(b, blk0, blk1, name="block") as blk:
            r0 = b.mul(blk, c64(rows_blk))
            mb = umin(b, c64(rows_blk), b.sub(c64(plan.m), r0))
            # A's row r is at a_buf + (r - r0) * K: the block's rows of the patch matrix
            origin = b.gep(a_buf, [b.sub(c64(0), b.mul(r0, c64(plan.k * es)))],
                           source_etype=T.I8)
            b.store(origin, b.gep(ictx, [c64(1)], source_etype=T.PTR))
            b.call(im2col, [ictx, b.mul(r0, c64(lines_per_row)),
                            b.mul(b.add(r0, mb), c64(lines_per_row))])
            put(b, slots, "N" if swap else "M", mb)
            if epi is not None:
                b.store(b.inttoptr(r0, T.PTR), b.gep(wctx, [c64(1)], source_etype=T.PTR))
            c_blk = b.gep(c_g, [b.mul(r0, c64(plan.c_strides[0] * ec))], source_etype=T.I8)
            gemm.call(b, a_buf, b_g, c_blk)
    b.ret_void()
    return fn


def _offset_epilogue(pe, instr, plan, inner, swap) -> ir.Function:
    """epi(wctx = [inner's ctx, row offset], row, col, rows, cols): `inner` on the tile of
    the whole result: a block gemm's tile (transposed when it computes C^T: `swap`) moved
    by the block's first row, in the orientation of the whole convolution's gemm, which
    `inner` was built for (swapped_for(plan): the block's may differ)."""
    fn = ir.Function(pe.llmod, gk.EPILOGUE_TYPE, pe.me.unique(f"conv.epi_block.{instr.name}"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    wctx, row, col, rows, cols = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ictx, off = ptrs(b, wctx, 2)
    off = b.ptrtoint(off, T.I64)
    if swap:   # the block's gemm computed C^T: its tile as (output rows, features)
        row, col, rows, cols = col, row, cols, rows
    row = b.add(row, off)
    if swapped_for(plan):   # inner takes the whole convolution's gemm's orientation
        row, col, rows, cols = col, row, cols, rows
    b.call(inner, [ictx, row, col, rows, cols])
    b.ret_void()
    return fn


def _strides(shape) -> list[int]:
    return strides_of(shape)


def _outer_lhs(plan):
    """Per outer row dim: its stride in the materialized A (rows of m) or in the lhs view."""
    if plan.a_view:
        return plan.a_view[2]
    return [0] * len(plan.outer)   # unused: a materialized A is offset by o directly


def _a_strides(plan) -> tuple:
    """(row, column) strides of A: the lhs view's, or the patch matrix's layout."""
    if plan.a_view:
        return plan.a_view[0], plan.a_view[1]
    return (plan.k, 1) if plan.a_rows_first else (1, plan.m_total)
