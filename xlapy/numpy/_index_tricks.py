"""Index helpers: s_, index_exp, ix_, indices, mgrid, ogrid, tril_indices (and _from),
triu_indices (and _from), diag_indices (and _from), unravel_index, ravel_multi_index,
fill_diagonal. Sizes are static (Python ints), as in JAX."""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.array import as_result
from xlapy.numpy._core import asarray, cast, shape
from xlapy.numpy._creation import arange
from xlapy.numpy._shape_ops import reshape, stack
from xlapy.numpy._ufuncs import clip, where

s_ = np.s_
index_exp = np.index_exp


def ix_(*args):
    """Open-mesh index arrays: the k-th of n has shape (1, .., len, .., 1)."""
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if len(shape(a)) != 1:
            raise XlapyError(f"ix_: arguments must be 1-d, argument {k} has shape {shape(a)}")
        if np.dtype(a.dtype) == np.bool_:
            raise XlapyError("ix_: boolean arguments need a concrete nonzero(); pass indices")
        out.append(reshape(a, (1,) * k + (shape(a)[0],) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def indices(dimensions, dtype=np.int32, sparse=False):
    """Grids of indices of an array of the given shape (stacked, or open when sparse)."""
    dims = tuple(int(d) for d in dimensions)
    grids = [reshape(arange(d, dtype=dtype), (1,) * k + (d,) + (1,) * (len(dims) - k - 1))
             for k, d in enumerate(dims)]
    if sparse:
        return tuple(grids)
    return stack([g + np.zeros(dims, dtype) for g in grids]) if dims else \
        as_result(np.zeros((0,), dtype))


class _Grid:
    """mgrid[...] / ogrid[...]: NumPy's, evaluated on concrete slices (static sizes)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        grid = (np.ogrid if self.sparse else np.mgrid)[key]
        if isinstance(grid, (list, tuple)):
            return [asarray(g) for g in grid] if self.sparse else asarray(np.asarray(grid))
        return asarray(grid)


mgrid = _Grid(False)
ogrid = _Grid(True)


def _int_index(a):
    return cast(asarray(a), np.int32)


def tril_indices(n, k=0, m=None):
    return tuple(as_result(np.asarray(v, np.int32)) for v in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    return tuple(as_result(np.asarray(v, np.int32)) for v in np.triu_indices(n, k, m))


def tril_indices_from(arr, k=0):
    s = shape(arr)
    if len(s) != 2:
        raise XlapyError(f"tril_indices_from: a 2-d array is needed, got shape {s}")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr, k=0):
    s = shape(arr)
    if len(s) != 2:
        raise XlapyError(f"triu_indices_from: a 2-d array is needed, got shape {s}")
    return triu_indices(s[0], k, s[1])


def diag_indices(n, ndim=2):
    i = arange(int(n), dtype=np.int32)
    return (i,) * int(ndim)


def diag_indices_from(arr):
    s = shape(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise XlapyError(f"diag_indices_from: all dimensions must be equal, got shape {s}")
    return diag_indices(s[0], len(s))


def unravel_index(indices, shape_):
    """The coordinates of flat indices in an array of shape shape_ (out-of-range indices
    are clipped, as JAX)."""
    dims = tuple(int(d) for d in shape_)
    idx = _int_index(indices)
    total = math.prod(dims)
    idx = clip(where(idx < 0, idx + total, idx), 0, max(total - 1, 0))
    out = []
    for d in reversed(dims):
        out.append(idx % d)
        idx = idx // d
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat index of coordinates (mode 'clip' or 'wrap'; 'raise' checks concrete
    coordinates)."""
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise XlapyError(f"ravel_multi_index: {len(multi_index)} coordinate arrays for "
                         f"{len(dims)} dimensions")
    coords = [_int_index(c) for c in multi_index]
    if mode == "raise":
        for c, d in zip(coords, dims):
            try:
                bad = np.any((np.asarray(c) < 0) | (np.asarray(c) >= d))
            except Exception:  # a traced coordinate: cannot be checked, as JAX
                raise XlapyError("ravel_multi_index: mode='raise' needs concrete indices; "
                                 "use mode='clip' or 'wrap' under jit") from None
            if bad:
                raise XlapyError(f"ravel_multi_index: an index is out of bounds for {dims}")
    elif mode == "clip":
        coords = [clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    elif mode == "wrap":
        coords = [c % d for c, d in zip(coords, dims)]
    else:
        raise XlapyError(f"ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', got "
                         f"{mode!r}")
    order_dims = list(range(len(dims))) if order == "C" else list(reversed(range(len(dims))))
    flat = None
    for k in order_dims:
        flat = coords[k] if flat is None else flat * dims[k] + coords[k]
    return flat


def fill_diagonal(a, val, wrap=False, *, inplace=False):
    """a with val written on its main diagonal (a new array; inplace=True is refused, as
    in JAX)."""
    if inplace:
        raise XlapyError("fill_diagonal: xlapy arrays are immutable; call with inplace=False")
    from xlapy.numpy._advanced import at  # the .at update machinery
    a = asarray(a)
    s = shape(a)
    if len(s) < 2 or (len(s) > 2 and len(set(s)) != 1):
        raise XlapyError(f"fill_diagonal: a 2-d array or one with equal dimensions is "
                         f"needed, got shape {s}")
    if len(s) == 2 and wrap:  # tall matrices: the diagonal restarts below each block
        flat = np.arange(0, s[0] * s[1], s[1] + 1)
        idx = (flat // s[1], flat % s[1])
    else:
        idx = (np.arange(min(s)),) * len(s)
    v = asarray(val)
    count = len(idx[0])
    vals = v if len(shape(v)) == 0 else reshape(v, (-1,))
    if len(shape(vals)) and shape(vals)[0] != count:
        vals = vals[np.arange(count) % shape(vals)[0]]
    return at(a)[idx].set(vals)


__all__ = ["s_", "index_exp", "ix_", "indices", "mgrid", "ogrid", "tril_indices",
           "triu_indices", "tril_indices_from", "triu_indices_from", "diag_indices",
           "diag_indices_from", "unravel_index", "ravel_multi_index", "fill_diagonal"]
