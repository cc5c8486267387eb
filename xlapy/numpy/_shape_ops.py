"""Shape manipulation: reshape, transpose, swapaxes, expand_dims, squeeze, concatenate,
stack, split, flip, ravel, broadcast_to."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import (asarray, broadcast_to, normalize_axes, normalize_axis, promote,
                               shape)


def reshape(x, newshape, order="C"):
    if order != "C":
        raise XlapyError("only order='C' reshapes are supported")
    s = shape(x)
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    newshape = [int(d) for d in newshape]
    size = int(np.prod(s, dtype=np.int64))
    if newshape.count(-1) > 1:
        raise XlapyError("can only specify one unknown dimension (-1) in reshape")
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise XlapyError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
        newshape[newshape.index(-1)] = size // known
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise XlapyError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
    return S.reshape(asarray(x), tuple(newshape))


def ravel(x):
    return reshape(x, (-1,))


def transpose(x, axes=None):
    nd = len(shape(x))
    if axes is None:
        axes = tuple(range(nd - 1, -1, -1))
    axes = tuple(normalize_axis(a, nd) for a in axes)
    if sorted(axes) != list(range(nd)):
        raise XlapyError(f"axes {axes} don't match array of dimension {nd}")
    return S.transpose(asarray(x), axes)


def swapaxes(x, axis1, axis2):
    nd = len(shape(x))
    perm = list(range(nd))
    a, b = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    perm[a], perm[b] = perm[b], perm[a]
    return S.transpose(asarray(x), perm)


def moveaxis(x, source, destination):
    nd = len(shape(x))
    src = normalize_axes(source, nd)
    dst = normalize_axes(destination, nd)
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return S.transpose(asarray(x), order)


def expand_dims(x, axis):
    s = list(shape(x))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(s) + len(axes)
    for a in sorted(normalize_axes(axes, nd)):
        s.insert(a, 1)
    return S.reshape(asarray(x), tuple(s))


def squeeze(x, axis=None):
    s = shape(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = normalize_axes(axis, len(s))
        for a in axes:
            if s[a] != 1:
                raise XlapyError(f"cannot select an axis to squeeze out which has size not equal "
                                 f"to one (axis {a} has size {s[a]})")
    return S.reshape(asarray(x), tuple(d for i, d in enumerate(s) if i not in axes))


def concatenate(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise XlapyError("need at least one array to concatenate")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote(*[asarray(a) for a in arrays])
    nd = len(shape(arrays[0]))
    return S.concatenate(arrays, normalize_axis(axis, nd))


def stack(arrays, axis=0):
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise XlapyError("need at least one array to stack")
    s = shape(arrays[0])
    if any(shape(a) != s for a in arrays):
        raise XlapyError("all input arrays must have the same shape")
    ax = normalize_axis(axis, len(s) + 1)
    return concatenate([expand_dims(a, ax) for a in arrays], ax)


def vstack(arrays):
    return concatenate([a if len(shape(a)) >= 2 else reshape(a, (1, -1)) for a in arrays], 0)


def hstack(arrays):
    arrays = list(arrays)
    return concatenate(arrays, 0 if len(shape(arrays[0])) == 1 else 1)


def split(x, indices_or_sections, axis=0):
    s = shape(x)
    ax = normalize_axis(axis, len(s))
    n = s[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise XlapyError("array split does not result in an equal division")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [min(int(i), n) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        starts = [0] * len(s)
        limits = list(s)
        starts[ax], limits[ax] = lo, max(hi, lo)
        out.append(S.slice_(asarray(x), starts, limits))
    return out


def flip(x, axis=None):
    nd = len(shape(x))
    return S.rev(asarray(x), normalize_axes(axis, nd))


def fliplr(x):
    return flip(x, 1)


def flipud(x):
    return flip(x, 0)


__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "concatenate", "stack", "vstack", "hstack", "split", "flip", "fliplr", "flipud",
           "broadcast_to"]
