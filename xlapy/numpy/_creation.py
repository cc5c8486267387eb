"""Array creation: zeros, ones, full, *_like, arange, linspace, logspace, eye, tri, meshgrid,
array. Sizes are static (Python values); inside jit the values are computed by the
program (iota, broadcast), not captured as constants.

Default dtypes are JAX's: float32 / int32 with jax_enable_x64 off (the default), float64 /
int64 with it on (NumPy's). An explicit 64-bit dtype with x64 off is truncated with JAX's
warning."""

from __future__ import annotations

import numpy as np

from xlapy.frontend.array import as_result
from xlapy.errors import XlapyError
from xlapy.config import x64_enabled
from xlapy.frontend.core import Tracer, TracerError, concrete_shape
from xlapy.frontend.dtypes import canonicalize_dtype, default_float, default_int, explicit
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import cast, dtype_of
from xlapy.numpy._core import shape as _shape_of


def _as_shape(s, what="shape") -> tuple:
    return concrete_shape(s, what)


def _default(dtype, where: str, default=None) -> np.dtype:
    dt = explicit(dtype, where)
    return dt if dt is not None else (default or default_float())


def _fill_dtype(fill_value) -> np.dtype:
    if isinstance(fill_value, Tracer):
        return fill_value.dtype
    if isinstance(fill_value, bool):
        return np.dtype(np.bool_)
    if isinstance(fill_value, int):
        return default_int()
    if isinstance(fill_value, float):
        return default_float()
    return canonicalize_dtype(np.asarray(fill_value).dtype)


def full(shape, fill_value, dtype=None):
    dt = explicit(dtype, "full")
    dt = dt if dt is not None else _fill_dtype(fill_value)
    shape = _as_shape(shape)
    if isinstance(fill_value, Tracer) or np.ndim(fill_value) != 0:
        from xlapy.numpy._core import asarray, broadcast_to
        return broadcast_to(cast(asarray(fill_value), dt), shape)
    return B.full(shape, fill_value, dt)


def zeros(shape, dtype=None):
    return B.full(_as_shape(shape), 0, _default(dtype, "zeros"))


def ones(shape, dtype=None):
    return B.full(_as_shape(shape), 1, _default(dtype, "ones"))


def empty(shape, dtype=None):
    """Zeros (xlapy has no uninitialized memory)."""
    return B.full(_as_shape(shape), 0, _default(dtype, "empty"))


def full_like(x, fill_value, dtype=None):
    dt = explicit(dtype, "full_like")
    return full(_shape_of(x), fill_value, dt if dt is not None else dtype_of(x))


def zeros_like(x, dtype=None):
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None):
    return full_like(x, 1, dtype)


def arange(start, stop=None, step=1, dtype=None):
    dtype = explicit(dtype, "arange")
    if stop is None:
        start, stop = 0, start
    names = ("start", "stop", "step")
    start, stop, step = (_concrete_number(v, n) for v, n in zip((start, stop, step), names))
    ref = np.arange(start, stop, step, dtype=dtype)
    if dtype is None:
        ref = ref.astype(canonicalize_dtype(ref.dtype))
    n = ref.shape[0]
    if n == 0:
        return as_result(ref)
    dt = ref.dtype
    idx = S.iota(dt if dt.kind in "iuf" else np.int64, (n,), 0)
    if start == 0 and step == 1:
        return cast(idx, dt)
    idx = cast(idx, dt)
    return B.add(B.mul(idx, B.full_like(idx, step)), B.full_like(idx, start))


def _concrete_number(v, name):
    if isinstance(v, Tracer):
        c = v.to_concrete()
        if c is None or c.shape != ():
            where = f" The value depends on {v.origin}." if v.origin else ""
            raise TracerError(f"arange needs concrete (Python or NumPy) start/stop/step, but "
                              f"its argument '{name}' is a traced array {v.aval}: the result's "
                              f"length must be known when tracing.{where} Mark the jit "
                              "argument static (static_argnums / static_argnames)")
        v = c[()]
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise XlapyError("arange needs concrete (Python or NumPy) start/stop/step; the "
                         "result's length must be known when tracing")
    return v


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    num = concrete_shape(num, "linspace's num")[0]
    if num < 0:
        raise XlapyError("number of samples in linspace must be non-negative")
    dt = _default(dtype, "linspace")
    if num == 0:
        return as_result(np.zeros((0,), dt))
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div else 0.0
    wide = np.float64 if x64_enabled() else np.float32
    idx = cast(S.iota(wide, (num,), 0), wide)
    r = B.add(B.mul(idx, B.full_like(idx, step)), B.full_like(idx, start))
    if endpoint and num > 1:
        last = B.full_like(idx, stop)
        r = B.select(B.eq(idx, B.full_like(idx, num - 1)), last, r)
    return cast(r, dt)


def _diagonal_mask(name, N, M, k, dtype, compare):
    """compare(row + k, col) over an N x M grid (M defaults to N), cast to dtype."""
    dtype = _default(dtype, name)
    N = _as_shape(N, f"{name}'s N")[0]
    M = N if M is None else _as_shape(M, f"{name}'s M")[0]
    rows = S.iota(np.int64, (N, M), 0)
    cols = S.iota(np.int64, (N, M), 1)
    return cast(compare(B.add(rows, B.full_like(rows, k)), cols), dtype)


def eye(N, M=None, k=0, dtype=None):
    return _diagonal_mask("eye", N, M, k, dtype, B.eq)


def identity(n, dtype=None):
    return eye(n, dtype=_default(dtype, "identity"))


def empty_like(x, dtype=None):
    """Zeros (xlapy has no uninitialized memory)."""
    return zeros_like(x, dtype)


def tri(N, M=None, k=0, dtype=None):
    return _diagonal_mask("tri", N, M, k, dtype, B.ge)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None):
    dtype = explicit(dtype, "logspace")
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
    x = asarray(obj, dtype, _where="array")
    if not isinstance(x, Tracer):
        x = as_result(np.array(x, copy=True))
    s = _shape_of(x)
    if len(s) < ndmin:
        x = S.reshape(x, (1,) * (ndmin - len(s)) + tuple(s))
    return x


def copy(x):
    return array(x)
