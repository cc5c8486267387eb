"""Convolutions with few output features and the input features innermost (NHWC / NWC /
NDHWC forward and input gradients) without a patch matrix: the gemm's direct phase done
by a kernel that reads the lhs through the window (the plan: direct_plan).

The gemm path (emitters/conv.py) builds a block of the patch matrix A (im2col) and hands it
to the gemm, which for C at most GV vectors wide runs its direct phase: RD rows of C at a
time, each of A's elements broadcast against vectors of the kernel matrix B. A row of A is
an output pixel's window, made of runs of the lhs (plan.line_dims: NHWC's kernel columns
x input features), so for a pixel whose window lies inside the lhs, its element k is
lhs[origin(pixel) + offset(k)], offset(k) the same for every such pixel. Here RD pixels
at a time: when all of their windows are inside, the RD rows are read from the lhs where
they lie (the runs' offsets from a table); otherwise their rows are built by the im2col
kernel in the thread's small buffer and read from there, so padding (and any value next
to it, inf and NaN included) is handled as the gemm path does, and the sums run in the
same order (k = 0..K-1, one multiply-add each, per lane) as the gemm's direct phase.

Measured against the gemm path (one thread, CPU time, each convolution of a gradient
compiled alone, two alternating runs each, load 8): NHWC 8x32x32x32 7x7 -> 64 forward
14.7-14.9 ms against 15.3-15.8, its input gradient 15.2 against 16.6-17.0; kernel
dilation 2 forward 2.8-3.0 against 2.9-3.1, input gradient 2.8-3.0 against 3.1-3.2; the
3-d 4x8x16x16x16 3x3x3 -> 32 forward 2.3 against 2.4-2.5, input gradient 2.4 against
2.5-2.6; the stem 8x64x64x3 7x7 / 2 -> 64 forward 1.56-1.59 against 1.63-1.66.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_im2col import (im2col_fn, im2col_inner, im2col_lines,
                                                      new_fn, pack_kernel_fn, pdims, ptrs)
from xlapy.backends.cpu.emitters.conv_relayout import emit_copy, minor_first
from xlapy.backends.cpu.passes.conv_plan import GEMM_TYPES, conv_plan
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range, strides
from xlapy.hlo.shapes import Layout, Shape

PARALLEL_FLOPS = 1 << 22   # smaller convolutions run on the calling thread (as conv.py)
UNITS_PER_THREAD = 4
# copies of larger NCHW / NCW operands (scratch space) keep the batched path (relayout_plan)
RELAYOUT_MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class DirectPlan:
    run: int            # elements of a run (an im2col line): contiguous in the lhs
    offsets: tuple      # lhs offset of each run from an inside pixel's window origin
    vl: int             # vector lanes
    rd: int             # pixels (rows of C) at a time


def direct_plan(instr, plan) -> DirectPlan | None:
    """A DirectPlan when the gemm path's plan has one group, no outer row loops, a
    row-major patch matrix whose lines are runs of the lhs along its input features
    (innermost, stride 1), no lhs dilation, C's features contiguous and at most GV
    vectors (a whole number of them), and B's rows contiguous; else None."""
    if plan is None or plan.t not in GEMM_TYPES or plan.out_t != plan.t or plan.groups != 1 \
            or plan.outer or plan.a_view or not plan.a_rows_first \
            or plan.c_strides[1] != 1 or (plan.b_strides and plan.b_strides[1] != 1):
        return None
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    lst = strides(lhs)
    if any(d != 1 for d in w.lhs_dilate) or lst[dn.input_feature] != 1:
        return None
    vl = gk.lanes(plan.t, vector_bits())
    if plan.n % vl or plan.n > gk.GV * vl:
        return None
    pd = pdims(plan)
    if pd[-1][:2] != ("c", "i"):
        return None
    line = pd[-plan.line_dims:]
    if any(d[0] != "c" for d in line):
        return None
    run = 1
    for d in line:
        run *= d[3]
    # the contracting dims outside the runs, major -> minor: each run's offset
    cols = [d for d in pd[:-plan.line_dims] if d[0] == "c"]
    offsets = [0]
    for _, kind, j, size in cols:
        if kind == "i":
            steps = [i * lst[dn.input_feature] for i in range(size)]
        else:
            step = w.rhs_dilate[j] * lst[dn.input_spatial[j]]
            steps = [((size - 1 - i) if w.rhs_reversal[j] else i) * step for i in range(size)]
        offsets = [o + s for o in offsets for s in steps]
    if len(offsets) * run != plan.k \
            or im2col_lines(plan) // plan.m * im2col_inner(plan) != plan.k:
        return None   # (the edge rows are built a whole row's work items at a time)
    return DirectPlan(run=run, offsets=tuple(offsets), vl=vl, rd=gk.direct_rows(vector_bits()))


def _align(n: int) -> int:
    return -(-n // 64) * 64


def relayout_plan(instr):
    """(the features-innermost stand-in of an NCHW / NCW convolution: .operands[k].shape,
    .shape, .attrs, .name; its conv_plan; its DirectPlan) when that one takes the direct
    kernel, else None (emit_relayout_direct)."""
    dn = instr.attrs["dim_labels"]
    lhs, out = instr.operands[0].shape, instr.shape
    if strides(lhs)[dn.input_feature] == 1 or strides(out)[dn.output_feature] == 1 \
            or lhs.element_type.name not in ("f32", "f64") \
            or (lhs.size + out.size + instr.operands[1].shape.size) * (
                8 if lhs.element_type.name == "f64" else 4) > RELAYOUT_MAX_BYTES:
        return None
    rhs = instr.operands[1].shape
    # the kernel as HWIO (its rows of B contiguous, in the lhs runs' order)
    rhs1 = Shape(rhs.element_type, rhs.dims,
                 Layout((dn.kernel_output_feature, dn.kernel_input_feature)
                        + tuple(reversed(dn.kernel_spatial))))
    one = SimpleNamespace(operands=[SimpleNamespace(shape=minor_first(lhs, dn.input_feature)),
                                    SimpleNamespace(shape=rhs1)],
                          shape=minor_first(out, dn.output_feature), attrs=instr.attrs,
                          name=instr.name)
    plan = conv_plan(one)
    dp = direct_plan(one, plan)
    return None if dp is None else (one, plan, dp)


def emit_relayout_direct(pe, instr, rp, out_ptr, lhs_ptr, rhs_ptr) -> None:
    """An NCHW / NCW convolution as its NHWC / NWC form (relayout_plan): the lhs copied
    with its features innermost, the direct kernel into a features-innermost result,
    copied back (as conv_winograd.py takes such operands). One thread, CPU time, median
    of 15 calls, best of 4 alternating rounds, load 8-15, against the batched gemm path
    (conv_batched.py): the NCW 16x128x124 window 5 -> 64 input gradient 1.79 ms against
    2.07; NCHW 8x32x32x32 3x3 / 2 -> 64 forward 0.79 against 1.02; 8x64x16x16 2x2 -> 32
    (a strided layer's input-gradient phase) 0.30 against 0.42; the NCHW stem 8x3x64x64
    7x7 / 2 -> 64 1.89 against 2.05; NCW 16x32x128 window 7 -> 32 0.28 against 0.30; no
    gain: NCW window 3 / 2 64 -> 64 0.254 against 0.245, NCHW 4x128x16x16 3x3 -> 16 0.243
    against 0.240."""
    one, plan, dp = rp
    es = 8 if plan.t == "f64" else 4
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    rhs1 = one.operands[1].shape
    sizes = [_align(x.size * es) for x in (lhs, out, rhs)]
    if rhs1.minor_to_major == rhs.minor_to_major:
        sizes[2] = 0
    tmp = pe.me.scratch(pe.b, pe.arena, sum(sizes))
    out_tmp = pe.b.gep(tmp, [c64(sizes[0])], source_etype=T.I8)
    rhs_tmp = pe.b.gep(tmp, [c64(sizes[0] + sizes[1])], source_etype=T.I8) if sizes[2] \
        else rhs_ptr
    emit_copy(pe, lhs, one.operands[0].shape, lhs_ptr, tmp, f"{instr.name}.in")
    if sizes[2]:
        emit_copy(pe, rhs, rhs1, rhs_ptr, rhs_tmp, f"{instr.name}.kernel")
    emit_conv_direct(pe, one, plan, dp, out_tmp, tmp, rhs_tmp, None, reserved=sum(sizes))
    emit_copy(pe, one.shape, out, out_tmp, out_ptr, f"{instr.name}.out")


def emit_conv_direct(pe, instr, plan, dp, out_ptr, lhs_ptr, rhs_ptr, epilogue,
                     reserved: int = 0) -> None:
    """reserved: scratch bytes in use by the caller (the buffers come after them)."""
    b, me = pe.b, pe.me
    es = 8 if plan.t == "f64" else 4
    groups = -(-plan.m // dp.rd)
    # UNITS_PER_THREAD units a thread, claimed from the pool one at a time (a thread the OS
    # deschedules holds a small share, as gemm_params.UNITS_PER_CHUNK), a buffer each
    units = min(UNITS_PER_THREAD * me.num_threads, groups) \
        if me.use_threads and me.num_threads > 1 and plan.flops() >= PARALLEL_FLOPS else 1
    buf_bytes = _align(dp.rd * plan.k * es)
    bc_bytes = 0 if plan.b_strides else _align(plan.k * plan.n * es)
    scratch = me.scratch(b, pe.arena, reserved + bc_bytes + units * buf_bytes)
    scratch = b.gep(scratch, [c64(reserved)], source_etype=T.I8)
    bufs = b.gep(scratch, [c64(bc_bytes)], source_etype=T.I8)
    if plan.b_strides:
        b_mat, rsb = rhs_ptr, plan.b_strides[0]
    else:   # the kernel as a [K, N] matrix (its contracting dims are not one stride)
        b_mat, rsb = scratch, plan.n
        b.call(pack_kernel_fn(pe, instr, plan), [pe.table([rhs_ptr, scratch]), c64(0),
                                                  c64(1)])
    fn = _units_fn(pe, instr, plan, dp, units, groups, buf_bytes, rsb, epilogue)
    ctx = pe.table([lhs_ptr, b_mat, out_ptr, bufs,
                    epilogue[1] if epilogue else ir.Constant(T.PTR, None)])
    if units > 1:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
    else:
        b.call(fn, [ctx, c64(0), c64(1)])


def _offset_table(pe, name, values):
    """A constant global array of i64 values."""
    arr_t = ir.ArrayType(T.I64, len(values))
    g = ir.GlobalVariable(pe.llmod, arr_t, pe.me.unique(name))
    g.linkage = "internal"
    g.global_constant = True
    g.initializer = ir.Constant(arr_t, [int(v) for v in values])
    return g


def _pixel(b, instr, plan, m):
    """(lhs offset of the window origin, whether the whole window is inside the lhs) of
    output row m (an i64): its coordinates decoded over the plan's row dims."""
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    lst = strides(lhs)
    origin, inside, rem = c64(0), ir.Constant(T.I1, 1), m
    for kind, j, size in reversed(plan.rows):
        idx = b.urem(rem, c64(size))
        rem = b.udiv(rem, c64(size))
        if kind == "b":
            origin = b.add(origin, b.mul(idx, c64(lst[dn.input_batch])))
            continue
        first = b.sub(b.mul(idx, c64(w.stride[j])), c64(w.pad_low[j]))
        last = b.add(first, c64((w.size[j] - 1) * w.rhs_dilate[j]))
        n_in = lhs.dims[dn.input_spatial[j]]
        inside = b.and_(inside, b.and_(b.icmp_signed(">=", first, c64(0)),
                                       b.icmp_signed("<", last, c64(n_in))))
        origin = b.add(origin, b.mul(first, c64(lst[dn.input_spatial[j]])))
    return origin, inside


def _units_fn(pe, instr, plan, dp, units, groups, buf_bytes, rsb, epilogue):
    """fn(ctx = [lhs, B, out, buffers, epilogue ctx], u0, u1): the pixel groups of units
    (thread shares) [u0, u1), unit u with buffer u."""
    fn, b = new_fn(pe, f"conv.direct.{instr.name}")
    ctx, u0, u1 = fn.args
    lhs_ptr, b_mat, out_ptr, bufs, ectx = ptrs(b, ctx, 5)
    t = plan.t
    fty = T.F64 if t == "f64" else T.F32
    es = 8 if t == "f64" else 4
    vl, rd, nv = dp.vl, dp.rd, plan.n // dp.vl
    vty = ir.VectorType(fty, vl)
    fma = T.intrinsic(pe.llmod, "llvm.fmuladd", vty, 3)
    zero_v = ir.Constant(vty, [0.0] * vl)
    n_runs = len(dp.offsets)
    lhs_offs = _offset_table(pe, f"conv.direct_offsets.{instr.name}", dp.offsets)
    buf_offs = _offset_table(pe, f"conv.direct_rows.{instr.name}",
                             [q * dp.run for q in range(n_runs)])
    im2col = im2col_fn(pe, instr, plan)
    lines_per_row = im2col_lines(plan) // plan.m
    ictx = entry_alloca(b, T.PTR, c64(3))
    b.store(lhs_ptr, b.gep(ictx, [c64(0)], source_etype=T.PTR))
    b.store(ir.Constant(T.PTR, None), b.gep(ictx, [c64(2)], source_etype=T.PTR))
    accs = [[entry_alloca(b, vty) for _ in range(nv)] for _ in range(rd)]
    rows_at = [entry_alloca(b, T.PTR) for _ in range(rd)]
    table_at = entry_alloca(b, T.PTR)
    rs_c = plan.c_strides[0]
    with for_range(b, u0, u1, name="unit") as u:
        buf = b.gep(bufs, [b.mul(u, c64(buf_bytes))], source_etype=T.I8)
        g0 = b.udiv(b.mul(u, c64(groups)), c64(units))
        g1 = b.udiv(b.mul(b.add(u, c64(1)), c64(groups)), c64(units))
        with for_range(b, g0, g1, name="group") as grp:
            m0 = b.mul(grp, c64(rd))
            rows = b.sub(c64(plan.m), m0)
            rows = b.select(b.icmp_unsigned("<", rows, c64(rd)), rows, c64(rd))
            inside, origins = ir.Constant(T.I1, 1), []
            for p in range(rd):
                valid = b.icmp_unsigned("<", c64(p), rows)
                m = b.select(valid, b.add(m0, c64(p)), m0)
                origin, ok = _pixel(b, instr, plan, m)
                origins.append(origin)
                inside = b.and_(inside, ok)
            with b.if_else(inside) as (whole, edge):
                with whole:
                    for p in range(rd):
                        b.store(b.gep(lhs_ptr, [b.mul(origins[p], c64(es))],
                                      source_etype=T.I8), rows_at[p])
                    b.store(lhs_offs, table_at)
                with edge:
                    # the group's rows of the patch matrix in the buffer (row r at
                    # buf + (r - m0) * K), as the gemm path builds them
                    origin = b.gep(buf, [b.sub(c64(0), b.mul(m0, c64(plan.k * es)))],
                                   source_etype=T.I8)
                    b.store(origin, b.gep(ictx, [c64(1)], source_etype=T.PTR))
                    b.call(im2col, [ictx, b.mul(m0, c64(lines_per_row)),
                                    b.mul(b.add(m0, rows), c64(lines_per_row))])
                    for p in range(rd):
                        r = b.select(b.icmp_unsigned("<", c64(p), rows), c64(p), c64(0))
                        b.store(b.gep(buf, [b.mul(r, c64(plan.k * es))], source_etype=T.I8),
                                rows_at[p])
                    b.store(buf_offs, table_at)
            row_ptrs = [b.load(s, typ=T.PTR) for s in rows_at]
            table = b.load(table_at, typ=T.PTR)
            for p in range(rd):
                for v in range(nv):
                    b.store(zero_v, accs[p][v])
            with for_range(b, 0, n_runs, name="run") as q:
                off = b.load(b.gep(table, [q], source_etype=T.I64), typ=T.I64)
                k0 = b.mul(q, c64(dp.run))
                with for_range(b, 0, dp.run, name="e") as e:
                    at = b.add(off, e)
                    xs = [b.load(b.gep(rp, [at], source_etype=fty), typ=fty)
                          for rp in row_ptrs]
                    xs = [_splat(b, x, vty) for x in xs]
                    brow = b.gep(b_mat, [b.mul(b.add(k0, e), c64(rsb))], source_etype=fty)
                    for v in range(nv):
                        bv = b.load(b.gep(brow, [c64(v * vl)], source_etype=fty), typ=vty,
                                    align=1)
                        for p in range(rd):
                            b.store(b.call(fma, [xs[p], bv, b.load(accs[p][v], typ=vty)]),
                                    accs[p][v])
            for p in range(rd):
                with b.if_then(b.icmp_unsigned("<", c64(p), rows)):
                    row = b.add(m0, c64(p))
                    dst = b.gep(out_ptr, [b.mul(row, c64(rs_c))], source_etype=fty)
                    for v in range(nv):
                        b.store(b.load(accs[p][v], typ=vty),
                                b.gep(dst, [c64(v * vl)], source_etype=fty), align=1)
            if epilogue:
                b.call(epilogue[0], [ectx, m0, c64(0), rows, c64(plan.n)])
    b.ret_void()
    return fn


def _splat(b, x, vty):
    v = b.insert_element(ir.Constant(vty, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(v, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), vty.count), [0] * vty.count))
