"""xlapy.numpy.linalg and xlapy.scipy.linalg against jax (eager and under jit), vmap against
jax.vmap, and the VJP rules of eigh and triangular_solve against jax.grad."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
import xlapy.scipy.linalg as xsl
from xlapy.lax import lapack as L

jax = pytest.importorskip("jax")
jnp, jsl = jax.numpy, jax.scipy.linalg
RNG = np.random.default_rng(11)
A = RNG.standard_normal((2, 5, 5))
S = A @ np.swapaxes(A, -1, -2) + 5 * np.eye(5)
R = RNG.standard_normal((6, 4))
B = RNG.standard_normal((5, 2))

CASES = {   # name: (xlapy function, jax function, arguments)
    "solve": (xnp.linalg.solve, jnp.linalg.solve, (A, A[..., :2])),
    "solve_vector": (xnp.linalg.solve, jnp.linalg.solve, (A[0], B[:, 0])),
    "inv": (xnp.linalg.inv, jnp.linalg.inv, (A,)),
    "det": (xnp.linalg.det, jnp.linalg.det, (A,)),
    "slogdet": (xnp.linalg.slogdet, jnp.linalg.slogdet, (A,)),
    "cholesky": (xnp.linalg.cholesky, jnp.linalg.cholesky, (S,)),
    "eigh": (xnp.linalg.eigh, jnp.linalg.eigh, (S,)),
    "eigvalsh": (xnp.linalg.eigvalsh, jnp.linalg.eigvalsh, (S,)),
    "svd": (xnp.linalg.svd, jnp.linalg.svd, (R,)),
    "svd_thin": (lambda x: xnp.linalg.svd(x, full_matrices=False),
                 lambda x: jnp.linalg.svd(x, full_matrices=False), (R.T,)),
    "svdvals": (lambda x: xnp.linalg.svd(x, compute_uv=False),
                lambda x: jnp.linalg.svd(x, compute_uv=False), (A,)),
    "qr": (xnp.linalg.qr, jnp.linalg.qr, (R,)),
    "qr_complete": (lambda x: xnp.linalg.qr(x, "complete"), lambda x: jnp.linalg.qr(x, "complete"),
                    (R,)),
    "qr_r": (lambda x: xnp.linalg.qr(x, "r"), lambda x: jnp.linalg.qr(x, "r"), (R.T,)),
    "pinv": (xnp.linalg.pinv, jnp.linalg.pinv, (R,)),
    "lstsq": (lambda a, b: xnp.linalg.lstsq(a, b)[0], lambda a, b: jnp.linalg.lstsq(a, b)[0],
              (R, R[:, 0])),
    "matrix_rank": (xnp.linalg.matrix_rank, jnp.linalg.matrix_rank, (R,)),
    "matrix_power": (lambda x: xnp.linalg.matrix_power(x, -3),
                     lambda x: jnp.linalg.matrix_power(x, -3), (S,)),
    "multi_dot": (lambda a, b: xnp.linalg.multi_dot([a, b, a]),
                  lambda a, b: jnp.linalg.multi_dot([a, b, a]), (A[0], S[0])),
    "norm_fro": (xnp.linalg.norm, jnp.linalg.norm, (R,)),
    "norm_2": (lambda x: xnp.linalg.norm(x, 2), lambda x: jnp.linalg.norm(x, 2), (R,)),
    "norm_nuc": (lambda x: xnp.linalg.norm(x, "nuc", axis=(1, 2)),
                 lambda x: jnp.linalg.norm(x, "nuc", axis=(1, 2)), (A,)),
    "norm_inf": (lambda x: xnp.linalg.norm(x, np.inf), lambda x: jnp.linalg.norm(x, np.inf),
                 (R,)),
    "norm_vec3": (lambda x: xnp.linalg.norm(x, 3, axis=0), lambda x: jnp.linalg.norm(x, 3, axis=0),
                  (R,)),
    "sp_cholesky": (xsl.cholesky, jsl.cholesky, (S[0],)),
    "sp_cho_solve": (lambda s, b: xsl.cho_solve(xsl.cho_factor(s), b),
                     lambda s, b: jsl.cho_solve(jsl.cho_factor(s), b), (S[0], B)),
    "sp_solve_triangular": (lambda a, b: xsl.solve_triangular(a, b, trans=1, lower=True),
                            lambda a, b: jsl.solve_triangular(a, b, trans=1, lower=True),
                            (S[0], B)),
    "sp_lu": (xsl.lu, jsl.lu, (A[0],)),
    "sp_lu_factor": (xsl.lu_factor, jsl.lu_factor, (A[0],)),
    "sp_lu_solve": (lambda a, b: xsl.lu_solve(xsl.lu_factor(a), b, trans=1),
                    lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=1), (A[0], B)),
    "sp_qr": (xsl.qr, jsl.qr, (R,)),
    "sp_svd": (xsl.svd, jsl.svd, (A[0],)),
    "sp_eigh": (xsl.eigh, jsl.eigh, (S[0],)),
    "sp_inv": (xsl.inv, jsl.inv, (A[0],)),
    "sp_solve": (xsl.solve, jsl.solve, (A[0], B)),
    "sp_solve_pos": (lambda s, b: xsl.solve(s, b, assume_a="pos"),
                     lambda s, b: jsl.solve(s, b, assume_a="pos"), (S[0], B)),
    "sp_det": (xsl.det, jsl.det, (A[0],)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax(name, dtype):
    f, g, args = CASES[name]
    args = [np.asarray(a, dtype) for a in args]
    with jax.enable_x64(dtype == np.float64):
        want = [np.asarray(w) for w in jax.tree.leaves(g(*args))]
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for fn in (f, xp.jit(f)):
        with xp.enable_x64(dtype == np.float64):
            got = [np.asarray(x) for x in jax.tree.leaves(fn(*args))]
        assert len(got) == len(want)
        for x, w in zip(got, want):
            assert x.shape == w.shape, (x.shape, w.shape)
            assert x.dtype == w.dtype or x.dtype.kind == w.dtype.kind == "i", (x.dtype, w.dtype)
            np.testing.assert_allclose(x, w, rtol=tol, atol=tol)


def test_failed_factorizations_are_nan_as_in_jax():
    bad = np.full((3, 3), np.nan, np.float32)
    for f, g in ((xnp.linalg.eigh, jnp.linalg.eigh), (xnp.linalg.svd, jnp.linalg.svd)):
        for x, w in zip(jax.tree.leaves(f(bad)), jax.tree.leaves(g(bad))):
            assert np.array_equal(np.isnan(np.asarray(x)), np.isnan(np.asarray(w)))


def test_vmap_matches_jax_vmap():
    a = np.asarray(A, np.float32)
    for f, g in ((xnp.linalg.inv, jnp.linalg.inv), (xnp.linalg.eigh, jnp.linalg.eigh),
                 (xnp.linalg.qr, jnp.linalg.qr), (xnp.linalg.svd, jnp.linalg.svd)):
        for x, w in zip(jax.tree.leaves(xp.vmap(f)(a)), jax.tree.leaves(jax.vmap(g)(a))):
            np.testing.assert_allclose(np.asarray(x), np.asarray(w), rtol=2e-4, atol=2e-4)
    b = np.asarray(RNG.standard_normal((2, 5)), np.float32)
    np.testing.assert_allclose(xp.vmap(xnp.linalg.solve, in_axes=(0, 1))(a, b.T),
                               jax.vmap(jnp.linalg.solve, in_axes=(0, 1))(a, b.T), rtol=2e-4,
                               atol=2e-4)


def test_vjp_rules_match_jax_grad():
    s = np.asarray(S[0])

    def f(m, np_):
        return lambda x: (m.linalg.eigh(x)[1][:, 1:] ** 2 * np.arange(5.0)[:, None]).sum() + \
            m.linalg.eigvalsh(x)[2]
    with jax.enable_x64(True), xp.enable_x64(True):
        np.testing.assert_allclose(xp.grad(f(xnp, None))(s), jax.grad(f(jnp, None))(s),
                                   rtol=1e-9, atol=1e-9)
        for left, lower, trans, unit in [(True, True, False, False), (False, False, True, True),
                                         (True, False, True, False)]:
            b = B if left else B.T
            kw = dict(left_side=left, lower=lower, transpose_a=trans, unit_diagonal=unit)
            got = xp.grad(lambda a, b, kw=kw: (L.triangular_solve_p.bind(a, b, **kw) ** 2).sum(),
                          argnums=(0, 1))(s, b)
            want = jax.grad(lambda a, b, kw=kw: (jax.lax.linalg.triangular_solve(a, b, **kw) ** 2)
                            .sum(), argnums=(0, 1))(s, b)
            for x, w in zip(got, want):
                np.testing.assert_allclose(x, w, rtol=1e-9, atol=1e-9)


def test_errors():
    from xlapy.errors import XlapyError
    with pytest.raises(XlapyError, match="linalg.inv: expects square matrices"):
        xnp.linalg.inv(np.ones((3, 4), np.float32))
    with pytest.raises(XlapyError, match="full_matrices=True is implemented for square"):
        xp.grad(lambda x: xnp.linalg.svd(x)[0].sum())(np.ones((3, 4), np.float32))
    from xlapy.lax import lapack
    with pytest.raises(XlapyError, match="differentiation of geqrf is not implemented"):
        xp.grad(lambda x: lapack.geqrf_p.bind(x)[0].sum())(np.eye(3, dtype=np.float32))
    with pytest.raises(XlapyError, match="qr: mode must be"):
        xnp.linalg.qr(np.eye(3, dtype=np.float32), "bogus")


C = np.array([[2 + 1j, 0.5], [0.3j, 3 - 0.5j]], np.complex64)
CV = np.array([3 + 4j, 1j, -2 + 0.5j], np.complex64)


@pytest.mark.parametrize("name, call", [   # (svd and what is built on it take complex
    ("lax.linalg.lu", lambda: xp.lax.linalg.lu(C)),   # matrices now: test_linalg_svd_complex)
    ("lax.linalg.lu", lambda: xp.jit(xp.lax.linalg.lu)(C)),
])
def test_complex_matrices_are_refused_by_name(name, call):
    """Regression: the real LAPACK calls took complex input's real part (det of a complex
    matrix returned a real number, silently)."""
    from xlapy.errors import XlapyError
    with pytest.raises(XlapyError, match=f"{name}: complex matrices are not supported"):
        call()


@pytest.mark.parametrize("ord_, axis", [(None, None), (1, None), (np.inf, None),
                                        (-np.inf, None), (0, None), (3, None), (2, None)])
def test_norms_of_complex_vectors_and_matrices(ord_, axis):
    """Every norm but the singular-value ones depends on |x|: complex input gives NumPy's."""
    for x in (CV, C):
        if x.ndim == 2 and ord_ in (0, 3, 2):
            continue   # (no such matrix norms, or one by singular values)
        want = np.linalg.norm(x, ord_, axis)
        for f in (xnp.linalg.norm, xp.jit(xnp.linalg.norm, static_argnums=(1, 2))):
            got = f(x, ord_, axis)
            assert np.dtype(got.dtype) == np.float32
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xnp.linalg.norm(C, axis=1)),
                               np.linalg.norm(C, axis=1), rtol=1e-6)
