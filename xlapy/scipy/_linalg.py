"""Small dense factorizations for the samplers and densities that need them (xlapy has no
linalg module yet): Cholesky and lower-triangular solves, written with array operations
over a static loop of n steps (fine for the small n of covariance matrices; each step is
a vector operation over the batch)."""

from __future__ import annotations

import xlapy.numpy as xnp
from xlapy.frontend.primitives import basic as B


def cholesky(a):
    """Lower Cholesky factor of symmetric positive definite matrices (..., n, n), column by
    column; NaN columns where a is not positive definite."""
    n = B.aval_of(a).shape[-1]
    dt = B.aval_of(a).dtype
    lower = xnp.zeros_like(a)
    rows = xnp.arange(n)
    for j in range(n):
        # column j of a minus the contributions of the columns already computed
        v = a[..., :, j] - xnp.einsum("...ik,...k->...i", lower, lower[..., j, :])
        d = xnp.sqrt(v[..., j])
        col = xnp.where(rows >= j, v / d[..., None], xnp.zeros_like(v))
        lower = lower + col[..., :, None] * (rows == j).astype(dt)
    return lower


def solve_lower(lower, b):
    """y with lower @ y = b, for lower triangular matrices (..., n, n) and b (..., n)."""
    n = B.aval_of(lower).shape[-1]
    ys = []
    for i in range(n):
        acc = b[..., i]
        for k in range(i):
            acc = acc - lower[..., i, k] * ys[k]
        ys.append(acc / lower[..., i, i])
    return xnp.stack(ys, axis=-1)
