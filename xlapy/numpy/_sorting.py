"""sort, argsort, cumsum, cumprod with NumPy's signatures and dtype rules.

sort / argsort are always stable (NumPy's kind= is accepted and ignored; stable=False is
allowed but still stable). Floats order as NumPy: NaNs last. argsort returns int64 (intp).
cumsum / cumprod: axis=None flattens; the default dtype is NumPy's (bool and small ints
accumulate in int64 / uint64, floats keep their type).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.primitives import sorting as So
from xlapy.numpy._core import asarray, cast, dtype_of, normalize_axis, shape


def _prep(a, axis, name):
    a = asarray(a)
    if axis is None:
        a, axis = S.reshape(a, (math.prod(shape(a)),)), 0
    if len(shape(a)) == 0:
        raise XlapyError(f"{name}: cannot sort a 0-d array; use axis=None")
    return a, normalize_axis(axis, len(shape(a)))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """np.sort (stable; NaNs last)."""
    if order is not None:
        raise XlapyError("sort: order= (structured arrays) is not supported")
    a, axis = _prep(a, axis, "sort")
    return So.sort(a, axis, is_stable=True)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """np.argsort (stable; NaNs last); int64 indices."""
    if order is not None:
        raise XlapyError("argsort: order= (structured arrays) is not supported")
    a, axis = _prep(a, axis, "argsort")
    ids = S.iota(np.int64, shape(a), axis)
    return So.sort([a, ids], axis, is_stable=True, num_keys=1)[1]


def _cum(fn, np_fn, a, axis, dtype, out):
    if out is not None:
        raise XlapyError(f"{np_fn.__name__}: out= is not supported (xlapy arrays are immutable)")
    a = asarray(a)
    if axis is None:
        a, axis = S.reshape(a, (math.prod(shape(a)),)), 0
    nd = len(shape(a))
    if nd == 0:
        a, nd = S.reshape(a, (1,)), 1
    axis = normalize_axis(axis, nd)
    dt = np.dtype(dtype) if dtype is not None else np_fn(np.zeros(1, dtype_of(a))).dtype
    return fn(cast(a, dt), axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """np.cumsum: inclusive prefix sums along axis (flattened when axis is None)."""
    return _cum(So.cumsum, np.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """np.cumprod: inclusive prefix products along axis (flattened when axis is None)."""
    return _cum(So.cumprod, np.cumprod, a, axis, dtype, out)
