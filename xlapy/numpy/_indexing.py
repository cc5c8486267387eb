"""Indexing: x[ints, slices, None, ...] with static results.

Basic indexing (integers, slices with any step, None, Ellipsis) becomes slice / rev /
reshape. Advanced indexing (integer arrays, boolean masks) and `.at[...]` updates are in
_advanced.py (gather/scatter); a key mixing both is routed there.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, shape


def _is_basic_item(k) -> bool:
    return (k is None or k is Ellipsis or isinstance(k, slice)
            or (isinstance(k, (int, np.integer)) and not isinstance(k, bool)))


def normalize_key(key, nd: int) -> list:
    """The key as a list with Ellipsis expanded (None entries kept); boolean arrays count
    for as many dimensions as they have (the shared implementation in _advanced)."""
    from xlapy.numpy._advanced import normalize_key as _normalize
    return _normalize(key, nd)


def getitem(x, key):
    x = asarray(x)
    s = shape(x)
    items = normalize_key(key, len(s))
    if not all(_is_basic_item(k) for k in items):
        from xlapy.numpy._advanced import advanced_getitem
        return advanced_getitem(x, items)
    starts, limits, strides, flips, out_shape = [], [], [], [], []
    dim = 0
    for k in items:
        if k is None:
            out_shape.append(1)
            continue
        n = s[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step > 0:
                count = max(0, (stop - start + step - 1) // step)
                starts.append(start)
                limits.append(start + (count - 1) * step + 1 if count else start)
                strides.append(step)
            else:
                count = max(0, (start - stop - step - 1) // -step)
                # reversed: take the elements start, start+step, ... then flip
                lo = start + (count - 1) * step if count else 0
                starts.append(lo if count else 0)
                limits.append(start + 1 if count else 0)
                strides.append(-step)
                flips.append(dim)
            out_shape.append(count)
        else:
            i = int(k)
            if not -n <= i < n:
                raise XlapyError(f"index {i} is out of bounds for axis {dim} with size {n}")
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        dim += 1
    y = S.slice_(x, starts, limits, strides)
    if flips:
        y = S.rev(y, flips)
    return S.reshape(y, tuple(out_shape))
