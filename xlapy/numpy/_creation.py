"""Array creation: zeros, ones, full, *_like, arange, linspace, logspace, eye, tri, meshgrid,
array. Sizes are static (Python values); inside jit the values are computed by the
program (iota, broadcast), not captured as constants."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import cast, dtype_of
from xlapy.numpy._core import shape as _shape_of


def _as_shape(s) -> tuple:
    if isinstance(s, (int, np.integer)):
        return (int(s),)
    return tuple(int(d) for d in s)


def full(shape, fill_value, dtype=None):
    dt = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
    return B.full(_as_shape(shape), fill_value, dt)


def zeros(shape, dtype=float):
    return full(shape, 0, dtype)


def ones(shape, dtype=float):
    return full(shape, 1, dtype)


def empty(shape, dtype=float):
    """Zeros (xlapy has no uninitialized memory)."""
    return zeros(shape, dtype)


def full_like(x, fill_value, dtype=None):
    return full(_shape_of(x), fill_value, dtype if dtype is not None else dtype_of(x))


def zeros_like(x, dtype=None):
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None):
    return full_like(x, 1, dtype)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, (int, float, np.integer, np.floating)):
            raise XlapyError("arange needs concrete (Python or NumPy) start/stop/step; the "
                             "result's length must be known when tracing")
    ref = np.arange(start, stop, step, dtype=dtype)
    n = ref.shape[0]
    if n == 0:
        return ref
    dt = ref.dtype
    idx = S.iota(dt if dt.kind in "iuf" else np.int64, (n,), 0)
    if start == 0 and step == 1:
        return cast(idx, dt)
    idx = cast(idx, dt)
    return B.add(B.mul(idx, B.full_like(idx, step)), B.full_like(idx, start))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    num = int(num)
    if num < 0:
        raise XlapyError("number of samples in linspace must be non-negative")
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    if num == 0:
        return np.zeros((0,), dt)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div else 0.0
    idx = cast(S.iota(np.float64, (num,), 0), np.float64)
    r = B.add(B.mul(idx, B.full_like(idx, step)), B.full_like(idx, start))
    if endpoint and num > 1:
        last = B.full_like(idx, stop)
        r = B.select(B.eq(idx, B.full_like(idx, num - 1)), last, r)
    return cast(r, dt)


def eye(N, M=None, k=0, dtype=float):
    M = N if M is None else M
    rows = S.iota(np.int64, (N, M), 0)
    cols = S.iota(np.int64, (N, M), 1)
    return cast(B.eq(B.add(rows, B.full_like(rows, k)), cols), dtype)


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def empty_like(x, dtype=None):
    """Zeros (xlapy has no uninitialized memory)."""
    return zeros_like(x, dtype)


def tri(N, M=None, k=0, dtype=float):
    M = N if M is None else M
    rows = S.iota(np.int64, (N, M), 0)
    cols = S.iota(np.int64, (N, M), 1)
    return cast(B.le(cols, B.add(rows, B.full_like(rows, k))), dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None):
    y = linspace(start, stop, num, endpoint=endpoint)
    r = B.pow_(B.full_like(y, base), y)
    return cast(r, dtype) if dtype is not None else r


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    from xlapy.numpy._core import asarray
    from xlapy.numpy._shape_ops import ravel
    if indexing not in ("xy", "ij"):
        raise XlapyError("meshgrid: indexing must be 'xy' or 'ij'")
    xs = [ravel(asarray(x)) for x in xi]
    nd = len(xs)
    sizes = [_shape_of(x)[0] for x in xs]
    dims = list(range(nd))
    if indexing == "xy" and nd > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        dims[0], dims[1] = 1, 0
    out = []
    for x, d in zip(xs, dims):
        if sparse:
            s = [1] * nd
            s[d] = _shape_of(x)[0]
            out.append(S.reshape(x, tuple(s)))
        else:
            out.append(B.broadcast_in_dim(x, tuple(sizes), (d,)))
    return out


def array(obj, dtype=None, copy=True, ndmin=0):
    from xlapy.numpy._core import asarray
    x = asarray(obj, dtype)
    if not isinstance(x, Tracer):
        x = np.array(x, copy=True)
    s = _shape_of(x)
    if len(s) < ndmin:
        x = S.reshape(x, (1,) * (ndmin - len(s)) + tuple(s))
    return x


def copy(x):
    return array(x)
