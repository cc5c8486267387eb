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
with the gemm (conv.py) or the elemental loop. The depthwise filter gradient:
conv_depthwise_filter.py; the window arithmetic the direct kernels share: conv_window.py.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_window import (by_window, kernel_fn, lhs_offset,
                                                     pixel_coords, window_inside)
from xlapy.backends.cpu.passes.conv_plan import depthwise_plan
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range, strides

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
    rs = strides(rhs)
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
    rs, os_ = strides(rhs), strides(out)
    ls = strides(instr.operands[0].shape)
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
