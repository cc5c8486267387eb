"""NumPy functions with data-dependent output sizes, made jittable as JAX does (a static
`size=` with padding), and a few more that JAX programs use: isscalar, nonzero,
flatnonzero, argwhere, where(cond), unique, searchsorted, digitize, bincount, histogram,
interp, polyval, kron, cov, corrcoef, isin, setdiff1d, union1d, intersect1d.

Without `size=` these need concrete inputs (eagerly they are, under jit an error names the
argument and says to pass size=); with it the result has exactly `size` entries: the first
ones, then `fill_value` (nonzero and friends: 0 by default; unique: its smallest value).
Index results have xlapy.numpy's default integer type.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer, concrete_or_error
from xlapy.numpy._core import asarray, dtype_of, ndim, shape
from xlapy.numpy._creation import arange, full, zeros
from xlapy.numpy._reductions import any as any_, max as max_, min as min_, sum as sum_
from xlapy.numpy._shape_ops import concatenate, ravel, reshape, stack


def _np():
    import xlapy.numpy as xnp
    return xnp


def _int():
    """xlapy.numpy's default integer type (what arange gives)."""
    from xlapy.frontend.core import get_aval
    return get_aval(arange(1)).dtype


_SIZE_HINT = ("pass a static size= (and fill_value=) to get a fixed-size result, as in JAX")


def isscalar(element) -> bool:
    """True for Python scalars, NumPy scalars and 0-d arrays (traced ones included)."""
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    if isinstance(element, (np.ndarray, Tracer)):
        return ndim(element) == 0
    return False


# ---- nonzero and friends ---------------------------------------------------------------------

def _compact(mask, size: int):
    """The positions of the first `size` True entries of a 1-d bool array, and whether each
    is real (the rest are padding)."""
    xnp = _np()
    n = shape(mask)[0]
    iota = arange(n, dtype=_int())
    key = xnp.where(mask, iota, iota + n)          # true entries first, in order
    key = xnp.sort(key)
    if size > n:
        key = concatenate([key, full((size - n,), 2 * n, dtype=_int())])
    key = key[:size]
    valid = key < n
    return xnp.where(valid, key, 0), valid


def _concrete_size(x, what):
    if isinstance(x, Tracer):
        raise x._concrete_error(f"{what} without size=: {_SIZE_HINT}")
    return x


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dimension."""
    xnp = _np()
    a = asarray(a)
    nd = ndim(a)
    if nd == 0:
        raise XlapyError("nonzero is not defined for 0-d arrays (use atleast_1d)")
    flat = ravel(a) != 0
    if size is None:
        flat = _concrete_size(flat, "nonzero")
        size = int(np.sum(np.asarray(flat)))
    size = int(concrete_or_error(size, "the size argument of nonzero"))
    pos, valid = _compact(flat, size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * nd
    if len(fills) != nd:
        raise XlapyError(f"nonzero: fill_value has {len(fills)} entries for an array of "
                         f"{nd} dimensions")
    out, rest = [], pos
    dims = shape(a)
    for d in range(nd):
        stride = math.prod(dims[d + 1:])
        coord = (rest // stride) % dims[d] if stride else rest
        fill = 0 if fills[d] is None else fills[d]
        out.append(xnp.where(valid, coord, np.asarray(fill, _int())).astype(_int()))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one row per element."""
    a = asarray(a)
    if ndim(a) == 0:
        a = reshape(a, (1,))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """where(c, x, y) elementwise, or where(c) = nonzero(c) (size= for jit)."""
    from xlapy.numpy._ufuncs import where as where3
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise XlapyError("where: give both x and y, or neither")
    return where3(condition, x, y)


# ---- unique and sets ------------------------------------------------------------------------

def _sorted_mask(x, equal_nan=True):
    xnp = _np()
    perm = xnp.argsort(x, stable=True).astype(_int())
    s = x[perm]
    if shape(s)[0] == 0:
        return s, zeros((0,), dtype=bool), perm
    neq = s[1:] != s[:-1]
    if equal_nan and np.dtype(dtype_of(s)).kind == "f":
        neq = neq & ~(xnp.isnan(s[1:]) & xnp.isnan(s[:-1]))
    return s, concatenate([np.ones((1,), bool), neq]), perm


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique values of the flattened array (axis=None), with the first
    indices, the inverse (of ar's shape) and the counts on request."""
    xnp = _np()
    if axis is not None:
        raise XlapyError("unique: only axis=None is supported by xlapy")
    ar = asarray(ar)
    arr_shape = shape(ar)
    x = ravel(ar)
    n = shape(x)[0]
    if size is None:
        _concrete_size(x, "unique")
    s, mask, perm = _sorted_mask(x, equal_nan)
    if size is None:
        size = int(np.sum(np.asarray(mask)))
    size = int(concrete_or_error(size, "the size argument of unique"))
    if n == 0 and size and fill_value is None:
        raise XlapyError("unique: for a zero-sized input with nonzero size, give fill_value")
    if n:
        ind, valid = _compact(mask, size)
        result = s[ind]
        if fill_value is not None:
            result = xnp.where(valid, result, np.asarray(fill_value).astype(dtype_of(result)))
    else:
        ind, valid = zeros((size,), dtype=_int()), zeros((size,), dtype=bool)
        result = full((size,), fill_value if fill_value is not None else 0, dtype=dtype_of(x))
    ret = [result]
    if return_index:
        ret.append(perm[ind] if n else zeros((size,), dtype=_int()))
    if return_inverse:
        if n:
            imask = (xnp.cumsum(mask) - 1).astype(_int())
            inv = xnp.at(zeros((n,), dtype=_int()))[perm].set(imask)
        else:
            inv = zeros((0,), dtype=_int())
        ret.append(reshape(inv, arr_shape))
    if return_counts:
        if n:
            # starts of the runs of equal values, then n: padded entries count 0
            starts, real = _compact(mask, size + 1)
            starts = xnp.where(real, starts, n)
            ret.append(xnp.diff(starts).astype(_int()))
        else:
            ret.append(zeros((size,), dtype=_int()))
    return ret[0] if len(ret) == 1 else tuple(ret)


def isin(element, test_elements, assume_unique=False, invert=False):
    """Whether each element is in test_elements."""
    xnp = _np()
    element, test = asarray(element), ravel(asarray(test_elements))
    hit = any_(xnp.expand_dims(element, -1) == test, axis=-1) if shape(test)[0] else \
        xnp.zeros(shape(element), bool)
    return ~hit if invert else hit


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2."""
    xnp = _np()
    a = ravel(asarray(ar1))
    if not assume_unique:
        if size is None:
            a = unique(a)
        else:
            a = unique(a, size=shape(a)[0], fill_value=None)
    keep = ~isin(a, ar2)
    if not assume_unique and size is not None:
        n_unique = sum_(_sorted_mask(ravel(asarray(ar1)))[1])
        keep = keep & (xnp.arange(shape(a)[0]) < n_unique)
    if size is None:
        keep = _concrete_size(keep, "setdiff1d")
        return a[np.asarray(keep)]
    pos, valid = _compact(keep, int(size))
    out = a[pos]
    fill = fill_value if fill_value is not None else (min_(a) if shape(a)[0] else 0)
    return xnp.where(valid, out, asarray(fill).astype(dtype_of(a)))


def union1d(ar1, ar2, *, size=None, fill_value=None):
    return unique(concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]), size=size,
                  fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in both arrays."""
    xnp = _np()
    a = ravel(asarray(ar1))
    if size is None:
        a = unique(a) if not assume_unique else a
        keep = _concrete_size(isin(a, ar2), "intersect1d")
        return a[np.asarray(keep)]
    u = unique(a, size=shape(a)[0])
    n_unique = sum_(_sorted_mask(a)[1])
    keep = isin(u, ar2) & (xnp.arange(shape(u)[0]) < n_unique)
    pos, valid = _compact(keep, int(size))
    fill = fill_value if fill_value is not None else (min_(a) if shape(a)[0] else 0)
    return xnp.where(valid, u[pos], asarray(fill).astype(dtype_of(u)))


# ---- sorted search --------------------------------------------------------------------------

def _lt(x, y):
    """x < y with NaN sorting last (as sort orders them)."""
    xnp = _np()
    if np.dtype(dtype_of(x)).kind != "f" and np.dtype(dtype_of(y)).kind != "f":
        return x < y
    return (x < y) | (xnp.isnan(y) & ~xnp.isnan(x))


def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """Insertion points of v into the sorted 1-d array a: the number of elements of a
    below v (side='left') or not above it ('right'). (method is accepted and ignored: the
    points are computed by comparing v with every element of a.)"""
    xnp = _np()
    if side not in ("left", "right"):
        raise XlapyError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = asarray(a), asarray(v)
    if ndim(a) != 1:
        raise XlapyError(f"searchsorted: a must be 1-dimensional, got shape {shape(a)}")
    if sorter is not None:
        a = a[asarray(sorter)]
    dt = xnp.result_type(a, v)
    a, v = a.astype(dt), v.astype(dt)
    ve = xnp.expand_dims(v, -1)
    below = _lt(a, ve) if side == "left" else ~_lt(ve, a)
    return sum_(below, axis=-1).astype(_int())


def digitize(x, bins, right=False):
    """The bin index of each x (bins increasing or decreasing)."""
    xnp = _np()
    x, bins = asarray(x), asarray(bins)
    if ndim(bins) != 1:
        raise XlapyError(f"digitize: bins must be 1-dimensional, got shape {shape(bins)}")
    if shape(bins)[0] == 0:
        return xnp.zeros(shape(x), dtype=_int())
    side = "left" if right else "right"
    increasing = bins[-1] >= bins[0]
    up = searchsorted(bins, x, side=side)
    down = shape(bins)[0] - searchsorted(bins[::-1], x, side=side)
    return xnp.where(increasing, up, down).astype(_int())


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or weight sums) of the non-negative integers in x, `length` of them (under
    jit length is required; values at or beyond it are dropped)."""
    xnp = _np()
    x = asarray(x)
    if np.dtype(dtype_of(x)).kind not in "iub":
        raise XlapyError(f"bincount: x must be integers, got {np.dtype(dtype_of(x))}")
    if length is None:
        x = _concrete_size(x, "bincount (length=)")
        length = max(int(np.max(np.asarray(x))) + 1 if np.size(x) else 0, int(minlength))
    length = int(concrete_or_error(length, "the length argument of bincount"))
    if weights is None:
        values = xnp.ones(shape(x), dtype=_int())
        out = zeros((length,), dtype=_int())
    else:
        values = asarray(weights)
        out = zeros((length,), dtype=dtype_of(values))
    idx = xnp.where(x < 0, length, x)    # negative values are dropped too
    return xnp.at(out)[ravel(idx)].add(ravel(values))


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts of a in `bins` equal bins over `range` (default: a's min and max), or in the
    bins given by their edges. Returns (hist, bin_edges)."""
    xnp = _np()
    a = ravel(asarray(a))
    if isinstance(bins, int):
        lo, hi = (min_(a), max_(a)) if range is None else range
        lo, hi = asarray(lo), asarray(hi)
        dt = xnp.result_type(a, np.float16)
        lo, hi = lo.astype(dt), xnp.where(hi == lo, hi + 1, hi).astype(dt)
        steps = xnp.arange(bins + 1).astype(dt)
        edges = xnp.where(steps == bins, hi, lo + steps * ((hi - lo) / bins))
    else:
        edges = asarray(bins)
    nb = shape(edges)[0] - 1
    idx = searchsorted(edges, a, side="right") - 1
    idx = xnp.where(a == edges[-1], nb - 1, idx)              # the last bin is closed
    idx = xnp.where((idx < 0) | (idx >= nb), nb, idx)         # outside: dropped
    counts = bincount(idx, weights, length=nb)
    if density:
        counts = counts / (sum_(counts) * xnp.diff(edges))
    return counts, edges


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x (xp increasing)."""
    xnp = _np()
    if period is not None:
        raise XlapyError("interp: period= is not supported by xlapy")
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    dt = xnp.result_type(x, xp, fp, np.float16)
    x, xp, fp = x.astype(dt), xp.astype(dt), fp.astype(dt)
    i = xnp.clip(searchsorted(xp, x, side="right"), 1, shape(xp)[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    eps = np.finfo(dt).eps
    dx0 = xnp.abs(dx) <= eps
    f = xnp.where(dx0, fp[i], fp[i - 1] + (delta / xnp.where(dx0, 1, dx)) * df)
    f = xnp.where(x < xp[0], fp[0] if left is None else left, f)
    return xnp.where(x > xp[-1], fp[-1] if right is None else right, f)


def polyval(p, x):
    """The polynomial with coefficients p (highest degree first) at x (Horner)."""
    p, x = asarray(p), asarray(x)
    y = _np().zeros_like(x * p[0]) if shape(p)[0] else _np().zeros_like(x)
    for k in builtins.range(shape(p)[0]):
        y = y * x + p[k]
    return y


def kron(a, b):
    """The Kronecker product."""
    xnp = _np()
    a, b = asarray(a), asarray(b)
    nd = max(ndim(a), ndim(b))
    a = reshape(a, (1,) * (nd - ndim(a)) + shape(a))
    b = reshape(b, (1,) * (nd - ndim(b)) + shape(b))
    out = xnp.expand_dims(a, tuple(2 * i + 1 for i in builtins.range(nd))) * \
        xnp.expand_dims(b, tuple(2 * i for i in builtins.range(nd)))
    return reshape(out, tuple(sa * sb for sa, sb in zip(shape(a), shape(b))))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables (rows when rowvar)."""
    xnp = _np()
    if fweights is not None or aweights is not None:
        raise XlapyError("cov: fweights/aweights are not supported by xlapy")
    x = xnp.atleast_2d(asarray(m))
    if not rowvar and shape(x)[0] != 1:
        x = x.T
    if y is not None:
        y = xnp.atleast_2d(asarray(y))
        if not rowvar and shape(y)[0] != 1:
            y = y.T
        x = concatenate([x, y], axis=0)
    dt = xnp.result_type(x, np.float16)
    x = x.astype(dt if np.dtype(dt).itemsize >= 4 else np.float32)
    n = shape(x)[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    x = x - xnp.mean(x, axis=1, keepdims=True)
    c = xnp.matmul(x, xnp.conj(x).T) / (n - ddof)
    return xnp.squeeze(c)


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (clipped to [-1, 1])."""
    xnp = _np()
    c = cov(x, y, rowvar)
    if ndim(c) == 0:
        return c / c
    d = xnp.diag(c)
    std = xnp.sqrt(d)
    c = c / std[:, None] / std[None, :]
    return xnp.clip(c, -1, 1)


__all__ = ["isscalar", "nonzero", "flatnonzero", "argwhere", "where", "unique", "isin",
           "setdiff1d", "union1d", "intersect1d", "searchsorted", "digitize", "bincount",
           "histogram", "interp", "polyval", "kron", "cov", "corrcoef"]
