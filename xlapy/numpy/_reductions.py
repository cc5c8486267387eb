"""Reductions with NumPy's axis / keepdims / dtype semantics."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import cast, dtype_of, float_dtype_for, normalize_axes, shape


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


def sum(x, axis=None, dtype=None, keepdims=False):  # noqa: A001
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    x = cast(x, dtype if dtype is not None else _sum_dtype(dtype_of(x)))
    return _keep(S.reduce_sum(x, axes), axes, keepdims, s)


def prod(x, axis=None, dtype=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    x = cast(x, dtype if dtype is not None else _sum_dtype(dtype_of(x)))
    return _keep(S.reduce_prod(x, axes), axes, keepdims, s)


def _count(s, axes) -> int:
    n = 1
    for a in axes:
        n *= s[a]
    return n


def mean(x, axis=None, dtype=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    dt = np.dtype(dtype) if dtype is not None else float_dtype_for(dtype_of(x))
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    if np.dtype(dtype_of(x)).kind in "biu" and dtype is None:
        dt = np.dtype(np.float64)
    total = S.reduce_sum(cast(x, dt), axes)
    r = B.div(total, B.full_like(total, _count(s, axes)))
    return _keep(r, axes, keepdims, s)


def _minmax(prim_reduce, name):
    def f(x, axis=None, keepdims=False, initial=None):
        s = shape(x)
        axes = normalize_axes(axis, len(s))
        if _count(s, axes) == 0 and initial is None:
            raise XlapyError(f"zero-size array to reduction operation {name} which has no identity")
        r = prim_reduce(x, axes)
        if initial is not None:
            from xlapy.numpy._ufuncs import maximum, minimum
            r = (maximum if name == "max" else minimum)(r, initial)
        return _keep(r, axes, keepdims, s)
    return f


max = _minmax(S.reduce_max, "max")  # noqa: A001
min = _minmax(S.reduce_min, "min")  # noqa: A001
amax, amin = max, min


def all(x, axis=None, keepdims=False):  # noqa: A001
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    return _keep(S.reduce_and(cast(x, np.bool_), axes), axes, keepdims, s)


def any(x, axis=None, keepdims=False):  # noqa: A001
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    return _keep(S.reduce_or(cast(x, np.bool_), axes), axes, keepdims, s)


def _arg(prim, name):
    def f(x, axis=None, keepdims=False):
        s = shape(x)
        if axis is None:
            x = S.reshape(x, (int(np.prod(s, dtype=np.int64)),))
            r = prim(x, 0, np.int64)
            return S.reshape(r, (1,) * len(s)) if keepdims else r
        ax = normalize_axes(axis, len(s))[0]
        if s[ax] == 0:
            raise XlapyError(f"attempt to get {name} of an empty sequence")
        r = prim(x, ax, np.int64)
        return _keep(r, (ax,), keepdims, s)
    return f


argmax = _arg(S.argmax, "argmax")
argmin = _arg(S.argmin, "argmin")


def var(x, axis=None, dtype=None, ddof=0, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    m = mean(x, axis=axes, dtype=dtype, keepdims=True)
    xf = cast(x, dtype_of(m))
    d = B.sub(xf, B.broadcast_in_dim(m, s, tuple(range(len(s)))))
    ss = S.reduce_sum(B.mul(d, d), axes)
    n = _count(s, axes) - ddof
    r = B.div(ss, B.full_like(ss, n))
    return _keep(r, axes, keepdims, s)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    return B.sqrt(var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def logsumexp(x, axis=None, keepdims=False):
    s = shape(x)
    axes = normalize_axes(axis, len(s))
    x = cast(x, float_dtype_for(dtype_of(x)))
    m = S.reduce_max(x, axes)
    finite_m = B.select(B.is_finite(m), m, B.zeros_like(m))
    kept = [i for i in range(len(s)) if i not in axes]
    shifted = B.sub(x, B.broadcast_in_dim(finite_m, s, kept))
    r = B.add(B.log(S.reduce_sum(B.exp(shifted), axes)), finite_m)
    return _keep(r, axes, keepdims, s)
