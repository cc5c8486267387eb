"""Descriptive statistics of jax.scipy.stats: sem."""

from __future__ import annotations

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
