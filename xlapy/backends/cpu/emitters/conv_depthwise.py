"""Depthwise convolutions (feature groups of one input feature) as a direct vectorized
kernel: for each output pixel, the features in vectors of the machine's width, each
window position one fused multiply-add of the lhs pixel's features and the kernel's.

    out[b, o.., f] = sum_{k..} lhs[b, pos(o, k).., f / mult] * rhs[k.., f]

Planned (depthwise_plan) when the lhs's, the output's and the kernel's feature dims are
their innermost (stride 1: NHWC / HWIO, and the input gradient's reversed "01oi" kernel),
any other dim orders, strides, padding and dilations. A channel multiplier above one reads
the lhs feature f / mult: broadcast to a vector when the multiplier is a multiple of the
vector width (a one-feature image's first layer: every output feature reads it), else
lane by lane. The pixels are split across the thread
pool. Where every output feature reads its group's one lhs feature (a one-feature image's
first layer), PIXEL_BLOCK pixels of a row whose windows are inside the lhs are computed
together (_blocked_kernel: each kernel vector loaded once for them). Everything else stays
with the gemm (conv.py) or the elemental loop.
"""

from __future__ import annotations

import contextlib

from llvmlite import ir

from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.passes.conv_plan import depthwise_plan, filter_grad_plan, strides_of
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range

PARALLEL_WORK = 1 << 15     # multiply-adds below which the kernel stays on one thread
UNROLL_WINDOW = 64          # windows up to this many positions are unrolled
PARTIAL_SUMS = 4            # an unrolled window's taps summed in this many chains
VECTORS_AT_ONCE = 4         # feature vectors a pixel's unrolled taps compute together
PIXEL_BLOCK = 4             # pixels of a row the broadcast kernel computes together


def emit_depthwise(pe, instr, dest, operands) -> bool:
    plan = depthwise_plan(instr)
    if plan is None:
        return False
    fn = _kernel(pe, instr, plan)
    out = instr.shape
    dn = instr.attrs["dim_labels"]
    pixels = out.size // out.dims[dn.output_feature]
    b, me = pe.b, pe.me
    ctx = pe.table([operands[0], operands[1], dest[0]])
    work = out.size * instr.operands[1].shape.size // max(out.dims[dn.output_feature], 1)
    run = _pixel_runs(instr, plan)
    if run is not None:   # runs of PIXEL_BLOCK pixels along the innermost spatial dim
        fn = _blocked_kernel(pe, instr, plan, fn, run)
        pixels = pixels // run * -(-run // PIXEL_BLOCK)
    if me.use_threads and work >= PARALLEL_WORK and pixels >= 2:
        grain = max(pixels // (4 * me.num_threads), 1)
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(pixels), c64(grain)])
    else:
        b.call(fn, [ctx, c64(0), c64(pixels)])
    return True


def _kernel(pe, instr, plan) -> ir.Function:
    """fn(ctx = [lhs, rhs, out], start, end): the output pixels [start, end), row-major
    over the output's batch and spatial dims in its memory order."""
    groups, mult = plan
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(pe, f"conv.depthwise.{instr.name}")
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    rhs, out = instr.operands[1].shape, instr.shape
    rs = strides_of(rhs)
    fty = T.value_type(out.element_type)
    nsp = len(dn.output_spatial)
    n_feat = out.dims[dn.output_feature]
    vl = max(vector_bits() // (32 if fty == T.F32 else 64), 1)
    # a vector of features reads contiguous lhs features (multiplier 1) or one lhs feature
    # broadcast (a multiplier that is a multiple of the vector: every lane's f / mult agrees)
    if mult != 1 and mult % vl:
        vl = 1
    vty = ir.VectorType(fty, vl) if vl > 1 else fty
    zero = ir.Constant(vty, [0.0] * vl) if vl > 1 else ir.Constant(fty, 0.0)
    fma = T.intrinsic(pe.llmod, "llvm.fmuladd", vty, 3)
    # the output's pixel dims in its memory order
    pix = [d for d in reversed(out.minor_to_major) if d != dn.output_feature]
    windows = []
    n_win = 1
    for s in range(nsp):
        n_win *= w.size[s]

    def window_positions():
        """[(kernel offset, [kernel position per spatial dim])] of every window position."""
        out_ = []
        for lin in range(n_win):
            ks, rem = [], lin
            for s in reversed(range(nsp)):
                ks.insert(0, rem % w.size[s])
                rem //= w.size[s]
            off = sum(k * rs[dn.kernel_spatial[s]] for s, k in enumerate(ks))
            out_.append((off, ks))
        return out_

    windows = window_positions() if n_win <= UNROLL_WINDOW else None

    with for_range(b, start, end, name="px") as p:
        out_base, lhs_base, o_sp = pixel_coords(b, instr, pix, p)

        def tap(ks, rk_off, f, accs, checked):
            """accs + lhs . rhs at window position ks (constants, or i64 values) for the
            len(accs) vectors (or a lane) of features from f; `checked`: skipped where the
            position is in the padding or a dilation hole (else the pixel's window is
            inside the lhs)."""
            off, ok = lhs_offset(b, instr, o_sp, ks, lhs_base, checked)

            def products():
                out_ = []
                x = None
                for i, acc in enumerate(accs):
                    fi = b.add(f, c64(i * vl)) if i else f
                    if vl > 1 and mult != 1:
                        if x is None:   # one lhs feature for all of them: loaded once
                            xp = b.gep(lhs_p, [b.add(off, b.udiv(f, c64(mult)))],
                                       source_etype=fty)
                            x = T.splat(b, b.load(xp, typ=fty), vl)
                        xi = x
                    else:
                        feat = fi if mult == 1 else b.udiv(fi, c64(mult))
                        xi = b.load(b.gep(lhs_p, [b.add(off, feat)], source_etype=fty),
                                    typ=vty, align=1)
                    y = b.load(b.gep(rhs_p, [b.add(rk_off, fi)], source_etype=fty), typ=vty,
                               align=1)
                    out_.append(b.call(fma, [xi, y, acc]))
                return out_
            if not checked:
                return products()
            cur = b.block
            with b.if_then(ok):
                new = products()
                inner = b.block
            phis = []
            for acc, n in zip(accs, new):
                phi = b.phi(vty)
                phi.add_incoming(acc, cur)
                phi.add_incoming(n, inner)
                phis.append(phi)
            return phis

        def features(f, checked, width):
            """The `width` vectors (or lanes) of output features from f."""
            if windows is not None:
                # several chains of multiply-adds per vector (one would wait on each one's
                # latency): PARTIAL_SUMS, fewer when several vectors give chains of their own
                n_chains = max(min(PARTIAL_SUMS, 8 // width), 1)
                chains = [[zero] * width for _ in range(min(n_chains, len(windows)))]
                for j, (off, ks) in enumerate(windows):
                    c = j % len(chains)
                    chains[c] = tap(ks, c64(off), f, chains[c], checked)
                while len(chains) > 1:
                    chains = [[b.fadd(x, y) for x, y in zip(chains[i], chains[i + 1])]
                              if i + 1 < len(chains) else chains[i]
                              for i in range(0, len(chains), 2)]
                accs = chains[0]
            else:
                assert width == 1
                slot = entry_alloca(b, vty)
                b.store(zero, slot)
                with for_range(b, 0, n_win, name="win") as lin:
                    ks, r, koff = [], lin, c64(0)
                    for s in reversed(range(nsp)):
                        k = b.urem(r, c64(w.size[s]))
                        r = b.udiv(r, c64(w.size[s]))
                        ks.insert(0, k)
                        koff = b.add(koff, b.mul(k, c64(rs[dn.kernel_spatial[s]])))
                    b.store(tap(ks, koff, f, [b.load(slot, typ=vty)], checked)[0], slot)
                accs = [b.load(slot, typ=vty)]
            for i, acc in enumerate(accs):
                at = b.add(out_base, b.add(f, c64(i * vl)) if i else f)
                b.store(acc, b.gep(out_p, [at], source_etype=fty), align=1)

        def all_features(checked):
            nonlocal vl, vty, zero, fma
            whole = n_feat // vl * vl
            if whole:
                width = _vectors_at_once(whole // vl, mult // vl if mult != 1 else 0,
                                         windows is not None and vl > 1)
                with for_range(b, 0, whole, vl * width, name="f") as f:
                    features(f, checked, width)
            if whole < n_feat:
                # the last features one lane at a time
                saved = (vl, vty, zero, fma)
                vl, vty, zero = 1, fty, ir.Constant(fty, 0.0)
                fma = T.intrinsic(pe.llmod, "llvm.fmuladd", fty, 3)
                with for_range(b, whole, n_feat, name="fr") as f:
                    features(f, checked, 1)
                vl, vty, zero, fma = saved

        by_window(b, instr, o_sp, all_features)
    b.ret_void()
    return fn




def _feature_vectors(instr, plan):
    """(vector lanes, vectors) of the output features a broadcast pixel computes (every
    output feature reads its group's one lhs feature: a multiplier of whole vectors)."""
    fty = T.value_type(instr.shape.element_type)
    vl = max(vector_bits() // (32 if fty == T.F32 else 64), 1)
    _, mult = plan
    return vl, mult // vl


def _pixel_runs(instr, plan):
    """The pixels of a row (the output's innermost pixel dim, a spatial one) when the
    blocked kernel (_blocked_kernel) takes the convolution, else None: one lhs feature per
    group (the multiplier a multiple of the vector width: the CNN's first layer, one
    input feature and 32 outputs), the window unrolled, no lhs dilation, rows of at least
    PIXEL_BLOCK pixels."""
    groups, mult = plan
    vl, nv = _feature_vectors(instr, plan)
    w, dn, out = instr.attrs["window"], instr.attrs["dim_labels"], instr.shape
    n_win = 1
    for size in w.size:
        n_win *= size
    regs = 24 if vector_bits() >= 512 else 12   # accumulators that stay in registers
    if vl == 1 or mult % vl or PIXEL_BLOCK * nv > regs or n_win > UNROLL_WINDOW \
            or any(d != 1 for d in w.lhs_dilate):
        return None
    pix = [d for d in reversed(out.minor_to_major) if d != dn.output_feature]
    if pix[-1] not in dn.output_spatial or out.dims[pix[-1]] < PIXEL_BLOCK:
        return None
    return out.dims[pix[-1]]


def _blocked_kernel(pe, instr, plan, per_pixel, run: int) -> ir.Function:
    """fn(ctx = [lhs, rhs, out], start, end): units [start, end) of PIXEL_BLOCK pixels of
    a row each (the row's last unit fewer). A unit whose pixels' windows are all inside
    the lhs computes them together, each kernel vector loaded once for the block and
    each pixel's lhs feature broadcast once per tap (the per-pixel kernel loaded the kernel
    vectors again for every pixel: two loads per two multiply-adds); the others go to the
    per-pixel kernel `per_pixel`."""
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(
        pe, f"conv.depthwise_rows.{instr.name}")
    groups, mult = plan
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    rhs, out = instr.operands[1].shape, instr.shape
    rs, os_ = strides_of(rhs), strides_of(out)
    ls = strides_of(instr.operands[0].shape)
    fty = T.value_type(out.element_type)
    vl, nv = _feature_vectors(instr, plan)
    vty = ir.VectorType(fty, vl)
    fma = T.intrinsic(pe.llmod, "llvm.fmuladd", vty, 3)
    n_feat = out.dims[dn.output_feature]
    pix = [d for d in reversed(out.minor_to_major) if d != dn.output_feature]
    xs = dn.output_spatial.index(pix[-1])   # the row's spatial dim
    x_step = w.stride[xs] * ls[dn.input_spatial[xs]]   # lhs elements between pixels
    nsp = len(dn.output_spatial)
    wins = []
    n_win = 1
    for s in range(nsp):
        n_win *= w.size[s]
    for lin in range(n_win):
        ks, rem = [], lin
        for s in reversed(range(nsp)):
            ks.insert(0, rem % w.size[s])
            rem //= w.size[s]
        wins.append((sum(k * rs[dn.kernel_spatial[s]] for s, k in enumerate(ks)), ks))
    per_row = -(-run // PIXEL_BLOCK)
    ctx = fn.args[0]
    with for_range(b, start, end, name="unit") as u:
        row = b.udiv(u, c64(per_row))
        x0 = b.mul(b.urem(u, c64(per_row)), c64(PIXEL_BLOCK))
        p0 = b.add(b.mul(row, c64(run)), x0)
        count = b.select(b.icmp_unsigned("<", b.sub(c64(run), x0), c64(PIXEL_BLOCK)),
                         b.sub(c64(run), x0), c64(PIXEL_BLOCK))
        out_base, lhs_base, o_sp = pixel_coords(b, instr, pix, p0)
        last = list(o_sp)
        last[xs] = b.add(o_sp[xs], c64(PIXEL_BLOCK - 1))
        inside = b.and_(b.icmp_unsigned("==", count, c64(PIXEL_BLOCK)),
                        b.and_(window_inside(b, instr, o_sp), window_inside(b, instr, last)))
        with b.if_else(inside) as (whole, edge):
            with whole:
                with for_range(b, 0, n_feat, vl * nv, name="f") as f:
                    accs = [[ir.Constant(vty, [0.0] * vl)] * nv for _ in range(PIXEL_BLOCK)]
                    lhs_f = b.add(lhs_base, b.udiv(f, c64(mult)))
                    for off, ks in wins:
                        ys = [b.load(b.gep(rhs_p, [b.add(c64(off), b.add(f, c64(v * vl)))],
                                           source_etype=fty), typ=vty, align=1)
                              for v in range(nv)]
                        at, _ = lhs_offset(b, instr, o_sp, ks, lhs_f, checked=False)
                        for p in range(PIXEL_BLOCK):
                            x = b.load(b.gep(lhs_p, [b.add(at, c64(p * x_step))],
                                             source_etype=fty), typ=fty)
                            x = T.splat(b, x, vl)
                            accs[p] = [b.call(fma, [x, ys[v], accs[p][v]]) for v in range(nv)]
                    for p in range(PIXEL_BLOCK):
                        o = b.add(out_base, b.add(f, c64(p * os_[pix[-1]])))
                        for v in range(nv):
                            b.store(accs[p][v], b.gep(out_p, [b.add(o, c64(v * vl))],
                                                      source_etype=fty), align=1)
            with edge:
                b.call(per_pixel, [ctx, p0, b.add(p0, count)])
    b.ret_void()
    return fn


def _vectors_at_once(n_vectors: int, per_lhs: int, unrolled: bool) -> int:
    """Feature vectors a pixel's taps compute together (VECTORS_AT_ONCE at most) when each
    lhs feature is broadcast to per_lhs vectors (they share its load): a divisor of both
    counts. The CNN's first layer (one lhs feature, 32 outputs), one thread: 0.93-0.99 ->
    0.77-0.83 ms. Not with one vector per lhs feature (MobileNet's depthwise layer measured
    no better: its loads are not shared)."""
    if not unrolled or not per_lhs:
        return 1
    for width in range(VECTORS_AT_ONCE, 1, -1):
        if n_vectors % width == 0 and per_lhs % width == 0:
            return width
    return 1


def emit_filter_grad(pe, instr, dest, operands) -> bool:
    g = filter_grad_plan(instr)
    if g is None:
        return False
    fty = T.value_type(instr.shape.element_type)
    vl = max(vector_bits() // (32 if fty == T.F32 else 64), 1)
    units = g // vl + g % vl
    fn = _filter_kernel(pe, instr, g, vl)
    b, me = pe.b, pe.me
    ctx = pe.table([operands[0], operands[1], dest[0]])
    if me.use_threads and units >= 2 and instr.operands[1].shape.size >= PARALLEL_WORK:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
    else:
        b.call(fn, [ctx, c64(0), c64(units)])
    return True


def _filter_kernel(pe, instr, channels: int, vl: int) -> ir.Function:
    """fn(ctx = [lhs, rhs, out], start, end): channel units [start, end) (a vector of vl
    channels each, then the last channels one at a time): every output position's sum
    over the lhs features and the window, accumulated in registers."""
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(
        pe, f"conv.depthwise_filter.{instr.name}")
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    ls, rs, os_ = strides_of(lhs), strides_of(rhs), strides_of(out)
    fty = T.value_type(out.element_type)
    nsp = len(dn.output_spatial)
    osz = [out.dims[dn.output_spatial[s]] for s in range(nsp)]
    positions = []
    for lin in range(out.size // channels):
        o, rem = [], lin
        for s in reversed(range(nsp)):
            o.insert(0, rem % osz[s])
            rem //= osz[s]
        positions.append(o)
    vec_units = channels // vl

    def block(c0, ty, lanes):
        zero = ir.Constant(ty, [0.0] * lanes) if lanes > 1 else ir.Constant(fty, 0.0)
        fma = T.intrinsic(pe.llmod, "llvm.fmuladd", ty, 3)
        slots = []
        for _ in positions:
            s = entry_alloca(b, ty)
            b.store(zero, s)
            slots.append(s)
        n_in = lhs.dims[dn.input_feature]
        with for_range(b, 0, n_in, name="i") as i:
            lbase = b.add(c0, b.mul(i, c64(ls[dn.input_feature])))
            rbase = b.add(c0, b.mul(i, c64(rs[dn.kernel_input_feature])))
            ks = []
            with contextlib.ExitStack() as stack:
                for s in range(nsp):
                    ks.append(stack.enter_context(for_range(b, 0, w.size[s], name=f"k{s}")))
                roff = rbase
                for s in range(nsp):
                    roff = b.add(roff, b.mul(ks[s], c64(rs[dn.kernel_spatial[s]])))
                y = b.load(b.gep(rhs_p, [roff], source_etype=fty), typ=ty, align=1)
                for slot, o in zip(slots, positions):
                    off, ok = lhs_offset(b, instr, o, ks, lbase)
                    with b.if_then(ok):
                        x = b.load(b.gep(lhs_p, [off], source_etype=fty), typ=ty, align=1)
                        b.store(b.call(fma, [x, y, b.load(slot, typ=ty)]), slot)
        for slot, o in zip(slots, positions):
            off = c0
            for s in range(nsp):
                off = b.add(off, c64(o[s] * os_[dn.output_spatial[s]]))
            b.store(b.load(slot, typ=ty), b.gep(out_p, [off], source_etype=fty), align=1)

    with for_range(b, start, end, name="unit") as u:
        with b.if_else(b.icmp_signed("<", u, c64(vec_units))) as (vec, scalar):
            with vec:
                block(b.mul(u, c64(vl)), ir.VectorType(fty, vl), vl)
            with scalar:
                block(b.add(c64(vec_units * vl), b.sub(u, c64(vec_units))), fty, 1)
    b.ret_void()
    return fn


def kernel_fn(pe, name: str):
    """(fn, builder, (start, end), (lhs, rhs, out)) of a kernel fn(ctx = [lhs, rhs, out],
    start, end) for the thread pool."""
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(name))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    ptrs = tuple(b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR) for j in range(3))
    return fn, b, (start, end), ptrs


def pixel_coords(b, instr, pix, p):
    """(output offset, lhs offset of its batch, output spatial positions) of pixel p, the
    row-major index over the output dims `pix` (major -> minor)."""
    dn, out = instr.attrs["dim_labels"], instr.shape
    os_, ls = strides_of(out), strides_of(instr.operands[0].shape)
    idx, rem = {}, p
    for d in reversed(pix):
        idx[d] = b.urem(rem, c64(out.dims[d]))
        rem = b.udiv(rem, c64(out.dims[d]))
    off = c64(0)
    for d in pix:
        off = b.add(off, b.mul(idx[d], c64(os_[d])))
    return (off, b.mul(idx[dn.output_batch], c64(ls[dn.input_batch])),
            [idx[dn.output_spatial[s]] for s in range(len(dn.output_spatial))])


def window_position(b, w, s, o, k, size):
    """(lhs position, in bounds and not in a dilation hole) of output position o and
    kernel position k (i64 values or ints; reversed when the window says so) along
    spatial dim s, of `size` lhs positions."""
    o = c64(o) if isinstance(o, int) else o
    k = c64(k) if isinstance(k, int) else k
    if w.rhs_reversal[s]:
        k = b.sub(c64(w.size[s] - 1), k)
    pos = b.add(b.mul(o, c64(w.stride[s])), b.mul(k, c64(w.rhs_dilate[s])))
    pos = b.sub(pos, c64(w.pad_low[s]))
    ok = ir.Constant(T.I1, 1)
    dil = w.lhs_dilate[s]
    if dil != 1:
        ok = b.icmp_signed("==", b.srem(pos, c64(dil)), c64(0))
        pos = b.sdiv(pos, c64(dil))
    ok = b.and_(ok, b.icmp_signed(">=", pos, c64(0)))
    ok = b.and_(ok, b.icmp_signed("<", pos, c64(size)))
    return pos, ok


def lhs_offset(b, instr, o_sp, ks, base, checked: bool = True):
    """(element offset, valid) in the lhs of the convolution instr of output spatial
    position o_sp and window position ks (one entry per spatial dim), from `base` (the
    batch's and feature's part); the offset leaves out the dims outside the lhs. Not
    `checked` (the position is known to be inside): (offset, None)."""
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    ls = strides_of(lhs)
    ok, off = ir.Constant(T.I1, 1), base
    for s in range(len(dn.output_spatial)):
        pos, valid = window_position(b, w, s, o_sp[s], ks[s], lhs.dims[dn.input_spatial[s]])
        if checked:
            ok = b.and_(ok, valid)
            pos = b.select(ok, pos, c64(0))
        off = b.add(off, b.mul(pos, c64(ls[dn.input_spatial[s]])))
    return off, (ok if checked else None)


def by_window(b, instr, o_sp, emit) -> None:
    """emit(checked): emit(False) for pixels whose whole window is inside the lhs (taps
    without bounds checks), emit(True) for the others."""
    inside = window_inside(b, instr, o_sp)
    if inside is None:
        emit(True)
        return
    with b.if_else(inside) as (interior, edge):
        with interior:
            emit(False)
        with edge:
            emit(True)


def window_inside(b, instr, o_sp):
    """An i1: the whole window of output spatial position o_sp is inside the lhs (no
    padding; None when lhs dilation leaves holes anyway)."""
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    if any(d != 1 for d in w.lhs_dilate):
        return None
    ok = ir.Constant(T.I1, 1)
    for s in range(len(dn.output_spatial)):
        first = b.sub(b.mul(o_sp[s], c64(w.stride[s])), c64(w.pad_low[s]))
        last = b.add(first, c64((w.size[s] - 1) * w.rhs_dilate[s]))
        ok = b.and_(ok, b.icmp_signed(">=", first, c64(0)))
        ok = b.and_(ok, b.icmp_signed("<", last, c64(lhs.dims[dn.input_spatial[s]])))
    return ok
