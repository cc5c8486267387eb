"""Array creation: zeros, ones, full, *_like, arange, linspace, eye, astype."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import cast, dtype_of, shape


def _shape(s) -> tuple:
    if isinstance(s, (int, np.integer)):
        return (int(s),)
    return tuple(int(d) for d in s)


def full(shape_, fill_value, dtype=None):
    dt = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
    return B.full(_shape(shape_), fill_value, dt)


def zeros(shape_, dtype=float):
    return full(shape_, 0, dtype)


def ones(shape_, dtype=float):
    return full(shape_, 1, dtype)


def empty(shape_, dtype=float):
    return zeros(shape_, dtype)


def full_like(x, fill_value, dtype=None):
    return full(shape(x), fill_value, dtype if dtype is not None else dtype_of(x))


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
