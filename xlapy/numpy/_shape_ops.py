"""Shape manipulation: reshape, transpose, swapaxes, expand_dims, squeeze, concatenate,
stack, split, flip, ravel, broadcast_to, repeat, tile, roll, diff, rot90, triu/tril,
diagonal/diag, atleast_*d. Every size must be static (known while tracing): repeats,
shifts, split points are Python values."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.numpy._core import (asarray, broadcast_to, dtype_of, normalize_axes, normalize_axis,
                               promote, shape)


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
    shapes = [shape(a) for a in arrays]
    nd = len(shapes[0])
    if nd == 0:
        raise XlapyError("zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, nd)
    if any(len(s) != nd or any(s[d] != shapes[0][d] for d in range(nd) if d != ax)
           for s in shapes):
        raise XlapyError(f"concatenate along axis {ax}: all dimensions except axis {ax} must "
                         f"match, got shapes {', '.join(str(list(s)) for s in shapes)}")
    return S.concatenate(arrays, ax)


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


def concat(arrays, axis=0):
    return concatenate(arrays, axis)


def permute_dims(x, axes=None):
    return transpose(x, axes)


def matrix_transpose(x):
    if len(shape(x)) < 2:
        raise XlapyError(f"matrix_transpose needs at least 2 dimensions, got shape "
                         f"{list(shape(x))}")
    return swapaxes(x, -1, -2)


def _static_ints(value, what):
    if isinstance(value, Tracer):
        raise XlapyError(f"{what} must be a static Python value (the result's shape depends "
                         "on it), not a traced array")
    return np.asarray(value).astype(np.int64)


def _slice_axis(x, ax, lo, hi):
    s = shape(x)
    starts, limits = [0] * len(s), list(s)
    starts[ax], limits[ax] = lo, hi
    return S.slice_(x, starts, limits)


def _repeat_each(x, ax, r):
    """Every element along ax repeated r times (a broadcast and a reshape)."""
    s = shape(x)
    wide = s[:ax + 1] + (r,) + s[ax + 1:]
    dims = tuple(range(ax + 1)) + tuple(range(ax + 2, len(s) + 1))
    y = B.broadcast_in_dim(x, wide, dims)
    return S.reshape(y, s[:ax] + (s[ax] * r,) + s[ax + 1:])


def repeat(x, repeats, axis=None):
    x = asarray(x)
    if axis is None:
        x, axis = ravel(x), 0
    s = shape(x)
    ax = normalize_axis(axis, len(s))
    reps = _static_ints(repeats, "repeat: repeats")
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(-1)[0])
        if r < 0:
            raise XlapyError("repeat: negative repeats are not allowed")
        return _repeat_each(x, ax, r)
    if reps.shape != (s[ax],):
        raise XlapyError(f"repeat: {reps.size} repeats for an axis of length {s[ax]}")
    if (reps < 0).any():
        raise XlapyError("repeat: negative repeats are not allowed")
    # one broadcast slice per run of equal counts
    parts, i = [], 0
    while i < s[ax]:
        j = i
        while j < s[ax] and reps[j] == reps[i]:
            j += 1
        if reps[i]:
            parts.append(_repeat_each(_slice_axis(x, ax, i, j), ax, int(reps[i])))
        i = j
    if not parts:
        return S.slice_(x, [0] * len(s), [d if k != ax else 0 for k, d in enumerate(s)])
    return S.concatenate(parts, ax)


def tile(x, reps):
    x = asarray(x)
    reps = tuple(int(r) for r in _static_ints(reps, "tile: reps").reshape(-1))
    s = shape(x)
    d = max(len(reps), len(s))
    s = (1,) * (d - len(s)) + s
    reps = (1,) * (d - len(reps)) + reps
    x = S.reshape(x, s)
    wide = tuple(v for r, n in zip(reps, s) for v in (r, n))
    y = B.broadcast_in_dim(x, wide, tuple(range(1, 2 * d, 2)))
    return S.reshape(y, tuple(r * n for r, n in zip(reps, s)))


def roll(x, shift, axis=None):
    x = asarray(x)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), shape(x))
    shifts = _static_ints(shift, "roll: shift").reshape(-1)
    axes = np.asarray(axis).reshape(-1)
    shifts, axes = np.broadcast_arrays(shifts, axes)
    s = shape(x)
    total = {}
    for sh, ax in zip(shifts, axes):
        a = normalize_axis(int(ax), len(s))
        total[a] = total.get(a, 0) + int(sh)
    for a, sh in total.items():
        n = s[a]
        if n == 0 or sh % n == 0:
            continue
        k = sh % n
        x = S.concatenate([_slice_axis(x, a, n - k, n), _slice_axis(x, a, 0, n - k)], a)
    return x


def diff(x, n=1, axis=-1, prepend=None, append=None):
    from xlapy.numpy._ufuncs import not_equal, subtract
    x = asarray(x)
    ax = normalize_axis(axis, len(shape(x)))
    if prepend is not None or append is not None:
        parts = []
        for extra in (prepend, x, append):
            if extra is None:
                continue
            if extra is not x and len(shape(extra)) == 0:
                s = list(shape(x))
                s[ax] = 1
                extra = broadcast_to(extra, s)
            parts.append(extra)
        x = concatenate(parts, ax)
    if n < 0:
        raise XlapyError(f"diff: order must be non-negative, got {n}")
    op = not_equal if np.dtype(dtype_of(x)) == np.bool_ else subtract
    for _ in range(n):
        m = shape(x)[ax]
        x = op(_slice_axis(x, ax, 1, max(m, 1)), _slice_axis(x, ax, 0, max(m - 1, 0)))
    return x


def _atleast(x, nd):
    x = asarray(x)
    s = shape(x)
    if len(s) >= nd:
        return x
    if nd == 3:
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]
    else:
        new = (1,) * (nd - len(s)) + s
    return S.reshape(x, new)


def atleast_1d(*arys):
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = [_atleast(a, 3) for a in arys]
    return out[0] if len(out) == 1 else out


def dstack(arrays):
    return concatenate([_atleast(a, 3) for a in arrays], 2)


def column_stack(arrays):
    cols = []
    for a in arrays:
        a = asarray(a)
        cols.append(reshape(a, (-1, 1)) if len(shape(a)) < 2 else a)
    return concatenate(cols, 1)


def array_split(x, indices_or_sections, axis=0):
    if isinstance(indices_or_sections, (int, np.integer)):
        s = shape(x)
        n = s[normalize_axis(axis, len(s))]
        k = int(indices_or_sections)
        if k <= 0:
            raise XlapyError("number of sections must be larger than 0")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        indices_or_sections = list(np.cumsum(sizes)[:-1])
    return split(x, indices_or_sections, axis)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    nd = len(shape(m))
    if len(axes) != 2:
        raise XlapyError("rot90: len(axes) must be 2")
    a0, a1 = normalize_axis(axes[0], nd), normalize_axis(axes[1], nd)
    if a0 == a1:
        raise XlapyError("rot90: axes must be different")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def _tri_mask(n, m, k, lower=True):
    rows = S.iota(np.int64, (n, m), 0)
    cols = S.iota(np.int64, (n, m), 1)
    shifted = B.add(rows, B.full_like(rows, k))
    return B.le(cols, shifted) if lower else B.ge(cols, shifted)


def _masked(m, k, lower):
    m = asarray(m)
    s = shape(m)
    if len(s) < 1:
        raise XlapyError("tril/triu need an array of at least 1 dimension")
    n, c = (s[-2], s[-1]) if len(s) >= 2 else (s[-1], s[-1])
    out_shape = s if len(s) >= 2 else (n, c)
    mask = B.broadcast_in_dim(_tri_mask(n, c, k, lower), out_shape,
                              (len(out_shape) - 2, len(out_shape) - 1))
    m = broadcast_to(m, out_shape)
    return B.select(mask, m, B.zeros_like(m))


def tril(m, k=0):
    return _masked(m, k, lower=True)


def triu(m, k=0):
    return _masked(m, k, lower=False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal as the last axis: strided slice of the flattened square block."""
    a = asarray(a)
    s = shape(a)
    nd = len(s)
    if nd < 2:
        raise XlapyError("diagonal requires an array of at least two dimensions")
    a1, a2 = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    if a1 == a2:
        raise XlapyError("diagonal: axis1 and axis2 cannot be the same")
    rest = [i for i in range(nd) if i not in (a1, a2)]
    x = S.transpose(a, rest + [a1, a2])
    n1, n2 = s[a1], s[a2]
    offset = int(offset)
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        r0, c0 = 0, offset
    else:
        length = max(0, min(n1 + offset, n2))
        r0, c0 = -offset, 0
    batch = tuple(s[i] for i in rest)
    nb = len(batch)
    x = S.slice_(x, [0] * nb + [min(r0, n1), min(c0, n2)],
                 list(batch) + [min(r0 + length, n1), min(c0 + length, n2)])
    if length == 0:
        return S.reshape(x, batch + (0,))
    flat = S.reshape(x, batch + (length * length,))
    return S.slice_(flat, [0] * (nb + 1), list(batch) + [length * length],
                    [1] * nb + [length + 1])


def diag(v, k=0):
    v = asarray(v)
    s = shape(v)
    if len(s) == 2:
        return diagonal(v, k)
    if len(s) != 1:
        raise XlapyError("diag: input must be 1- or 2-dimensional")
    n = s[0]
    size = n + abs(int(k))
    padded = S.pad(v, B.full((), 0, dtype_of(v)), ((0, size - n, 0),))
    vals = B.broadcast_in_dim(padded, (size, size), (0,) if k >= 0 else (1,))
    rows = S.iota(np.int64, (size, size), 0)
    cols = S.iota(np.int64, (size, size), 1)
    mask = B.eq(B.sub(cols, rows), B.full_like(rows, int(k)))
    return B.select(mask, vals, B.zeros_like(vals))


__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack",
           "split", "array_split", "flip", "fliplr", "flipud", "broadcast_to", "repeat", "tile",
           "roll", "diff", "atleast_1d", "atleast_2d", "atleast_3d", "rot90", "tril", "triu",
           "diagonal", "diag", "permute_dims", "matrix_transpose"]
