"""Derivatives of xlapy.numpy.linalg / xlapy.scipy.linalg (the JVP and VJP rules of
xlapy/lax/lapack_ad.py and linalg.qr's custom_jvp) against jax.grad and jax.jvp: f64 and
f32, batched, tall and wide matrices, under jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
import xlapy.scipy.linalg as xsl

jax = pytest.importorskip("jax")
jnp, jsl = jax.numpy, jax.scipy.linalg
RNG = np.random.default_rng(5)
A = RNG.standard_normal((2, 4, 4)) + 3 * np.eye(4)
SPD = A @ np.swapaxes(A, -1, -2) + np.eye(4)
TALL = RNG.standard_normal((2, 5, 3))
WIDE = RNG.standard_normal((3, 5))
RHS = RNG.standard_normal((2, 4, 2))


def _w(shape, seed=0):
    """Fixed weights, so a scalar function sees every output element."""
    return np.random.default_rng(seed).standard_normal(shape)


def _weighted(f, n_out=None):
    """sum(w * f(x)) for each output (a tuple's outputs each with its own weights)."""
    def g(N, *args):
        out = f(N, *args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return sum((o * _w(np.shape(o), i).astype(o.dtype)).sum() for i, o in enumerate(outs))
    return g


def _lu_solve(N, a, b):
    if N is jnp:
        return jsl.lu_solve(jsl.lu_factor(a), b)
    return xsl.lu_solve(xsl.lu_factor(a), b)


def _tri(N, a, b, **kw):
    lib = jsl if N is jnp else xsl
    return lib.solve_triangular(a, b, **kw)


def _sym(N, a):
    return a + N.swapaxes(a, -1, -2)


# name: (f(N, *args) with N = xlapy.numpy or jax.numpy, arguments)
CASES = {
    "solve": (lambda N, a, b: N.linalg.solve(a, b), (A, RHS)),
    "inv": (lambda N, a: N.linalg.inv(a), (A,)),
    "det": (lambda N, a: N.linalg.det(a), (A,)),
    "slogdet": (lambda N, a: N.linalg.slogdet(a)[1], (A,)),
    "lu_solve": (_lu_solve, (A[0], RHS[0])),
    "cholesky": (lambda N, a: N.linalg.cholesky(a), (SPD,)),
    "cholesky_upper": (lambda N, a: N.linalg.cholesky(a, upper=True), (SPD[0],)),
    "eigh_values": (lambda N, a: N.linalg.eigvalsh(a), (SPD,)),
    # eigenvectors up to sign: v v^T per vector
    "eigh_vectors": (lambda N, a: N.linalg.eigh(a)[1] ** 2, (SPD,)),
    "svd_values": (lambda N, a: N.linalg.svd(a, compute_uv=False), (TALL,)),
    "svd_tall": (lambda N, a: [x ** 2 for x in N.linalg.svd(a, full_matrices=False)],
                 (TALL,)),
    "svd_wide": (lambda N, a: [x ** 2 for x in N.linalg.svd(a, full_matrices=False)],
                 (WIDE,)),
    "svd_square_full": (lambda N, a: [x ** 2 for x in N.linalg.svd(a)], (A,)),
    "qr": (lambda N, a: N.linalg.qr(a), (TALL,)),
    "qr_wide": (lambda N, a: N.linalg.qr(a), (WIDE,)),
    "qr_complete": (lambda N, a: N.linalg.qr(a, "complete"), (TALL,)),
    "qr_r": (lambda N, a: N.linalg.qr(a, "r"), (TALL[0],)),
    "solve_triangular_lower": (lambda N, a, b: _tri(N, a, b, lower=True), (A, RHS)),
    "solve_triangular_upper_trans": (lambda N, a, b: _tri(N, a, b, trans=1), (A[0], RHS[0])),
    "solve_triangular_unit": (lambda N, a, b: _tri(N, a, b, lower=True, unit_diagonal=True),
                              (A[0], RHS[0])),
    "pinv": (lambda N, a: N.linalg.pinv(a), (TALL[0],)),
}


def _check(name, dtype, transform=lambda f: f):
    f, args = CASES[name]
    args = tuple(np.asarray(a, dtype) for a in args)
    g = _weighted(f)
    nums = tuple(range(len(args)))
    rtol = 1e-9 if dtype == np.float64 else 2e-3
    with jax.enable_x64(dtype == np.float64), xp.enable_x64(dtype == np.float64):
        want = jax.grad(lambda *a: g(jnp, *a), nums)(*args)
        got = transform(xp.grad(lambda *a: g(xnp, *a), nums))(*args)
        for x, w in zip(got, want):
            assert np.asarray(x).dtype == dtype
            scale = np.abs(np.asarray(w)).max()
            np.testing.assert_allclose(np.asarray(x), np.asarray(w), rtol=rtol,
                                       atol=rtol * scale, err_msg=f"grad of {name}")
        tangents = tuple(_w(a.shape, 7 + i).astype(dtype) for i, a in enumerate(args))
        _, t_want = jax.jvp(lambda *a: g(jnp, *a), args, tangents)
        _, t_got = xp.jvp(lambda *a: g(xnp, *a), args, tangents)
        np.testing.assert_allclose(float(t_got), float(t_want), rtol=rtol * 10,
                                   atol=rtol * 10 * abs(float(t_want)), err_msg=f"jvp of {name}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_and_jvp_f64(name):
    _check(name, np.float64)


@pytest.mark.parametrize("name", ["solve", "det", "cholesky", "svd_tall", "qr", "eigh_values"])
def test_grad_and_jvp_f32(name):
    _check(name, np.float32)


@pytest.mark.parametrize("name", ["inv", "slogdet", "cholesky", "svd_wide", "qr_complete"])
def test_grad_under_jit(name):
    _check(name, np.float64, transform=xp.jit)


def test_vmap_of_grad_of_det():
    g = _weighted(lambda N, a: N.linalg.det(a))
    with jax.enable_x64(), xp.enable_x64():
        want = jax.vmap(jax.grad(lambda a: g(jnp, a)))(A)
        got = xp.vmap(xp.grad(lambda a: g(xnp, a)))(A)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9)


def test_second_derivative_of_logdet():
    """grad(grad(logdet)) contracts to -tr(A^-1 V A^-1 W): the rules differentiate again."""
    v, w = _w((4, 4), 1), _w((4, 4), 2)

    def hvp(N, a, grad, jvp):
        return jvp(grad(lambda x: N.linalg.slogdet(x)[1]), (a,), (v,))[1]
    with jax.enable_x64(), xp.enable_x64():
        want = hvp(jnp, A[0], jax.grad, jax.jvp)
        got = hvp(xnp, A[0], xp.grad, xp.jvp)
        got_rev = xp.grad(lambda x: (xp.grad(lambda y: xnp.linalg.slogdet(y)[1])(x)
                                     * w).sum())(A[0])
        want_rev = jax.grad(lambda x: (jax.grad(lambda y: jnp.linalg.slogdet(y)[1])(x)
                                       * w).sum())(A[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8)
    np.testing.assert_allclose(np.asarray(got_rev), np.asarray(want_rev), rtol=1e-8)


def test_full_matrices_svd_of_a_rectangular_matrix_is_not_differentiable():
    from xlapy.errors import XlapyError
    with pytest.raises(XlapyError, match="full_matrices=True is implemented for square"):
        xp.grad(lambda x: xnp.linalg.svd(x)[0].sum())(np.ones((3, 4), np.float32))


@pytest.mark.parametrize("name", ["inv", "qr_r"])
def test_jacfwd_and_jacrev(name):
    """Jacobians batch the rules (vmap of jvp, vmap of vjp)."""
    f, (a,) = CASES[name]
    a = np.asarray(a[0] if a.ndim == 3 else a, np.float32)
    want = jax.jacfwd(lambda x: f(jnp, x))(a)
    for jac in (xp.jacfwd, xp.jacrev):
        got = jac(lambda x: f(xnp, x))(a)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-3)
