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


def qr(a):
    """Reduced QR of matrices (..., m, n) with m >= n by Householder reflections (a
    fori_loop over the n columns): q (..., m, n) with orthonormal columns, r (..., n, n)
    upper triangular, a = q r."""
    from xlapy import lax
    shape = B.aval_of(a).shape
    m, n = shape[-2], shape[-1]
    dt = B.aval_of(a).dtype
    rows = xnp.arange(m)

    def step(k, carry):
        r, q = carry
        col = lax.dynamic_index_in_dim(r, k, axis=-1, keepdims=False)        # (..., m)
        v = xnp.where(rows >= k, col, xnp.zeros_like(col))
        head = xnp.sum(xnp.where(rows == k, col, xnp.zeros_like(col)), axis=-1)
        norm = xnp.sqrt(xnp.sum(v * v, axis=-1))
        alpha = -xnp.where(head >= 0, xnp.ones_like(head), -xnp.ones_like(head)) * norm
        u = v - alpha[..., None] * (rows == k).astype(dt)
        un = xnp.sqrt(xnp.sum(u * u, axis=-1))
        u = u / xnp.where(un == 0, xnp.ones_like(un), un)[..., None]
        r = r - 2 * u[..., :, None] * xnp.einsum("...i,...ij->...j", u, r)[..., None, :]
        q = q - 2 * xnp.einsum("...ij,...j->...i", q, u)[..., :, None] * u[..., None, :]
        return r, q

    eye = xnp.broadcast_to(xnp.eye(m, dtype=dt), shape[:-2] + (m, m))
    r, q = lax.fori_loop(0, n, step, (a, eye))
    return q[..., :, :n], xnp.triu(r[..., :n, :])
