"""Convolutions as patch extraction and matrix products, written once against the array
module `m` (NumPy in the executor, xlapy.numpy when compiled).

    patches(x)   [N, *out, K, C]: for each output position, the K = prod(kernel) input
                 vectors its window reads (zero padding, strides, dilations applied)
    conv         patches . W            one [N*out, K*C] x [K*C, O] matrix product
    filter grad  patches^T . g          one [K*C, N*out] x [N*out, O] product
    input grad   a stride-1 convolution of g (dilated by the strides, padded) with the
                 kernel flipped and its channels swapped: the same gather and product

Why not HLO convolution: xlapy's CPU backend emits a convolution as a loop nest per
output element, while its dot is a packed, vectorized, multithreaded gemm; written this
way a CNN's convolutions and their gradients are gemms plus fused copy kernels, and the
executor gets NumPy's BLAS for the same products. Layouts: the math is channels-last;
channels-first data is transposed in and out.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np


def spatial_axes(fmt: str) -> list:
    return [i for i, c in enumerate(fmt) if c not in "NC"]


def eff(k, d):
    return (k - 1) * d + 1


def out_and_pads(size, k, s, d, padding, explicit):
    """(output size, (low, high)) of one spatial dimension; sizes may be None (shapes)."""
    ek = eff(k, d) if k is not None else None
    if padding == "VALID":
        out = None if size is None or ek is None else max(0, (size - ek) // s + 1)
        return out, (0, 0)
    if padding == "SAME":
        out = None if size is None else -(-size // s)
        if size is None or ek is None:
            return out, None
        total = max((out - 1) * s + ek - size, 0)
        return out, (total // 2, total - total // 2)
    lo, hi = explicit
    out = None if size is None or ek is None else max(0, (size + lo + hi - ek) // s + 1)
    return out, (lo, hi)


def to_channels_last(m, x, fmt):
    if not fmt.startswith("NC"):
        return x
    r = len(fmt)
    return m.transpose(x, (0,) + tuple(range(2, r)) + (1,))


def from_channels_last(m, x, fmt):
    if not fmt.startswith("NC"):
        return x
    r = len(fmt)
    return m.transpose(x, (0, r - 1) + tuple(range(1, r - 1)))


@functools.lru_cache(maxsize=64)
def _patch_rows(padded: tuple, ks: tuple, strides: tuple, dil: tuple, outs: tuple):
    """For the padded input viewed as rows of C channels, the row each (n, out position,
    tap) reads, in [N, *out, K] order."""
    n = padded[0]
    sp = padded[1:-1]
    row_strides = [math.prod(sp[j + 1:]) for j in range(len(sp))]
    axes = [np.arange(n)] + [np.arange(o) for o in outs] + [np.arange(k) for k in ks]
    grids = np.meshgrid(*axes, indexing="ij", sparse=True)
    r = len(sp)
    rows = grids[0] * math.prod(sp)
    for j in range(r):
        pos = grids[1 + j] * strides[j] + grids[1 + r + j] * dil[j]
        rows = rows + pos * row_strides[j]
    total = n * math.prod(sp)
    return rows.reshape(-1).astype(np.int32 if total < 2 ** 31 else np.int64)


def patches(m, x, ks, strides, dil, pads, outs):
    """[N, *out, K, C] windows of the channels-last x, zero padded by pads: one gather of
    the rows each window reads (NumPy's take; compiled, a concatenation of the K shifted
    slices would cost a select among K operands per element)."""
    if all(k == 1 for k in ks) and all(s == 1 for s in strides) and \
            all(tuple(p) == (0, 0) for p in pads):
        return m.reshape(x, (x.shape[0], *outs, 1, x.shape[-1]))      # 1x1: x itself
    x = m.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)])
    c = x.shape[-1]
    rows = _patch_rows(tuple(x.shape), tuple(ks), tuple(strides), tuple(dil), tuple(outs))
    got = m.take(m.reshape(x, (-1, c)), rows, axis=0)
    return m.reshape(got, (x.shape[0], *outs, math.prod(ks), c))


def _geometry(in_sp, ks, strides, dil, padding, explicit):
    outs, pads = [], []
    for j, size in enumerate(in_sp):
        o, p = out_and_pads(size, ks[j], strides[j], dil[j], padding, explicit[j])
        outs.append(o)
        pads.append(p)
    return outs, pads


def _flat(m, a, cols):
    return m.reshape(a, (-1, cols))


# compiled, per-tap products need enough channels to be worth a gemm each; fewer (an
# image's 1 or 3) gather the windows into one product instead
TAP_PRODUCTS_MIN_CHANNELS = 16


def _taps(ks):
    return list(itertools.product(*[range(k) for k in ks]))


def _tap(x, pos, dil, outs, strides):
    """The slice of the padded, channels-last x that tap `pos` reads for every output."""
    return x[(slice(None),) + tuple(slice(p * d, p * d + (o - 1) * s + 1, s) for p, d, o, s
                                    in zip(pos, dil, outs, strides)) + (slice(None),)]


def conv(m, x, w, strides, dil, padding, explicit, fmt):
    """x in fmt, w [*k, C, O]. NumPy: one gather of the windows and one BLAS product.
    Compiled: one product per kernel tap, summed (the gemm epilogue adds each into the
    running sum), which costs less than gathering the windows with xlapy's kernels."""
    xc = to_channels_last(m, x, fmt)
    ks = tuple(w.shape[:-2])
    outs, pads = _geometry(xc.shape[1:-1], ks, strides, dil, padding, explicit)
    c, o = w.shape[-2], w.shape[-1]
    if m is np or c < TAP_PRODUCTS_MIN_CHANNELS:
        p = patches(m, xc, ks, strides, dil, pads, outs)
        y = m.matmul(_flat(m, p, math.prod(ks) * c), m.reshape(w, (-1, o)))
    else:
        xp_ = m.pad(xc, [(0, 0)] + [tuple(q) for q in pads] + [(0, 0)])
        y = None
        for pos in _taps(ks):
            t = m.matmul(_flat(m, _tap(xp_, pos, dil, outs, strides), c), w[pos])
            y = t if y is None else m.add(y, t)
    return from_channels_last(m, m.reshape(y, (xc.shape[0], *outs, o)), fmt)


def conv_filter_grad(m, x, k_shape, g, strides, dil, padding, explicit, fmt):
    xc, gc = to_channels_last(m, x, fmt), to_channels_last(m, g, fmt)
    ks = tuple(k_shape[:-2])
    outs, pads = _geometry(xc.shape[1:-1], ks, strides, dil, padding, explicit)
    c, o = xc.shape[-1], gc.shape[-1]
    if m is np or c < TAP_PRODUCTS_MIN_CHANNELS:
        p = patches(m, xc, ks, strides, dil, pads, outs)
        dw = m.matmul(m.transpose(_flat(m, p, math.prod(ks) * c)), _flat(m, gc, o))
        return m.reshape(dw, tuple(k_shape))
    xp_ = m.pad(xc, [(0, 0)] + [tuple(q) for q in pads] + [(0, 0)])
    gf = _flat(m, gc, o)
    blocks = [m.matmul(m.transpose(_flat(m, _tap(xp_, pos, dil, outs, strides), c)), gf)
              for pos in _taps(ks)]
    return m.reshape(m.stack(blocks), tuple(k_shape))


def dilate_pad(m, x, strides, pads):
    """Channels-last x with strides - 1 zeros between elements and (low, high) padding per
    spatial dimension (negative: cropped)."""
    if m is not np:
        import xlapy.lax as lax
        cfg = [(0, 0, 0)] + [(lo, hi, s - 1) for (lo, hi), s in zip(pads, strides)] + \
            [(0, 0, 0)]
        return lax.pad(x, np.zeros((), np.dtype(x.dtype)), cfg)
    sp = x.shape[1:-1]
    dil = [eff(n, s) if n else 0 for n, s in zip(sp, strides)]
    full = [max(lo, 0) + d + max(hi, 0) for d, (lo, hi) in zip(dil, pads)]
    out = np.zeros((x.shape[0], *full, x.shape[-1]), x.dtype)
    out[(slice(None),) + tuple(slice(max(lo, 0), max(lo, 0) + d, s) for d, (lo, _), s
                               in zip(dil, pads, strides)) + (slice(None),)] = x
    crop = (slice(None),) + tuple(slice(-min(lo, 0), f - (-min(hi, 0)))
                                  for f, (lo, hi) in zip(full, pads)) + (slice(None),)
    return out[crop]


def _transposed_input(m, in_shape, ks, g, strides, dil, padding, explicit, fmt):
    """(channels-last input shape, g dilated and padded so that a stride-1 VALID
    convolution with the flipped kernel gives the input gradient)."""
    gc = to_channels_last(m, g, fmt)
    in_cl = list(in_shape) if not fmt.startswith("NC") else \
        [in_shape[0]] + list(in_shape[2:]) + [in_shape[1]]
    outs, pads = _geometry(in_cl[1:-1], ks, strides, dil, padding, explicit)
    tpads = []
    for size, k, s, d, o, (lo, _) in zip(in_cl[1:-1], ks, strides, dil, outs, pads):
        before = eff(k, d) - lo - 1
        tpads.append((before, size + eff(k, d) - 1 - (eff(o, s) if o else 0) - before))
    return in_cl, dilate_pad(m, gc, strides, tpads)


def _flip(m, w, r):
    return m.flip(w, axis=tuple(range(r))) if r else w


def _input_grad_by_taps(m, in_cl, w, g, dil, pads, outs):
    """Compiled, stride 1: each tap's product g . W_k^T added into its window of the padded
    input gradient with a dynamic-update-slice (done in place), then cropped."""
    import xlapy.lax as lax
    ks = tuple(w.shape[:-2])
    c, o = w.shape[-2], w.shape[-1]
    n = in_cl[0]
    gf = _flat(m, g, o)
    full = (n,) + tuple(d + lo + hi for d, (lo, hi) in zip(in_cl[1:-1], pads)) + (c,)
    acc = m.zeros(full, g.dtype)
    region = (n, *outs, c)
    for pos in _taps(ks):
        t = m.reshape(m.matmul(gf, m.transpose(w[pos])), region)
        start = [0] + [p * d for p, d in zip(pos, dil)] + [0]
        acc = lax.dynamic_update_slice(acc, m.add(lax.dynamic_slice(acc, start, region), t),
                                       start)
    return acc[(slice(None),) + tuple(slice(lo, lo + d) for d, (lo, _) in
                                      zip(in_cl[1:-1], pads)) + (slice(None),)]


def conv_input_grad(m, in_shape, w, g, strides, dil, padding, explicit, fmt):
    """NumPy (and compiled strided convolutions): a stride-1 convolution of the dilated,
    padded g with the spatially flipped kernel, its in/out channels swapped. Compiled,
    stride 1: per-tap products added into place (_input_grad_by_taps)."""
    ks = tuple(w.shape[:-2])
    if m is not np and all(s == 1 for s in strides) and \
            w.shape[-1] >= TAP_PRODUCTS_MIN_CHANNELS:
        gc = to_channels_last(m, g, fmt)
        in_cl = list(in_shape) if not fmt.startswith("NC") else \
            [in_shape[0]] + list(in_shape[2:]) + [in_shape[1]]
        outs, pads = _geometry(in_cl[1:-1], ks, strides, dil, padding, explicit)
        return from_channels_last(m, _input_grad_by_taps(m, in_cl, w, gc, dil, pads, outs),
                                  fmt)
    in_cl, gp = _transposed_input(m, in_shape, ks, g, strides, dil, padding, explicit, fmt)
    wt = m.swapaxes(_flip(m, w, len(ks)), -1, -2)
    ones = [1] * len(ks)
    dx = conv(m, gp, wt, ones, dil, "VALID", [None] * len(ks), "N" + "H" * len(ks) + "C")
    return from_channels_last(m, dx, fmt)


def depthwise(m, x, w, strides, dil, padding, explicit, fmt):
    """w [*k, C, M] -> [N, *out, C*M]: each channel convolved with its own M filters."""
    xc = to_channels_last(m, x, fmt)
    ks = tuple(w.shape[:-2])
    outs, pads = _geometry(xc.shape[1:-1], ks, strides, dil, padding, explicit)
    c, mult = w.shape[-2], w.shape[-1]
    p = patches(m, xc, ks, strides, dil, pads, outs)            # [N, *out, K, C]
    y = m.einsum("nkc,kcm->ncm", m.reshape(p, (-1, math.prod(ks), c)),
                 m.reshape(w, (math.prod(ks), c, mult)))
    return from_channels_last(m, m.reshape(y, (xc.shape[0], *outs, c * mult)), fmt)


def depthwise_filter_grad(m, x, k_shape, g, strides, dil, padding, explicit, fmt):
    xc, gc = to_channels_last(m, x, fmt), to_channels_last(m, g, fmt)
    ks = tuple(k_shape[:-2])
    c, mult = k_shape[-2], k_shape[-1]
    outs, pads = _geometry(xc.shape[1:-1], ks, strides, dil, padding, explicit)
    p = m.reshape(patches(m, xc, ks, strides, dil, pads, outs), (-1, math.prod(ks), c))
    dw = m.einsum("nkc,ncm->kcm", p, m.reshape(gc, (-1, c, mult)))
    return m.reshape(dw, tuple(k_shape))


def depthwise_input_grad(m, in_shape, w, g, strides, dil, padding, explicit, fmt):
    ks = tuple(w.shape[:-2])
    c, mult = w.shape[-2], w.shape[-1]
    in_cl, gp = _transposed_input(m, in_shape, ks, g, strides, dil, padding, explicit, fmt)
    ones = [1] * len(ks)
    outs, _ = _geometry(gp.shape[1:-1], ks, ones, dil, "VALID", [None] * len(ks))
    p = patches(m, gp, ks, ones, dil, [(0, 0)] * len(ks), outs)   # [N, *in, K, C*M]
    dx = m.einsum("nkcm,kcm->nc", m.reshape(p, (-1, math.prod(ks), c, mult)),
                  m.reshape(_flip(m, w, len(ks)), (math.prod(ks), c, mult)))
    return from_channels_last(m, m.reshape(dx, in_cl), fmt)
