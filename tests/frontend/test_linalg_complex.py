"""Complex matrices in the LU family (LAPACK's cgetrf/zgetrf and ctrsm/ztrsm custom-calls):
xlapy.numpy.linalg's det, inv, solve, slogdet and xlapy.scipy.linalg's lu_factor, lu_solve,
solve_triangular against NumPy/SciPy, eager, under jit (cpu backend) and on the interpreter;
a JAX-lowered complex solve run on xlapy's cpu backend; derivatives as JAX's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import xlapy as xp
import xlapy.numpy as xnp
import xlapy.scipy.linalg as xsl
from xlapy.backends.base import flatten, get_platform
from xlapy.hlo import parse

RNG = np.random.default_rng(11)
TOL = {np.complex64: 1e-5, np.complex128: 1e-12}


def _c(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _modes(f):
    """f eager, under jit (cpu) and under jit on the interpreter."""
    return [f, xp.jit(f), xp.jit(f, backend="interpreter")]


def _close(got, want, dtype, scale=1.0):
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.fixture(params=[np.complex64, np.complex128], ids=["c64", "c128"])
def dtype(request):
    with xp.enable_x64(request.param == np.complex128):
        yield request.param


def test_det_inv_slogdet(dtype):
    a = _c(2, 4, 4, dtype=dtype)
    for f in _modes(xnp.linalg.det):
        got = f(a)
        assert np.dtype(got.dtype) == dtype
        _close(got, np.linalg.det(a), dtype, 10)
    for f in _modes(xnp.linalg.inv):
        got = f(a)
        assert np.dtype(got.dtype) == dtype
        _close(got, np.linalg.inv(a), dtype, 10)
    want_s, want_l = np.linalg.slogdet(a)
    for f in _modes(xnp.linalg.slogdet):
        s, ld = f(a)
        assert np.dtype(s.dtype) == dtype and np.dtype(ld.dtype).kind == "f"
        _close(s, want_s, dtype, 10)
        _close(ld, want_l, dtype, 10)
        np.testing.assert_allclose(np.abs(np.asarray(s)), 1, rtol=TOL[dtype] * 10)


def test_solve_vector_matrix_batched(dtype):
    a, v, m = _c(4, 4, dtype=dtype), _c(4, dtype=dtype), _c(4, 3, dtype=dtype)
    ab, bb = _c(3, 4, 4, dtype=dtype), _c(3, 4, 2, dtype=dtype)
    for f in _modes(xnp.linalg.solve):
        for aa, b in ((a, v), (a, m), (ab, bb)):
            got = f(aa, b)
            assert np.dtype(got.dtype) == dtype and got.shape == b.shape
            _close(got, np.linalg.solve(aa, b), dtype, 10)
    # a real matrix with a complex right side: promoted, the imaginary part kept
    ar = a.real.copy()
    _close(xnp.linalg.solve(ar, v), np.linalg.solve(ar, v), dtype, 10)


def test_singular_complex_matrix(dtype):
    a = np.array([[1 + 1j, 2 - 1j], [2 + 2j, 4 - 2j]], dtype)    # row 2 = 2 * row 1
    for f in _modes(xnp.linalg.det):
        assert np.asarray(f(a)) == 0
    for f in _modes(xnp.linalg.slogdet):
        s, ld = f(a)
        assert np.asarray(s) == 0 and np.asarray(ld) == -np.inf


def test_scipy_lu_factor_lu_solve(dtype):
    a, b, v = _c(5, 5, dtype=dtype), _c(5, 2, dtype=dtype), _c(5, dtype=dtype)
    want_lu, want_piv = sl.lu_factor(a)
    for f in _modes(xsl.lu_factor):
        lu, piv = f(a)
        assert np.dtype(lu.dtype) == dtype
        np.testing.assert_array_equal(np.asarray(piv), want_piv)
        _close(lu, want_lu, dtype, 10)
    lu_piv = xsl.lu_factor(a)
    for trans in (0, 1, 2):
        for rhs in (b, v):
            want = sl.lu_solve((want_lu, want_piv), rhs, trans=trans)
            for f in _modes(lambda lu, piv, r, t=trans: xsl.lu_solve((lu, piv), r, trans=t)):
                _close(f(*lu_piv, rhs), want, dtype, 10)


def test_scipy_solve_triangular(dtype):
    a = _c(4, 4, dtype=dtype) + 4 * np.eye(4, dtype=dtype)
    b, v = _c(4, 3, dtype=dtype), _c(4, dtype=dtype)
    for lower in (True, False):
        for trans in (0, 1, 2, "C"):
            for unit in (False, True):
                for rhs in (b, v):
                    want = sl.solve_triangular(a, rhs, trans=trans, lower=lower,
                                               unit_diagonal=unit)
                    for f in _modes(lambda x, r, t=trans, lo=lower, u=unit: xsl.solve_triangular(
                            x, r, trans=t, lower=lo, unit_diagonal=u)):
                        _close(f(a, rhs), want, dtype, 10)


def test_jax_lowered_complex_solve_on_cpu_backend(dtype):
    """jax.numpy.linalg.solve lowers to lapack_[cz]getrf_ffi and lapack_[cz]trsm_ffi."""
    jax = pytest.importorskip("jax")
    a, b = _c(2, 4, 4, dtype=dtype), _c(2, 4, 3, dtype=dtype)
    with jax.enable_x64(dtype == np.complex128):
        text = jax.jit(jax.numpy.linalg.solve).lower(a, b).compiler_ir("hlo").as_hlo_text()
        want_jax = np.asarray(jax.jit(jax.numpy.linalg.solve)(a, b))
    t = "c" if dtype == np.complex64 else "z"
    assert f"lapack_{t}getrf_ffi" in text and f"lapack_{t}trsm_ffi" in text
    (got,) = [np.asarray(g) for g in
              flatten(get_platform("cpu").compiler.compile(parse(text)).run(a, b))]
    assert got.dtype == dtype
    _close(got, np.linalg.solve(a, b), dtype, 10)
    _close(got, want_jax, dtype, 10)


def test_complex_derivatives_match_jax():
    """The lu / triangular_solve rules are JAX's (plain transposes, JAX's complex convention:
    vjp is the linear map's transpose, not its conjugate transpose)."""
    jax = pytest.importorskip("jax")
    a, b, ct = _c(3, 3), _c(3), _c(3)
    for fx, fj, c in [(lambda x: xnp.linalg.solve(x, b), lambda x: jax.numpy.linalg.solve(x, b),
                       ct),
                      (xnp.linalg.det, jax.numpy.linalg.det, ct[0]),
                      (lambda x: xsl.solve_triangular(x, b, lower=True),
                       lambda x: jax.scipy.linalg.solve_triangular(x, b, lower=True), ct)]:
        _, back = xp.vjp(fx, a)
        _, back_j = jax.vjp(fj, a)
        _close(back(c)[0], back_j(c)[0], np.complex64, 10)
        da = _c(3, 3)
        _close(xp.jvp(fx, (a,), (da,))[1], jax.jvp(fj, (a,), (da,))[1], np.complex64, 10)
