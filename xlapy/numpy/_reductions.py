"""Reductions with NumPy's axis / keepdims / dtype semantics.

Result dtypes follow NumPy: sum/prod of bools and small integers accumulate in int64
(uint64 for unsigned); mean/var/std of integers give float64; float16 (and bfloat16)
sums, means and variances are accumulated in float32 and rounded once (NumPy accumulates
float16 in float32 too). A reduction with no identity (max, min, argmax, argmin) of an
empty axis raises, as in NumPy.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import (BFLOAT16, cast, dtype_of, kind, normalize_axes, normalize_axis,
                               promote_and_broadcast, result_type, shape)

_F32 = np.dtype(np.float32)


def _keep(x, axes, keepdims, in_shape):
    if not keepdims:
        return x
    return S.reshape(x, tuple(1 if i in axes else d for i, d in enumerate(in_shape)))


def _sum_dtype(dt) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return dt


def _acc(dt) -> np.dtype:
    """The type a float reduction accumulates in (float16/bfloat16 -> float32)."""
    dt = np.dtype(dt)
    return _F32 if kind(dt) == "f" and dt.itemsize < 4 else dt


def _count(s, axes) -> int:
    n = 1
    for a in axes:
        n *= s[a]
    return n


def _reduce_in(prim_reduce, x, axes, dt):
    """prim_reduce of x converted to dt, accumulated in _acc(dt), returned as dt."""
    r = prim_reduce(cast(x, _acc(dt)), axes)
    return cast(r, dt)


def _sum_or_prod(prim_reduce, combine, x, axis, dtype, keepdims, initial):
    """sum/prod: in `dtype` (default: the integers widened as NumPy), `initial` combined in."""
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = np.dtype(dtype) if dtype is not None else _sum_dtype(dtype_of(x))
    r = _reduce_in(prim_reduce, x, axes, dt)
    if initial is not None:
        r = combine(r, B.full_like(r, initial))
    return _keep(r, axes, keepdims, s)


def sum(x, axis=None, dtype=None, keepdims=False, initial=None):
    return _sum_or_prod(S.reduce_sum, B.add, x, axis, dtype, keepdims, initial)


def prod(x, axis=None, dtype=None, keepdims=False, initial=None):
    return _sum_or_prod(S.reduce_prod, B.mul, x, axis, dtype, keepdims, initial)


def _mean_dtype(x, dtype) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    dt = np.dtype(dtype_of(x))
    return dt if kind(dt) in "fc" else np.dtype(np.float64)


def _mean(x, axes, dt):
    """The mean over axes as dt, computed in _acc(dt) (unrounded: for var)."""
    acc = _acc(dt)
    total = S.reduce_sum(cast(x, acc), axes)
    return B.div(total, B.full_like(total, _count(shape(x), axes)))


def mean(x, axis=None, dtype=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = _mean_dtype(x, dtype)
    return _keep(cast(_mean(x, axes, dt), dt), axes, keepdims, s)


def _minmax(prim_reduce, name, combine):
    def f(x, axis=None, keepdims=False, initial=None):
        s = shape(x)
        axes = normalize_axes(axis, len(s))
        if _count(s, axes) == 0 and len(s) and initial is None:
            raise XlapyError(f"zero-size array to reduction operation {name} which has no "
                             "identity (pass initial=...)")
        out_shape = tuple(d for i, d in enumerate(s) if i not in axes)
        if _count(s, axes) == 0:
            r = B.full(out_shape, initial, dtype_of(x))
        else:
            r = cast(prim_reduce(_exact_f32(x), axes), dtype_of(x))
            if initial is not None:
                r = combine(r, B.full_like(r, initial))
        return _keep(r, axes, keepdims, s)
    f.__name__ = name
    return f


max = _minmax(S.reduce_max, "max", B.max_)
min = _minmax(S.reduce_min, "min", B.min_)
amax, amin = max, min


def all(x, axis=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    return _keep(S.reduce_and(cast(x, np.bool_), axes), axes, keepdims, s)


def any(x, axis=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    return _keep(S.reduce_or(cast(x, np.bool_), axes), axes, keepdims, s)


def count_nonzero(x, axis=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    r = S.reduce_sum(cast(cast(x, np.bool_), np.int64), axes)
    return _keep(r, axes, keepdims, s)


def _exact_f32(x):
    """bfloat16 compared as float32 (exact; the reduction primitives' lowerings only know
    NumPy's float types)."""
    return cast(x, _F32) if np.dtype(dtype_of(x)) == BFLOAT16 else x


def _arg(prim, name):
    def f(x, axis=None, keepdims=False):
        x = _exact_f32(x)
        s = shape(x)
        if axis is None:
            if _count(s, range(len(s))) == 0:
                raise XlapyError(f"attempt to get {name} of an empty sequence")
            r = prim(S.reshape(x, (_count(s, range(len(s))),)), 0, np.int64)
            return S.reshape(r, (1,) * len(s)) if keepdims else r
        ax = normalize_axis(axis, len(s))
        if s[ax] == 0:
            raise XlapyError(f"attempt to get {name} of an empty sequence")
        r = prim(x, ax, np.int64)
        return _keep(r, (ax,), keepdims, s)
    f.__name__ = name
    return f


argmax = _arg(S.argmax, "argmax")
argmin = _arg(S.argmin, "argmin")


def _var(x, axes, dt, ddof):
    """The variance over axes as an unrounded value of type _acc(dt)."""
    s = shape(x)
    m = _mean(x, axes, dt)
    kept = [i for i in range(len(s)) if i not in axes]
    d = B.sub(cast(x, _acc(dt)), B.broadcast_in_dim(m, s, kept))
    ss = S.reduce_sum(B.mul(d, d), axes)
    return B.div(ss, B.full_like(ss, _count(s, axes) - ddof))


def var(x, axis=None, dtype=None, ddof=0, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = _mean_dtype(x, dtype)
    return _keep(cast(_var(x, axes, dt, ddof), dt), axes, keepdims, s)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = _mean_dtype(x, dtype)
    return _keep(cast(B.sqrt(_var(x, axes, dt, ddof)), dt), axes, keepdims, s)


def ptp(x, axis=None, keepdims=False):
    from xlapy.numpy._ufuncs import subtract
    return subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) computed stably (shifted by the max), as scipy.special.logsumexp:
    integer inputs give float64."""
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = np.dtype(dtype_of(x))
    dt = dt if kind(dt) == "f" else np.dtype(np.float64)
    x = cast(x, _acc(dt))
    m = S.reduce_max(x, axes)
    finite_m = B.select(B.eq(B.sub(m, m), B.zeros_like(m)), m, B.zeros_like(m))  # m finite
    kept = [i for i in range(len(s)) if i not in axes]
    shifted = B.sub(x, B.broadcast_in_dim(finite_m, s, kept))
    r = B.add(B.log(S.reduce_sum(B.exp(shifted), axes)), finite_m)
    return _keep(cast(r, dt), axes, keepdims, s)


# ---- NaN-ignoring reductions ------------------------------------------------------------------

def _is_float(x) -> bool:
    return kind(dtype_of(x)) == "f"


def _nan_to(x, value):
    return B.select(B.ne(x, x), B.full_like(x, value), x)


def nansum(x, axis=None, dtype=None, keepdims=False):
    if _is_float(x):
        x = _nan_to(x, 0)
    return sum(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _nan_minmax(fn, fill):
    def f(x, axis=None, keepdims=False):
        if not _is_float(x):
            return fn(x, axis=axis, keepdims=keepdims)
        r = fn(_nan_to(x, fill), axis=axis, keepdims=keepdims)
        all_nan = all(B.ne(x, x), axis=axis, keepdims=keepdims)
        return B.select(all_nan, B.full_like(r, np.nan), r)  # an all-NaN slice gives NaN
    return f


nanmax = _nan_minmax(max, -np.inf)
nanmin = _nan_minmax(min, np.inf)


def nanmean(x, axis=None, dtype=None, keepdims=False):
    if not _is_float(x):
        return mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = _mean_dtype(x, dtype)
    acc = _acc(dt)
    total = S.reduce_sum(cast(_nan_to(x, 0), acc), axes)
    n = S.reduce_sum(cast(B.eq(x, x), acc), axes)
    return _keep(cast(B.div(total, n), dt), axes, keepdims, s)


# ---- weighted mean, comparisons of whole arrays ------------------------------------------------

def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The (weighted) mean. 1-d weights apply along `axis`, as in NumPy."""
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if returned:
            s = shape(a)
            n = _count(s, normalize_axes(axis, len(s)))
            return avg, B.full_like(avg, n)
        return avg
    s, ws = shape(a), shape(weights)
    dt = result_type(a, weights)
    if kind(dt) != "f":
        dt = np.result_type(dt, np.float64)
    if s != ws:
        if axis is None:
            raise XlapyError("average: axis must be given when the shapes of a and weights "
                             f"differ ({list(s)} and {list(ws)})")
        if len(ws) != 1:
            raise XlapyError("average: 1-d weights expected when the shapes of a and weights "
                             f"differ ({list(s)} and {list(ws)})")
        ax = normalize_axis(axis, len(s))
        if ws[0] != s[ax]:
            raise XlapyError(f"average: the length of weights ({ws[0]}) differs from that "
                             f"of a along axis {ax} ({s[ax]})")
        weights = B.broadcast_in_dim(cast(weights, dt), s, (ax,))
    a, w = promote_and_broadcast(a, weights, dtype=dt)
    from xlapy.numpy._ufuncs import multiply, true_divide
    scl = sum(w, axis=axis, keepdims=keepdims)
    avg = true_divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    from xlapy.numpy._ufuncs import isclose
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    if shape(a1) != shape(a2):
        return np.asarray(False)
    from xlapy.numpy._ufuncs import equal, isnan, logical_and, logical_or
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


__all__ = ["sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any", "count_nonzero",
           "argmax", "argmin", "var", "std", "ptp", "logsumexp", "nansum", "nanmax", "nanmin",
           "nanmean", "average", "allclose", "array_equal"]
