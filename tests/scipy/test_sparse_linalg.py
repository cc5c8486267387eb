"""xlapy.scipy.sparse.linalg (cg, bicgstab, gmres) and xlapy.lax.custom_linear_solve /
custom_root against jax: solutions, matrix or function operators, preconditioners,
pytrees, jit, implicit gradients (with respect to b and to the matrix), errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as JS
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xl
import xlapy.numpy as xnp
import xlapy.scipy.sparse.linalg as XS
from xlapy.errors import ShapeError, XlapyError

RNG = np.random.default_rng(0)
N = 6
Q = RNG.standard_normal((N, N)).astype(np.float32)
SPD = (Q @ Q.T + N * np.eye(N)).astype(np.float32)
GEN = (Q + N * np.eye(N)).astype(np.float32)
B = RNG.standard_normal(N).astype(np.float32)
SOLVERS = [("cg", SPD), ("bicgstab", GEN), ("gmres", GEN)]


def _close(x, y, tol=1e-5):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,mat", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_solver_matches_jax(name, mat):
    ours, theirs = getattr(XS, name), getattr(JS, name)
    x, info = ours(mat, B)
    jx, jinfo = theirs(mat, B)
    _close(x, jx)
    assert (info is None) == (jinfo is None)
    _close(mat @ np.asarray(x), B, 1e-4)
    # a function operator and a Jacobi preconditioner, under jit
    x = xp.jit(lambda a, b: ours(lambda v: a @ v, b, M=lambda v: v / xnp.diag(a))[0])(mat, B)
    _close(x, theirs(lambda v: mat @ v, B, M=lambda v: v / jnp.diag(mat))[0])
    # implicit gradients with respect to the matrix and b
    def loss(lib, N_, S_):
        return lambda a, b: N_.sum(getattr(S_, name)(a, b)[0] ** 2)
    g = xp.grad(loss(xp, xnp, XS), (0, 1))(mat, B)
    jg = jax.grad(loss(jax, jnp, JS), (0, 1))(mat, B)
    for u, v in zip(g, jg):
        _close(u, v, 1e-4)


@pytest.mark.parametrize("name", ["cg", "gmres"])
def test_pytree_operands_and_limits(name):
    tree = {"a": B[:3], "b": B[3:]}

    def op(N_):
        return lambda t: {"a": 2 * t["a"] + 0.1 * N_.sum(t["b"]), "b": 3 * t["b"]}

    x, _ = getattr(XS, name)(op(xnp), tree)
    jx, _ = getattr(JS, name)(op(jnp), tree)
    for k in ("a", "b"):
        _close(x[k], jx[k])
    # one iteration only: stops early as JAX's does
    x1, _ = getattr(XS, name)(GEN if name == "gmres" else SPD, B, maxiter=1,
                              **({"restart": 2} if name == "gmres" else {}))
    jx1, _ = getattr(JS, name)(GEN if name == "gmres" else SPD, B, maxiter=1,
                               **({"restart": 2} if name == "gmres" else {}))
    _close(x1, jx1, 1e-4)


def test_solver_errors():
    with pytest.raises(ShapeError, match="square matrix"):
        XS.cg(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ShapeError, match="rows"):
        XS.cg(SPD, np.ones(3, np.float32))
    with pytest.raises(XlapyError, match="tree structure"):
        XS.bicgstab(GEN, B, x0=[B])
    with pytest.raises(ShapeError, match="x0's arrays"):
        XS.gmres(GEN, B, x0=B[:3])
    with pytest.raises(XlapyError, match="solve_method"):
        XS.gmres(GEN, B, solve_method="qr")
    with pytest.raises(XlapyError, match="floating-point"):
        XS.cg(SPD, np.arange(N))


def _custom_solve(lib, N_, L):
    def f(a, b):
        x = L.custom_linear_solve(lambda v: N_.dot(a, v), b,
                                  lambda mv, y: N_.linalg.solve(a, y),
                                  transpose_solve=lambda vm, y: N_.linalg.solve(a.T, y))
        return N_.sum(x ** 2)
    return f


def test_custom_linear_solve_matches_jax():
    f, jf = _custom_solve(xp, xnp, xl), _custom_solve(jax, jnp, jax.lax)
    _close(f(GEN, B), jf(GEN, B))
    for u, v in zip(xp.grad(f, (0, 1))(GEN, B), jax.grad(jf, (0, 1))(GEN, B)):
        _close(u, v, 1e-4)
    g = xp.jit(xp.grad(f, 1))(GEN, B)
    _close(g, jax.grad(jf, 1)(GEN, B), 1e-4)
    with pytest.raises(XlapyError, match="transpose_solve is required"):
        xp.grad(lambda b: xnp.sum(xl.custom_linear_solve(
            lambda v: 2 * v, b, lambda mv, y: y / 2)))(B)


def _sqrt(lib, N_, L):
    def f(x):
        def solve(g, y0):
            return L.while_loop(lambda y: N_.abs(g(y)) > 1e-6, lambda y: y - g(y) / (2 * y), y0)
        return L.custom_root(lambda y: y ** 2 - x, x, solve, lambda g, y: y / g(1.0))
    return f


def test_custom_root_matches_jax():
    f, jf = _sqrt(xp, xnp, xl), _sqrt(jax, jnp, jax.lax)
    x = np.float32(2.0)
    _close(f(x), jf(x))
    _close(xp.grad(f)(x), jax.grad(jf)(x))
    _close(xp.jit(xp.grad(f))(np.float32(3.0)), jax.grad(jf)(np.float32(3.0)))
    with pytest.raises(XlapyError, match="callable"):
        xl.custom_root(3, x, lambda g, y: y, lambda g, y: y)
