"""xlapy.lax.linalg's qr, svd, eigh, triangular_solve and lu against jax.lax.linalg:
signatures, return orders, shapes and dtypes, values, jit, vmap, gradients, errors."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
from jax.lax import linalg as JL

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import ShapeError, UnsupportedError
from xlapy.lax import linalg as XL

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3)).astype(np.float32)
S = (A.T @ A + np.eye(3)).astype(np.float32)


def _close(x, y, tol=1e-5):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("full", [True, False])
def test_qr(full):
    q, r = xp.jit(lambda a: XL.qr(a, full_matrices=full))(A)
    jq, jr = JL.qr(A, full_matrices=full)
    assert q.shape == jq.shape and r.shape == jr.shape
    _close(np.abs(r), np.abs(jr))
    _close(q @ r, A)
    with pytest.raises(UnsupportedError, match="pivoting"):
        XL.qr(A, pivoting=True)


def test_svd_and_eigh():
    u, s, vh = XL.svd(A, full_matrices=False)
    ju, js, jvh = JL.svd(A, full_matrices=False)
    assert (u.shape, s.shape, vh.shape) == (ju.shape, js.shape, jvh.shape)
    _close(s, js)
    _close((u * s) @ vh, A)
    _close(XL.svd(A, compute_uv=False), JL.svd(A, compute_uv=False))
    v, w = xp.jit(XL.eigh)(S)
    jv, jw = JL.eigh(S)
    _close(w, jw)
    _close(np.abs(v), np.abs(jv), 1e-4)
    batch = np.stack([S, 2 * S])
    _close(xp.vmap(lambda m: XL.eigh(m)[1])(batch), jax.vmap(lambda m: JL.eigh(m)[1])(batch))
    g = xp.grad(lambda m: xnp.sum(XL.eigh(m)[1] ** 2))(S)
    jg = jax.grad(lambda m: (JL.eigh(m)[1] ** 2).sum())(S)
    _close(g, jg, 1e-4)
    with pytest.raises(ShapeError, match="square"):
        XL.eigh(A)


@pytest.mark.parametrize("left,lower,trans", list(itertools.product([True, False], repeat=3)))
def test_triangular_solve(left, lower, trans):
    b = RNG.standard_normal((3, 2) if left else (2, 3)).astype(np.float32)
    kw = dict(left_side=left, lower=lower, transpose_a=trans)
    _close(xp.jit(lambda a, c: XL.triangular_solve(a, c, **kw))(S, b),
           JL.triangular_solve(S, b, **kw), 1e-4)
    g = xp.grad(lambda a, c: xnp.sum(XL.triangular_solve(a, c, **kw) ** 2), (0, 1))(S, b)
    jg = jax.grad(lambda a, c: (JL.triangular_solve(a, c, **kw) ** 2).sum(), (0, 1))(S, b)
    for x, y in zip(g, jg):
        _close(x, y, 1e-3)


def test_triangular_solve_errors():
    with pytest.raises(ShapeError, match="must match"):
        XL.triangular_solve(S, np.ones((2, 2), np.float32), left_side=True)
    with pytest.raises(ShapeError, match="same rank"):
        XL.triangular_solve(S, np.ones(3, np.float32))


def test_lu():
    lu, piv, perm = xp.jit(XL.lu)(A)
    jlu, jpiv, jperm = JL.lu(A)
    _close(lu, jlu)
    assert piv.dtype == jpiv.dtype and perm.dtype == jperm.dtype
    np.testing.assert_array_equal(np.asarray(piv), np.asarray(jpiv))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(jperm))
    with pytest.raises(ShapeError, match="matrices"):
        XL.lu(np.ones(3, np.float32))
