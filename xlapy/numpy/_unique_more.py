"""The array API's unique_all, unique_counts, unique_inverse and unique_values, and
setxor1d, as jax.numpy has them.

NaNs count as distinct values in the unique functions (the array API's rule); their
results are named tuples (values, indices, inverse_indices, counts). Without `size=` the
input must be concrete (eagerly it is; under jit an error says to pass size=); with a
static size the result has exactly that many entries, padded with fill_value (by default
the smallest value found).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xlapy.frontend.core import Tracer
from xlapy.numpy._core import asarray, result_type, shape


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _unique(x, size, fill_value, **flags):
    # the array API: NaNs are distinct values
    return _xnp().unique(x, equal_nan=False, size=size, fill_value=fill_value, **flags)


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices of their first occurrences, inverse_indices in x's shape,
    counts)."""
    return UniqueAllResult(*_unique(x, size, fill_value, return_index=True,
                                    return_inverse=True, return_counts=True))


def unique_counts(x, /, *, size=None, fill_value=None):
    return UniqueCountsResult(*_unique(x, size, fill_value, return_counts=True))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return UniqueInverseResult(*_unique(x, size, fill_value, return_inverse=True))


def unique_values(x, /, *, size=None, fill_value=None):
    return _unique(x, size, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of ar1 and ar2 (size= and fill_value= for a static
    size under jit; the default fill is the smallest such value)."""
    xnp = _xnp()
    from xlapy.numpy._extras import _compact, _sorted_mask  # unique's sorting helpers
    a, b = xnp.ravel(asarray(ar1)), xnp.ravel(asarray(ar2))
    dt = result_type(a, b)
    a, b = a.astype(dt), b.astype(dt)
    firsts = []
    for v in (a, b):  # each value once per array: its first occurrence in sorted order
        if assume_unique or shape(v)[0] == 0:
            firsts.append((xnp.sort(v), xnp.ones(shape(v), bool)))
        else:
            s, mask, _ = _sorted_mask(v)
            firsts.append((s, mask))
    vals = xnp.concatenate([firsts[0][0], firsts[1][0]])
    valid = xnp.concatenate([firsts[0][1], firsts[1][1]])
    total = shape(vals)[0]
    if total == 0:
        return xnp.zeros((0 if size is None else int(size),), dt)
    # valid entries first, in sorted order; a value survives when it differs from both its
    # neighbours among them
    order = xnp.argsort(vals, stable=True)
    vals, valid = vals[order], valid[order]
    order = xnp.argsort(~valid, stable=True)
    vals, valid = vals[order], valid[order]
    diff = vals[1:] != vals[:-1]
    new_left = xnp.concatenate([np.ones((1,), bool), diff])
    new_right = xnp.concatenate([diff | ~valid[1:], np.ones((1,), bool)])
    keep = valid & new_left & new_right
    if size is None:
        if isinstance(keep, Tracer):
            raise keep._concrete_error("setxor1d without size=: pass a static size= (and "
                                       "fill_value=) to get a fixed-size result, as in JAX")
        return vals[np.asarray(keep)]
    size = int(size)
    pos, ok = _compact(keep, size)
    out = vals[pos]
    if size == 0:
        return out
    if fill_value is None:  # the smallest value found (they are sorted), else 0
        fill = xnp.where(ok[0], out[0], xnp.zeros((), dt))
    else:
        fill = asarray(fill_value).astype(dt)
    return xnp.where(ok, out, fill)


__all__ = ["UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "setxor1d"]
