"""Descriptive statistics of jax.scipy.stats: sem, mode, rankdata."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import UnsupportedError, XlapyError


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along axis (all when None)."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise XlapyError(f"sem: nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy == "raise":
        raise UnsupportedError("sem: nan_policy='raise' needs concrete values; it is not "
                               "supported (as in JAX)")
    a = xnp.asarray(a)
    if a.dtype.kind not in "fc":
        a = a.astype(xnp.result_type(a, 1.0))
    if nan_policy == "omit":
        n = xnp.sum(~xnp.isnan(a), axis=axis, keepdims=keepdims)
        return xnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / xnp.sqrt(n)
    n = a.size if axis is None else a.shape[axis]
    return xnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / xnp.sqrt(
        xnp.asarray(n, a.dtype))


class ModeResult(tuple):
    """(mode, count), also as .mode and .count (as scipy's and JAX's ModeResult)."""

    def __new__(cls, mode, count):
        return super().__new__(cls, (mode, count))

    mode = property(lambda self: self[0])
    count = property(lambda self: self[1])


def _last_axis(a, axis):
    if axis is None:
        return a.ravel(), None
    if not -a.ndim <= axis < a.ndim:
        raise XlapyError(f"axis {axis} is out of range for an array of rank {a.ndim}")
    return xnp.moveaxis(a, axis, -1), axis % a.ndim


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along axis (the smallest among equally common ones) and how
    often it occurs: ModeResult(mode, count)."""
    if nan_policy != "propagate":
        raise UnsupportedError(f"mode: nan_policy={nan_policy!r} is not supported (only "
                               f"'propagate', as in JAX)")
    a = xnp.asarray(a)
    if a.ndim == 0:
        a = a.reshape(1)
        axis = 0 if axis is not None else None
    x, ax = _last_axis(a, axis)
    s = xnp.sort(x, axis=-1)
    counts = xnp.sum(s[..., :, None] == s[..., None, :], axis=-1).astype(np.int32)
    i = xnp.argmax(counts, axis=-1)[..., None]
    m = xnp.take_along_axis(s, i, axis=-1)[..., 0]
    c = xnp.take_along_axis(counts, i, axis=-1)[..., 0]
    if keepdims:
        if ax is None:
            m, c = m.reshape((1,) * a.ndim), c.reshape((1,) * a.ndim)
        else:
            m, c = xnp.expand_dims(m, ax), xnp.expand_dims(c, ax)
    return ModeResult(m, c)


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1, as floats) of a's values, ties resolved by `method` (average,
    min, max, dense, ordinal), over the flattened array or along axis."""
    from xlapy.frontend.vmap import vmap
    if method not in _RANK_METHODS:
        raise XlapyError(f"rankdata: method must be one of {_RANK_METHODS}, got {method!r}")
    if nan_policy != "propagate":
        raise UnsupportedError(f"rankdata: nan_policy={nan_policy!r} is not supported (only "
                               f"'propagate', as in JAX)")
    a = xnp.asarray(a)
    if axis is not None:
        x, ax = _last_axis(a, axis)
        lead = x.shape[:-1]
        flat = x.reshape((-1, x.shape[-1]))
        r = vmap(lambda row: _rank1(row, method))(flat)
        return xnp.moveaxis(r.reshape(lead + (x.shape[-1],)), -1, ax)
    return _rank1(a.ravel(), method)


def _rank1(x, method):
    out = xnp.result_type(0.5)  # ranks are floats of the default type, as JAX's
    n = x.shape[0]
    order = xnp.argsort(x, stable=True)
    inv = xnp.zeros(n, np.int32).at[order].set(xnp.arange(n, dtype=np.int32))
    if method == "ordinal":
        return (inv + 1).astype(out)
    s = x[order]
    new = xnp.concatenate([xnp.ones(1, bool), s[1:] != s[:-1]])
    dense = xnp.cumsum(new.astype(np.int32))[inv]
    if method == "dense":
        return dense.astype(out)
    # the start of each run of equal values, and n at the end
    (starts,) = xnp.nonzero(xnp.concatenate([new, xnp.ones(1, bool)]), size=n + 1,
                            fill_value=n)
    starts = starts.astype(out)
    if method == "max":
        return starts[dense]
    if method == "min":
        return starts[dense - 1] + 1
    return (starts[dense] + starts[dense - 1] + 1) / 2
