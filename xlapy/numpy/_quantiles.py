"""Order statistics and the NaN-ignoring reductions NumPy has: quantile, percentile, median
and their nan- forms (methods linear, lower, higher, midpoint, nearest; values as JAX's),
nanvar, nanstd, nanprod, nancumsum, nancumprod, nanargmax, nanargmin.

A quantile sorts along the reduced axes (moved last and flattened; NaNs sort last), takes
the two order statistics around q (n - 1) with n the count of values (of non-NaN values for
the nan- forms) and interpolates between them. A slice holding a NaN gives NaN (NumPy);
the nan- forms give NaN for a slice of NaNs only."""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.numpy._advanced import take_along_axis
from xlapy.numpy._core import asarray, cast, normalize_axis, shape
from xlapy.numpy._reductions import all as all_
from xlapy.numpy._reductions import argmax, argmin, nanmean, prod, sum
from xlapy.numpy._shape_ops import expand_dims, moveaxis, reshape
from xlapy.numpy._sorting import cumprod, cumsum, sort
from xlapy.numpy._ufuncs import ceil, clip, floor, isnan, sqrt, where

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _float_of(a):
    dt = np.dtype(a.dtype)
    return a if dt.kind in "fc" else cast(a, np.float32 if dt.itemsize < 8 else np.float64)


def _axes(axis, nd) -> tuple:
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(sorted({normalize_axis(int(a), nd) for a in axes}))
    if len(out) != len(axes):
        raise XlapyError(f"repeated axis in {axis!r}")
    return out


def _to_last(a, axes):
    """a with the reduced axes moved last and flattened into one."""
    nd = len(shape(a))
    keep = [d for d in range(nd) if d not in axes]
    a = moveaxis(a, list(axes), list(range(nd - len(axes), nd)))
    rest = tuple(shape(a)[:len(keep)])
    return reshape(a, rest + (math.prod(shape(a)[len(keep):]),))


def _quantile(a, q, axis, method, keepdims, ignore_nan, name):
    """The quantile, compiled once per signature (eagerly too: one program, not an op at a
    time)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return _jitted()(a, q, axis, method, keepdims, ignore_nan, name)


def _quantile_traced(a, q, axis, method, keepdims, ignore_nan, name):
    if method not in _METHODS:
        raise XlapyError(f"{name}: method must be one of {', '.join(_METHODS)}, got "
                         f"{method!r}")
    a = _float_of(asarray(a))
    q = cast(asarray(q), a.dtype)
    nd = len(shape(a))
    axes = _axes(axis, nd)
    flat = _to_last(a, axes)
    rest, n = tuple(shape(flat)[:-1]), shape(flat)[-1]
    if n == 0:
        raise XlapyError(f"{name}: cannot take a quantile of an empty slice")
    s = sort(flat, axis=-1)
    if ignore_nan:
        count = sum(cast(~isnan(flat), a.dtype), axis=-1)
    else:
        count = np.asarray(n, a.dtype)
    qs = tuple(shape(q))
    qb = reshape(q, qs + (1,) * len(rest))
    pos = qb * (count - 1.0)
    lo_f, hi_f = floor(pos), ceil(pos)
    last = np.asarray(n - 1, a.dtype)
    lo = cast(clip(lo_f, 0.0, last), np.int32)
    hi = cast(clip(hi_f, 0.0, last), np.int32)
    sb = s if not qs else reshape(s, (1,) * len(qs) + rest + (n,)) + \
        np.zeros(qs + rest + (n,), a.dtype)
    vlo = take_along_axis(sb, expand_dims(lo, -1), axis=-1)[..., 0]
    vhi = take_along_axis(sb, expand_dims(hi, -1), axis=-1)[..., 0]
    if method == "linear":
        t = pos - lo_f
        out = vlo + (vhi - vlo) * t
        out = where(t == 0.0, vlo, out)  # exact at order statistics (inf stays inf)
    elif method == "lower":
        out = vlo
    elif method == "higher":
        out = vhi
    elif method == "midpoint":
        out = where(lo == hi, vlo, (vlo + vhi) * 0.5)
    else:  # nearest: a tie takes the lower order statistic, as JAX (NumPy: the even one)
        out = where(pos - lo_f > 0.5, vhi, vlo)
    bad = (count == 0.0) if ignore_nan else isnan(s[..., -1])
    bad = reshape(bad, (1,) * len(qs) + tuple(shape(bad))) if qs else bad
    out = where(bad, np.asarray(np.nan, a.dtype), out)
    if keepdims:
        kept = tuple(1 if d in axes else shape(a)[d] for d in range(nd))
        out = reshape(out, qs + kept)
    return out


_quantile_jit = None


def _jitted():
    """_quantile_traced under jit, made on first use: importing xlapy.frontend.jit is about
    10 ms that a process tracing other functions (a TF 1.x cluster's compile) need not pay."""
    global _quantile_jit
    if _quantile_jit is None:
        from xlapy.frontend.jit import jit
        _quantile_jit = jit(_quantile_traced, static_argnums=(2, 3, 4, 5, 6))
    return _quantile_jit


def _check_q(q, hi, name):
    try:
        qv = np.asarray(q, np.float64)
    except Exception:
        return
    if np.any(qv < 0) or np.any(qv > hi):
        raise XlapyError(f"{name}: q must be in [0, {hi:g}], got {q!r}")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False):
    _no_out(out, "quantile")
    _check_q(q, 1, "quantile")
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    _no_out(out, "nanquantile")
    _check_q(q, 1, "nanquantile")
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False):
    _no_out(out, "percentile")
    _check_q(q, 100, "percentile")
    return _quantile(a, asarray(q) / 100.0, axis, method, keepdims, False, "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    _no_out(out, "nanpercentile")
    _check_q(q, 100, "nanpercentile")
    return _quantile(a, asarray(q) / 100.0, axis, method, keepdims, True, "nanpercentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out(out, "median")
    return _quantile(a, 0.5, axis, "linear", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out(out, "nanmedian")
    return _quantile(a, 0.5, axis, "linear", keepdims, True, "nanmedian")


def _no_out(out, name):
    if out is not None:
        raise XlapyError(f"{name}: out= is not supported (xlapy arrays are immutable)")


# ---- NaN-ignoring reductions ------------------------------------------------------------------

def _zeroed(a, fill):
    a = asarray(a)
    return where(isnan(a), np.asarray(fill, a.dtype), a) if np.dtype(a.dtype).kind in "fc" \
        else a


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    _no_out(out, "nanvar")
    a = _float_of(asarray(a)) if dtype is None else cast(asarray(a), dtype)
    valid = ~isnan(a)
    n = sum(cast(valid, a.dtype), axis=axis, keepdims=True)
    mu = nanmean(a, axis=axis, keepdims=True)
    d = where(valid, a - mu, np.asarray(0, a.dtype))
    dof = n - ddof
    v = sum(d * d, axis=axis, keepdims=True) / where(dof > 0, dof, np.asarray(1, a.dtype))
    v = where(dof > 0, v, np.asarray(np.nan, a.dtype))
    return v if keepdims else _squeeze(v, axis, len(shape(a)))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


def _squeeze(v, axis, nd):
    axes = _axes(axis, nd)
    return reshape(v, tuple(s for d, s in enumerate(shape(v)) if d not in axes))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out(out, "nanprod")
    return prod(_zeroed(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_zeroed(a, 0), axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_zeroed(a, 1), axis=axis, dtype=dtype, out=out)


def nanargmax(a, axis=None, keepdims=False):
    """argmax ignoring NaNs (-1 for a slice of NaNs, as JAX)."""
    return _nanarg(argmax, -np.inf, a, axis, keepdims)


def nanargmin(a, axis=None, keepdims=False):
    """argmin ignoring NaNs (-1 for a slice of NaNs, as JAX)."""
    return _nanarg(argmin, np.inf, a, axis, keepdims)


def _nanarg(fn, fill, a, axis, keepdims):
    a = asarray(a)
    if np.dtype(a.dtype).kind not in "fc":
        return fn(a, axis=axis, keepdims=keepdims)
    nan = isnan(a)
    idx = fn(where(nan, np.asarray(fill, a.dtype), a), axis=axis, keepdims=keepdims)
    every = all_(nan, axis=axis, keepdims=keepdims)
    return where(every, np.asarray(-1, idx.dtype), idx)


__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian",
           "nanvar", "nanstd", "nanprod", "nancumsum", "nancumprod", "nanargmax", "nanargmin"]
