"""More of jax.lax over xlapy's existing primitives: broadcast_shapes, tile, stack,
unstack, empty, mulhi, reduce_xor, scatter_sub, scatter_apply, index_take, betainc,
platform_dependent (the cpu branch), conv_general_dilated_patches, the shape helpers
conv_shape_tuple, conv_general_shape_tuple, conv_transpose_shape_tuple and
reduce_window_shape_tuple, the type names ConvGeneralDilatedDimensionNumbers and
DotDimensionNumbers. (rng_bit_generator and rng_uniform are in random_bits.py.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Union

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.bitcast import bitcast_convert_type
from xlapy.frontend.primitives.conv import (ConvDimensionNumbers, conv_dimension_numbers,
                                            padtype_to_pads)
from xlapy.lax import ops as L
from xlapy.lax.ops import _conv_transpose_padding
from xlapy.lax.control import while_loop
from xlapy.lax.more_ops import _special, scatter_add

ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]

betainc = _special("betainc", "betainc")


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _aval(x):
    return B.aval_of(_arr(x))


# ---- shapes -------------------------------------------------------------------------------

def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to (NumPy's rule: trailing dimensions align)."""
    if not shapes:
        raise XlapyError("broadcast_shapes: at least one shape is needed")
    shapes = [tuple(int(d) for d in s) for s in shapes]
    return tuple(int(d) for d in xnp.broadcast_shapes(*shapes))


def tile(operand, reps: Sequence[int]):
    """operand repeated reps[d] times along each dimension d (one rep per dimension)."""
    reps = tuple(int(r) for r in reps)
    a = _aval(operand)
    if len(reps) != a.ndim:
        raise XlapyError(f"tile: reps must have one entry per dimension of the operand, got "
                         f"{len(reps)} for shape {a.shape}")
    if any(r < 0 for r in reps):
        raise XlapyError(f"tile: reps must be non-negative, got {reps}")
    return xnp.tile(_arr(operand), reps)


def stack(operands, axis: int = 0):
    """The operands (one shape and one dtype) stacked along a new axis."""
    operands = list(operands)
    if not operands:
        raise XlapyError("stack: no operands")
    avals = [_aval(o) for o in operands]
    if len({a.dtype for a in avals}) != 1 or len({a.shape for a in avals}) != 1:
        raise XlapyError(f"stack: the operands must have one shape and one dtype, got "
                         f"{', '.join(str(a) for a in avals)}")
    return xnp.stack([_arr(o) for o in operands], axis=axis)


def unstack(x, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple."""
    a = _aval(x)
    if not -a.ndim <= axis < a.ndim:
        raise XlapyError(f"unstack: axis {axis} is out of range for shape {a.shape}")
    axis %= a.ndim
    return tuple(L.index_in_dim(_arr(x), i, axis, keepdims=False)
                 for i in range(a.shape[axis]))


def empty(shape, dtype, *, out_sharding=None):
    """Zeros of shape and dtype (xlapy has no uninitialized memory)."""
    return xnp.zeros(shape, dtype)


def _pairs(padding, n, what):
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise XlapyError(f"{what}: padding must be 'SAME', 'VALID' or (low, high) pairs, got "
                         f"{padding!r}") from None
    if len(pads) != n:
        raise XlapyError(f"{what}: {len(pads)} padding pairs for {n} spatial dimensions")
    return pads


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """The output shape of a convolution of an NC... lhs with an OI... kernel."""
    lhs_shape, rhs_shape = tuple(map(int, lhs_shape)), tuple(map(int, rhs_shape))
    n = len(lhs_shape) - 2
    if n < 0 or len(rhs_shape) != len(lhs_shape) or len(strides) != n:
        raise XlapyError(f"conv_shape_tuple: shapes {lhs_shape} and {rhs_shape} need one rank "
                         f"(at least 2) and one stride per spatial dimension, got {strides}")
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = _pairs(pads, n, "conv_shape_tuple")
    out = [max(0, (d + lo + hi - k) // int(s) + 1)
           for d, (lo, hi), k, s in zip(lhs_shape[2:], pads, rhs_shape[2:], strides)]
    return (lhs_shape[0] // int(batch_group_count), rhs_shape[0], *out)


def _to_canonical(lhs_shape, rhs_shape, dimension_numbers):
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return (dn, tuple(int(lhs_shape[i]) for i in dn.lhs_spec),
            tuple(int(rhs_shape[i]) for i in dn.rhs_spec))


def _from_canonical(out_trans, out_spec) -> tuple:
    out = [0] * len(out_trans)
    for i, d in enumerate(out_spec):
        out[d] = int(out_trans[i])
    return tuple(out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers) -> tuple:
    """The output shape of conv_general_dilated (no dilation) with these dimension
    numbers."""
    dn, lhs_t, rhs_t = _to_canonical(lhs_shape, rhs_shape, dimension_numbers)
    return _from_canonical(conv_shape_tuple(lhs_t, rhs_t, window_strides, padding),
                           dn.out_spec)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers) -> tuple:
    """The output shape of conv_transpose with these dimension numbers."""
    dn, lhs_t, rhs_t = _to_canonical(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_t) - 2
    if len(window_strides) != n:
        raise XlapyError(f"conv_transpose_shape_tuple: {len(window_strides)} strides for {n} "
                         "spatial dimensions")
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, int(s), padding.upper())
                   for k, s in zip(rhs_t[2:], window_strides)]
    pads = _pairs(padding, n, "conv_transpose_shape_tuple")
    space = [(d - 1) * int(s) - k + 2 + lo + hi
             for d, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, pads)]
    return _from_canonical((lhs_t[0], rhs_t[0], *space), dn.out_spec)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The output shape of reduce_window with these windows, strides, padding and
    dilations."""
    shape = tuple(int(d) for d in operand_shape)
    n = len(shape)
    win = tuple(int(w) for w in window_dimensions)
    strides = tuple(int(s) for s in window_strides)
    base = (1,) * n if base_dilation is None else tuple(int(b) for b in base_dilation)
    wdil = (1,) * n if window_dilation is None else tuple(int(w) for w in window_dilation)
    if not len(win) == len(strides) == len(base) == len(wdil) == n:
        raise XlapyError(f"reduce_window_shape_tuple: windows {win}, strides {strides} and "
                         f"dilations need one entry per dimension of {shape}")
    dilated = [0 if d == 0 else (d - 1) * b + 1 for d, b in zip(shape, base)]
    wins = [(w - 1) * d + 1 for w, d in zip(win, wdil)]
    if isinstance(padding, str):
        padding = padtype_to_pads(dilated, wins, strides, padding)
    pads = _pairs(padding, n, "reduce_window_shape_tuple")
    return tuple(max(0, (d + lo + hi - w) // s + 1)
                 for d, (lo, hi), w, s in zip(dilated, pads, wins, strides))


# ---- convolution patches ------------------------------------------------------------------

def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a window of filter_shape reads, as output features:
    feature c * prod(filter_shape) + k holds input feature c at window position k
    (row-major over filter_shape)."""
    lhs = _arr(lhs)
    a = B.aval_of(lhs)
    filt = tuple(int(f) for f in filter_shape)
    n = a.ndim - 2
    if len(filt) != n:
        raise XlapyError(f"conv_general_dilated_patches: filter_shape {filt} needs one size per "
                         f"spatial dimension of the lhs {a.shape}")
    dn = conv_dimension_numbers(a.shape, (1,) * a.ndim, dimension_numbers)
    channels = a.shape[dn.lhs_spec[1]]
    k = math.prod(filt)
    eye = xnp.eye(k, dtype=a.dtype).reshape((k, 1) + filt)
    rhs = xnp.tile(eye, (channels,) + (1,) * (n + 1))
    canonical = ConvDimensionNumbers(dn.lhs_spec, tuple(range(a.ndim)), dn.out_spec)
    return L.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                  rhs_dilation, canonical, feature_group_count=channels,
                                  precision=precision,
                                  preferred_element_type=preferred_element_type)


# ---- integer arithmetic and reductions ------------------------------------------------------

def _int_kind(x, what):
    dt = np.dtype(_aval(x).dtype)
    if dt.kind not in "iu":
        raise XlapyError(f"{what}: integer operands are needed, got {dt}")
    return dt


def mulhi(x, y, /):
    """The high half of the double-width product x * y (signed or unsigned integers of one
    dtype), as XLA computes it."""
    dt = _int_kind(x, "mulhi")
    if isinstance(y, int) and not isinstance(y, bool):
        y = np.asarray(y, dt)
    if np.dtype(_aval(y).dtype) != dt or _aval(x).shape != _aval(y).shape:
        raise XlapyError(f"mulhi: operands must have one dtype and shape, got {_aval(x)} and "
                         f"{_aval(y)}")
    nbits = 8 * dt.itemsize
    ut = np.dtype(f"uint{nbits}")
    half = nbits // 2
    a, b = bitcast_convert_type(_arr(x), ut), bitcast_convert_type(_arr(y), ut)
    mask = L.full_like(a, (1 << half) - 1)
    sh = L.full_like(a, half)
    a0, a1 = L.bitwise_and(a, mask), L.shift_right_logical(a, sh)
    b0, b1 = L.bitwise_and(b, mask), L.shift_right_logical(b, sh)
    p01, p10 = L.mul(a0, b1), L.mul(a1, b0)
    mid = L.add(L.add(L.shift_right_logical(L.mul(a0, b0), sh), L.bitwise_and(p01, mask)),
                L.bitwise_and(p10, mask))
    hi = L.add(L.add(L.mul(a1, b1), L.shift_right_logical(p01, sh)),
               L.add(L.shift_right_logical(p10, sh), L.shift_right_logical(mid, sh)))
    if dt.kind == "i":  # two's complement: subtract b when x < 0 and a when y < 0
        zero = L.full_like(a, 0)
        hi = L.sub(hi, L.select(L.lt(_arr(x), L.full_like(_arr(x), 0)), b, zero))
        hi = L.sub(hi, L.select(L.lt(_arr(y), L.full_like(_arr(y), 0)), a, zero))
    return bitcast_convert_type(hi, dt)


def reduce_xor(operand, axes: Sequence[int]):
    """The bitwise (boolean: logical) exclusive or over the given axes."""
    x = _arr(operand)
    a = B.aval_of(x)
    if np.dtype(a.dtype).kind not in "biu":
        raise XlapyError(f"reduce_xor: a boolean or integer operand is needed, got {a.dtype}")
    axes = tuple(int(d) % max(a.ndim, 1) for d in axes)
    if len(set(axes)) != len(axes) or any(not 0 <= d < a.ndim for d in axes):
        raise XlapyError(f"reduce_xor: axes {axes} must be distinct dimensions of {a.shape}")
    keep = [d for d in range(a.ndim) if d not in axes]
    kept = tuple(a.shape[d] for d in keep)
    n = math.prod(a.shape[d] for d in axes)
    x = L.reshape(L.transpose(x, keep + list(axes)), kept + (n,))
    if n == 0:
        return L.full(kept, 0, a.dtype)
    while n > 1:  # halve: pairs folded together, an odd last one carried over
        h = n // 2
        lo = L.slice_in_dim(x, 0, h, axis=len(kept))
        hi = L.slice_in_dim(x, h, 2 * h, axis=len(kept))
        folded = L.bitwise_xor(lo, hi)
        if n % 2:
            folded = L.concatenate([folded, L.slice_in_dim(x, 2 * h, n, axis=len(kept))],
                                   len(kept))
        x, n = folded, h + n % 2
    return L.reshape(x, kept)


# ---- scatters and gathers ---------------------------------------------------------------------

def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with the updates subtracted at the scattered positions (scatter_add of
    -updates)."""
    u = _arr(updates)
    neg = L.sub(L.full_like(u, 0), u)
    return scatter_add(operand, scatter_indices, neg, dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied to each scattered element, once per time it is scattered
    to (as XLA's scatter with func as the combiner). func must be elementwise."""
    x = xnp.asarray(operand)
    a = B.aval_of(x)
    ones = L.full(tuple(int(d) for d in update_shape), 1, np.int32)
    counts = scatter_add(L.full(a.shape, 0, np.int32), scatter_indices, ones,
                         dimension_numbers, mode=mode)

    def cond(c):
        return xnp.any(counts > c[0])

    def body(c):
        k, r = c
        return k + 1, xnp.where(counts > k, xnp.asarray(func(r)).astype(a.dtype), r)

    return while_loop(cond, body, (np.int32(0), x))[1]


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] with the index arrays on the given axes: one row per index,
    followed by src's other dimensions."""
    idxs, axes = tuple(idxs), tuple(int(a) for a in axes)
    a = _aval(src)
    if len(idxs) != len(axes):
        raise XlapyError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    if len(set(d % max(a.ndim, 1) for d in axes)) != len(axes):
        raise XlapyError(f"index_take: axes {axes} must be distinct")
    moved = xnp.moveaxis(_arr(src), axes, tuple(range(len(axes))))
    return moved[tuple(xnp.asarray(i) for i in idxs)]


# ---- platform ----------------------------------------------------------------------------

def platform_dependent(*args, default=None, **per_platform):
    """The branch for the cpu (xlapy's platform) applied to args, else default's."""
    fn = per_platform.get("cpu", default)
    if fn is None:
        raise XlapyError(f"platform_dependent: no branch for the cpu platform (got "
                         f"{sorted(per_platform)}) and no default")
    return fn(*args)


__all__ = ["ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers",
           "betainc", "broadcast_shapes", "tile", "stack", "unstack", "empty",
           "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple",
           "reduce_window_shape_tuple", "conv_general_dilated_patches", "mulhi", "reduce_xor",
           "scatter_sub", "scatter_apply", "index_take", "platform_dependent"]
