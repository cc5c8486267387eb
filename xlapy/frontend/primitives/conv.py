"""conv_general_dilated: XLA's convolution as a primitive, with its four rules.

Parameters (all static): window_strides, padding (one (low, high) pair per spatial dim;
'SAME'/'VALID' are resolved by the API in xlapy.lax), lhs_dilation, rhs_dilation,
dimension_numbers (a ConvDimensionNumbers of three permutations, as in JAX: lhs_spec =
(batch, feature, spatial...), rhs_spec = (out feature, in feature, spatial...), out_spec =
(batch, feature, spatial...), each naming the array dimension holding that role),
feature_group_count, batch_group_count and preferred_element_type.

Semantics (as XLA): the lhs is dilated (lhs_dilation - 1 zeros between elements) and
padded (negative padding crops); the kernel, dilated by rhs_dilation, slides over it with
window_strides. Feature groups split the lhs features and the kernel's output features
into G contiguous groups; batch groups split the lhs batch and the kernel's output features.

The VJPs are JAX's transpose rules: the lhs cotangent is a convolution of the output
cotangent with the spatially reversed kernel (lhs_dilation <-> window_strides swapped,
kernel in/out features swapped); the rhs cotangent is a convolution of the lhs with the
output cotangent with batch and feature roles swapped (feature groups become batch groups
and vice versa).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.primitives.basic import aval_of, convert, full, is_float
from xlapy.frontend.primitives.shapes import pad_p, reshape, rev, transpose

ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = ("Three permutations: for lhs/out (batch, feature, spatial..), "
                                "for rhs (out feature, in feature, spatial..).")


# ---- dimension numbers --------------------------------------------------------------------

def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Canonicalize dimension numbers: None (NCHW/OIHW/NCHW), a ConvDimensionNumbers, a
    triple of strings like ('NHWC', 'HWIO', 'NHWC'), or an HLO dim_labels string
    'b01f_01io->b01f'."""
    n = len(lhs_shape)
    if len(rhs_shape) != n:
        raise ShapeError(f"conv_general_dilated: lhs and rhs must have the same rank, got "
                         f"shapes {list(lhs_shape)} and {list(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(n))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if isinstance(dimension_numbers, str):
        from xlapy.hlo.attributes import ConvDimensionNumbers as HloDN
        try:
            d = HloDN.parse(dimension_numbers)
        except ValueError as e:
            raise ShapeError(f"conv_general_dilated: {e}") from None
        return ConvDimensionNumbers((d.input_batch, d.input_feature, *d.input_spatial),
                                    (d.kernel_output_feature, d.kernel_input_feature,
                                     *d.kernel_spatial),
                                    (d.output_batch, d.output_feature, *d.output_spatial))
    if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
            and all(isinstance(s, str) for s in dimension_numbers)):
        raise ShapeError(f"conv_general_dilated: dimension_numbers must be None, three strings "
                         f"like ('NHWC', 'HWIO', 'NHWC') or 'b01f_01io->b01f', got "
                         f"{dimension_numbers!r}")
    lhs_s, rhs_s, out_s = dimension_numbers
    for i, (s, pair) in enumerate(zip(dimension_numbers, ("NC", "OI", "NC"))):
        if len(s) != n or len(set(s)) != n or s.count(pair[0]) != 1 or s.count(pair[1]) != 1:
            raise ShapeError(f"conv_general_dilated: dimension_numbers[{i}] = '{s}' must have "
                             f"{n} distinct letters including '{pair[0]}' and '{pair[1]}' once "
                             f"(operand shapes {list(lhs_shape)} and {list(rhs_shape)})")
    if not set(lhs_s) - set("NC") == set(rhs_s) - set("OI") == set(out_s) - set("NC"):
        raise ShapeError(f"conv_general_dilated: dimension_numbers {tuple(dimension_numbers)} "
                         "must name the same spatial dimensions in all three specs")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        spatial.sort(key=lambda i: rhs_s.index(spec[i]))  # spatial order follows the rhs
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return ConvDimensionNumbers(perm(lhs_s, "NC"), perm(rhs_s, "OI"), perm(out_s, "NC"))


def to_hlo_dimension_numbers(dn: ConvDimensionNumbers):
    from xlapy.hlo.attributes import ConvDimensionNumbers as HloDN
    ls, rs, os_ = dn
    return HloDN(ls[0], ls[1], tuple(ls[2:]), rs[1], rs[0], tuple(rs[2:]), os_[0], os_[1],
                 tuple(os_[2:]))


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> tuple:
    """'SAME' / 'SAME_LOWER' / 'VALID' as (low, high) pairs (JAX's rule)."""
    kind = str(padding).upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ShapeError(f"unknown padding '{padding}': expected 'SAME', 'SAME_LOWER', 'VALID' "
                         "or a sequence of (low, high) pairs")
    pads = []
    for d, w, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-d // s) - 1) * s + w - d, 0)
        lo = total // 2 if kind == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return tuple(pads)


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _out_size(padded, window, stride):
    return 0 if padded < window else (padded - window) // stride + 1


# ---- the primitive ------------------------------------------------------------------------

conv_general_dilated_p = primitive("conv_general_dilated")


@conv_general_dilated_p.def_abstract_eval
def _conv_aval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type, precision=None):
    ls, rs, os_ = dimension_numbers
    where = f"conv_general_dilated of {lhs} and {rhs}"
    if lhs.ndim != rhs.ndim or len(ls) != lhs.ndim:
        raise ShapeError(f"{where}: operands must both have rank {len(ls)}")
    ns = lhs.ndim - 2
    for name, v in (("window_strides", window_strides), ("padding", padding),
                    ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != ns:
            raise ShapeError(f"{where}: {name} needs {ns} entries, got {list(v)}")
    if min((*window_strides, *lhs_dilation, *rhs_dilation), default=1) < 1:
        raise ShapeError(f"{where}: strides and dilations must be positive")
    if lhs.dtype != rhs.dtype:
        raise ShapeError(f"{where}: operand dtypes differ")
    G, B = feature_group_count, batch_group_count
    n, c = lhs.shape[ls[0]], lhs.shape[ls[1]]
    o, i = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if G < 1 or B < 1 or (G > 1 and B > 1):
        raise ShapeError(f"{where}: feature_group_count={G} and batch_group_count={B} must be "
                         ">= 1 and not both > 1")
    if c % G or c // G != i:
        raise ShapeError(f"{where}: lhs features ({c}) / feature_group_count ({G}) must equal "
                         f"the kernel's input features ({i})")
    if o % G or o % B or n % B:
        raise ShapeError(f"{where}: kernel output features ({o}) must be a multiple of the "
                         f"group count and lhs batch ({n}) of batch_group_count ({B})")
    spatial = []
    for k in range(ns):
        size = _dilate(lhs.shape[ls[2 + k]], lhs_dilation[k]) + sum(padding[k])
        if size < 0:
            raise ShapeError(f"{where}: padding {padding[k]} crops spatial dimension {k} "
                             "below zero")
        win = _dilate(rhs.shape[rs[2 + k]], rhs_dilation[k])
        spatial.append(_out_size(size, win, window_strides[k]))
    canon = (n // B, o, *spatial)
    shape = [0] * lhs.ndim
    for j, d in enumerate(os_):
        shape[d] = canon[j]
    return ShapedArray(shape, preferred_element_type or lhs.dtype)


@conv_general_dilated_p.def_impl
def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type, precision=None):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    _conv_aval(ShapedArray(lhs.shape, lhs.dtype), ShapedArray(rhs.shape, rhs.dtype),
               window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
               rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
               feature_group_count=feature_group_count, batch_group_count=batch_group_count,
               preferred_element_type=preferred_element_type)   # eager calls check shapes too
    ls, rs, os_ = dimension_numbers
    out_t = np.dtype(preferred_element_type or lhs.dtype)
    # f16/bf16 accumulate in f32; integers (and pred) in int64, wrapped at the end
    # (complex: in its own type; it was taken for an integer and lost its imaginary part)
    acc_t = ((np.float32 if out_t.itemsize < 4 else out_t) if is_float(out_t)
             else out_t if out_t.kind == "c" else np.int64)
    x = np.transpose(lhs, ls).astype(acc_t)              # [N, C, spatial..]
    k = np.transpose(rhs, rs).astype(acc_t)              # [O, I, window..]
    cfg = ((0, 0, 0), (0, 0, 0)) + tuple((lo, hi, d - 1) for (lo, hi), d
                                         in zip(padding, lhs_dilation))
    x = pad_p.impl(x, np.zeros((), acc_t), cfg)
    n, c, psp = x.shape[0], x.shape[1], x.shape[2:]
    o, i, ksp = k.shape[0], k.shape[1], k.shape[2:]
    osp = [_out_size(p, _dilate(kk, rd), s)
           for p, kk, rd, s in zip(psp, ksp, rhs_dilation, window_strides)]
    G, B = feature_group_count, batch_group_count
    groups = max(G, B)
    if B > 1:   # batch groups are contiguous chunks of the batch: [B, N/B, C, ..]
        xg = np.moveaxis(x.reshape(B, n // B, c, *psp), 0, 1)
    else:       # feature groups are contiguous chunks of the features: [N, G, C/G, ..]
        xg = x.reshape(n, G, c // G, *psp)
    kg = k.reshape(groups, o // groups, i, *ksp)         # [G, Og, Cg, window..]
    nb, cg, og = xg.shape[0], xg.shape[2], o // groups
    rows = nb * math.prod(osp)
    acc = np.zeros((groups, rows, og), acc_t)            # [G, N*out.., Og]
    if rows and og and cg:
        for pos in np.ndindex(*ksp):
            sl = tuple(slice(q * rd, q * rd + (m - 1) * s + 1, s)
                       for q, rd, s, m in zip(pos, rhs_dilation, window_strides, osp))
            xs = xg[(slice(None),) * 3 + sl]             # [N, G, Cg, out..]
            xs = np.moveaxis(xs, 1, 0).reshape(groups, nb, cg, -1)
            xs = np.moveaxis(xs, 2, 3).reshape(groups, rows, cg)
            with np.errstate(all="ignore"):
                acc += np.matmul(xs, np.swapaxes(kg[(slice(None),) * 3 + pos], 1, 2))
    canon = acc.reshape(groups, nb, *osp, og)
    canon = np.moveaxis(canon, 0, -2).reshape(nb, *osp, o)     # [N, out.., O]
    canon = np.moveaxis(canon, -1, 1)                           # [N, O, out..]
    with np.errstate(all="ignore"):
        return np.ascontiguousarray(np.transpose(canon, np.argsort(os_))).astype(out_t)


@conv_general_dilated_p.def_lowering
def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count,
                preferred_element_type, precision=None):
    return ctx.b.convolution(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                             to_hlo_dimension_numbers(dimension_numbers),
                             feature_group_count, batch_group_count,
                             preferred_type=preferred_element_type, precision=precision)


# ---- VJP (JAX's transpose rules) ----------------------------------------------------------

def _reshape_axis_into(src, dst, x):
    """Merge axis `src` into axis `dst` (numbered after removing src), src major."""
    shape = aval_of(x).shape
    perm = [d for d in range(len(shape)) if d != src]
    perm.insert(dst, src)
    new = [s for d, s in enumerate(shape) if d != src]
    new[dst] *= shape[src]
    return reshape(transpose(x, perm), new)


def _reshape_axis_out_of(src, size1, x):
    """Split axis `src` into (size1, rest)."""
    shape = list(aval_of(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, shape)


def _vjp_lhs_padding(in_sp, win_sp, strides, out_sp, padding, lhs_dil, rhs_dil):
    pads = []
    for d, w, s, o, (lo, _), ld, rd in zip(in_sp, win_sp, strides, out_sp, padding, lhs_dil,
                                           rhs_dil):
        before = _dilate(w, rd) - lo - 1
        after = _dilate(d, ld) + _dilate(w, rd) - 1 - _dilate(o, s) - before
        pads.append((before, after))
    return tuple(pads)


def _vjp_rhs_padding(in_sp, win_sp, strides, out_sp, padding, lhs_dil, rhs_dil):
    pads = []
    for d, w, s, o, (lo, _), ld, rd in zip(in_sp, win_sp, strides, out_sp, padding, lhs_dil,
                                           rhs_dil):
        hi = (_dilate(o, s) - _dilate(d, ld)) + (_dilate(w, rd) - lo - 1)
        pads.append((lo, hi))
    return tuple(pads)


@conv_general_dilated_p.def_vjp
def _conv_vjp(ct, lhs, rhs, out, *, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count,
              preferred_element_type, precision=None):
    la, ra = aval_of(lhs), aval_of(rhs)
    ct = convert(ct, la.dtype)
    ls, rs, os_ = dimension_numbers
    in_sp = [la.shape[d] for d in ls[2:]]
    win_sp = [ra.shape[d] for d in rs[2:]]
    out_sp = [aval_of(ct).shape[d] for d in os_[2:]]
    G, B = feature_group_count, batch_group_count

    # d lhs: [m, gk] x [k, gj] -> [m, gj]: ct conv rev(rhs) with in/out features swapped
    w = rhs
    g_lhs = G
    if G > 1 or B > 1:  # move the group from the kernel's output to its input features
        w = _reshape_axis_out_of(rs[0], max(G, B), w)
        w = _reshape_axis_into(rs[0], rs[1], w)
        g_lhs = max(G, B)
    pads = _vjp_lhs_padding(in_sp, win_sp, window_strides, out_sp, padding, lhs_dilation,
                            rhs_dilation)
    t_dn = ConvDimensionNumbers(os_, (rs[1], rs[0]) + tuple(rs[2:]), ls)
    d_lhs = _conv(ct, rev(w, tuple(rs[2:])), lhs_dilation, pads, window_strides, rhs_dilation,
                  t_dn, g_lhs, 1, precision=precision)
    if B > 1:  # the batch groups came out as feature groups
        d_lhs = _reshape_axis_out_of(ls[1], B, d_lhs)
        d_lhs = _reshape_axis_into(ls[1], ls[0], d_lhs)

    # d rhs: [j, m] x [m, k] -> [j, k]: lhs conv ct with batch and feature roles swapped
    if aval_of(ct).size == 0:
        d_rhs = full(ra.shape, 0, ra.dtype)
    else:
        swap = lambda s: (s[1], s[0]) + tuple(s[2:])
        pads = _vjp_rhs_padding(in_sp, win_sp, window_strides, out_sp, padding, lhs_dilation,
                                rhs_dilation)
        d_rhs = _conv(lhs, ct, rhs_dilation, pads, lhs_dilation, window_strides,
                      ConvDimensionNumbers(swap(ls), swap(os_), swap(rs)), B, G,
                      precision=precision)
    return convert(d_lhs, la.dtype), convert(d_rhs, ra.dtype)


def _conv(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn, fgc, bgc,
          preferred_element_type=None, precision=None):
    # (precision: a param only when given, so jaxprs without one stay as they were)
    extra = {} if precision is None else {"precision": tuple(precision)}
    return bind(conv_general_dilated_p, lhs, rhs, **extra,
                window_strides=tuple(int(s) for s in window_strides),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                lhs_dilation=tuple(int(d) for d in lhs_dilation),
                rhs_dilation=tuple(int(d) for d in rhs_dilation),
                dimension_numbers=ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dn)),
                feature_group_count=int(fgc), batch_group_count=int(bgc),
                preferred_element_type=(None if preferred_element_type is None
                                        else np.dtype(preferred_element_type)))


# ---- the strict function ---------------------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, preferred_element_type=None, precision=None):
    """jax.lax.conv_general_dilated: padding is 'SAME'/'SAME_LOWER'/'VALID' or (low, high)
    pairs per spatial dimension."""
    la, ra = aval_of(lhs), aval_of(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    ns = la.ndim - 2
    lhs_dilation = (1,) * ns if lhs_dilation is None else tuple(lhs_dilation)
    rhs_dilation = (1,) * ns if rhs_dilation is None else tuple(rhs_dilation)
    window_strides = tuple(window_strides)
    if len(window_strides) != ns:
        raise ShapeError(f"conv_general_dilated: window_strides needs {ns} entries for "
                         f"operands {la} and {ra}, got {list(window_strides)}")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ShapeError("conv_general_dilated: string padding is not supported with "
                             "lhs_dilation (transposed convolution); give explicit pairs")
        win = [_dilate(ra.shape[d], r) for d, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([la.shape[d] for d in dn.lhs_spec[2:]], win,
                                  window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise ShapeError(f"conv_general_dilated: padding must be a string or (low, high) "
                             f"pairs, got {padding!r}") from None
    return _conv(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                 feature_group_count, batch_group_count, preferred_element_type, precision)


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_p", "padtype_to_pads"]
