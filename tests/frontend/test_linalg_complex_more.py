"""Complex matrices in cholesky, eigh and qr (LAPACK's cpotrf/zpotrf through the cholesky
opcode, cheevd/zheevd and cgeqrf + cungqr / zgeqrf + zungqr custom-calls):
xlapy.numpy.linalg, xlapy.scipy.linalg and xlapy.lax.linalg against NumPy/SciPy, eager,
under jit (cpu backend) and on the interpreter, batched; their derivatives against JAX's;
and the functions that still refuse complex matrices (lax.linalg's lu and triangular_solve;
svd and what is built on it take them: test_linalg_svd_complex.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
import xlapy.scipy.linalg as xsl
from xlapy.errors import XlapyError

RNG = np.random.default_rng(29)
TOL = {np.complex64: 1e-4, np.complex128: 1e-10}
REAL = {np.complex64: np.float32, np.complex128: np.float64}


def _c(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _hpd(*shape, dtype=np.complex64):
    """Well-conditioned Hermitian positive definite matrices."""
    a = _c(*shape, dtype=np.complex128)
    return (a @ _mH(a) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _herm(*shape, dtype=np.complex64):
    a = _c(*shape, dtype=np.complex128)
    return ((a + _mH(a)) / 2).astype(dtype)


def _modes(f, **kw):
    """f eager, under jit (cpu) and under jit on the interpreter."""
    return [f, xp.jit(f, **kw), xp.jit(f, backend="interpreter", **kw)]


def _close(got, want, dtype, scale=1.0):
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.fixture(params=[np.complex64, np.complex128], ids=["c64", "c128"])
def dtype(request):
    with xp.enable_x64(request.param == np.complex128):
        yield request.param


# ---- cholesky -------------------------------------------------------------------------------

def test_cholesky_lower_upper_batched(dtype):
    for a in (_hpd(5, 5, dtype=dtype), _hpd(2, 3, 4, 4, dtype=dtype)):
        for upper in (False, True):
            want = np.linalg.cholesky(a, upper=upper)
            for f in _modes(lambda x, u=upper: xnp.linalg.cholesky(x, upper=u)):
                got = f(a)
                assert np.dtype(got.dtype) == dtype and got.shape == a.shape
                _close(got, want, dtype)


def test_cholesky_is_of_the_hermitian_part(dtype):
    """As JAX: the input is symmetrized ((a + a^H) / 2) first; lax.linalg.cholesky with
    symmetrize_input=False reads the lower triangle only (the opcode's contract)."""
    h = _hpd(4, 4, dtype=dtype)
    skew = _c(4, 4, dtype=dtype)
    skew = (skew - _mH(skew)) / 2      # anti-Hermitian: dropped by symmetrizing
    for f in _modes(xnp.linalg.cholesky):
        _close(f(h + skew), np.linalg.cholesky(h), dtype)
    junk = h.copy()
    junk[np.triu_indices(4, 1)] = 5 - 7j
    for f in _modes(lambda x: xlax.linalg.cholesky(x, symmetrize_input=False)):
        _close(f(junk), np.linalg.cholesky(h), dtype)


def test_cholesky_not_positive_definite_is_nan(dtype):
    bad = np.array([[1, 2j], [-2j, 1]], dtype)           # Hermitian, eigenvalues -1 and 3
    for f in _modes(xnp.linalg.cholesky):
        assert np.isnan(np.asarray(f(bad))).all()


def test_scipy_cholesky_cho_factor_cho_solve(dtype):
    a, b, v = _hpd(5, 5, dtype=dtype), _c(5, 3, dtype=dtype), _c(5, dtype=dtype)
    for lower in (True, False):
        for f in _modes(lambda x, lo=lower: xsl.cholesky(x, lower=lo)):
            _close(f(a), sl.cholesky(a, lower=lower), dtype)
        c, lo = xsl.cho_factor(a, lower=lower)
        assert lo == lower
        _close(c, sl.cholesky(a, lower=lower), dtype)
        for rhs in (b, v):
            want = np.linalg.solve(a, rhs)
            for f in _modes(lambda x, r, lw=lower: xsl.cho_solve(xsl.cho_factor(x, lower=lw), r)):
                got = f(a, rhs)
                assert np.dtype(got.dtype) == dtype and got.shape == rhs.shape
                _close(got, want, dtype, 10)
            _close(xsl.solve(a, rhs, assume_a="pos", lower=lower), want, dtype, 10)


# ---- eigh -------------------------------------------------------------------------------------

def _check_eigh(w, v, a, dtype):
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == REAL[dtype] and v.dtype == dtype
    _close(w, np.linalg.eigvalsh(a), dtype, 10)
    _close(a @ v, v * w[..., None, :], dtype, 10)                     # A v = v diag(w)
    _close(_mH(v) @ v, np.broadcast_to(np.eye(a.shape[-1]), a.shape), dtype, 10)


def test_eigh_batched_and_uplo(dtype):
    for a in (_herm(6, 6, dtype=dtype), _herm(2, 3, 5, 5, dtype=dtype)):
        for uplo in ("L", "U"):
            for f in _modes(lambda x, u=uplo: xnp.linalg.eigh(x, UPLO=u)):
                w, v = f(a)
                _check_eigh(w, v, a, dtype)
            for f in _modes(lambda x, u=uplo: xnp.linalg.eigvalsh(x, UPLO=u)):
                got = f(a)
                assert np.dtype(got.dtype) == REAL[dtype]
                _close(got, np.linalg.eigvalsh(a), dtype, 10)


def test_eigh_without_symmetrizing_reads_one_triangle(dtype):
    """NumPy's UPLO: only that triangle is read (symmetrize_input=False, as numpy does)."""
    h = _herm(4, 4, dtype=dtype)
    for uplo in ("L", "U"):
        junk = h.copy()
        idx = np.triu_indices(4, 1) if uplo == "L" else np.tril_indices(4, -1)
        junk[idx] = 9 + 3j
        want = np.linalg.eigvalsh(junk, UPLO=uplo)
        for f in _modes(lambda x, u=uplo: xnp.linalg.eigh(x, UPLO=u, symmetrize_input=False)):
            w, v = f(junk)
            _close(w, want, dtype, 10)
            _check_eigh(w, v, h, dtype)


def test_scipy_and_lax_eigh(dtype):
    a = _herm(5, 5, dtype=dtype)
    for lower in (True, False):
        w, v = xsl.eigh(a, lower=lower)
        _check_eigh(w, v, a, dtype)
        _close(xsl.eigh(a, lower=lower, eigvals_only=True), sl.eigh(a, eigvals_only=True),
               dtype, 10)
    for f in _modes(xlax.linalg.eigh):
        v, w = f(a)
        _check_eigh(w, v, a, dtype)


def test_eigh_cholesky_qr_under_vmap(dtype):
    a = _herm(3, 4, 4, dtype=dtype)
    w, v = xp.vmap(xnp.linalg.eigh)(a)
    _check_eigh(w, v, a, dtype)
    h = _hpd(3, 4, 4, dtype=dtype)
    _close(xp.vmap(xnp.linalg.cholesky)(h), np.linalg.cholesky(h), dtype)
    x = _c(3, 5, 3, dtype=dtype)
    q, r = xp.vmap(xnp.linalg.qr)(x)
    _check_qr(q, r, x, dtype, False)


# ---- qr ---------------------------------------------------------------------------------------

def _check_qr(q, r, a, dtype, complete):
    q, r = np.asarray(q), np.asarray(r)
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    assert q.dtype == r.dtype == dtype
    assert q.shape == a.shape[:-2] + (m, k) and r.shape == a.shape[:-2] + (k, n)
    _close(q @ r, a, dtype, 10)                                                  # Q R = A
    _close(_mH(q) @ q, np.broadcast_to(np.eye(k), a.shape[:-2] + (k, k)), dtype, 10)
    assert np.all(np.tril(r, -1) == 0)                                           # upper
    want_r = np.linalg.qr(a, mode="complete" if complete else "reduced")[1]
    _close(np.abs(r), np.abs(want_r), dtype, 10)      # R up to the phases of its rows


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 2, 3, 5)])
def test_qr_modes(shape, dtype):
    a = _c(*shape, dtype=dtype)
    for mode in ("reduced", "complete"):
        for f in _modes(lambda x, md=mode: xnp.linalg.qr(x, md)):
            q, r = f(a)
            _check_qr(q, r, a, dtype, mode == "complete")
    for f in _modes(lambda x: xnp.linalg.qr(x, "r")):
        r = np.asarray(f(a))
        assert r.dtype == dtype and np.all(np.tril(r, -1) == 0)
        _close(np.abs(r), np.abs(np.linalg.qr(a, mode="r")), dtype, 10)


def test_scipy_and_lax_qr(dtype):
    a = _c(6, 4, dtype=dtype)
    q, r = xsl.qr(a)
    _check_qr(q, r, a, dtype, True)
    q, r = xsl.qr(a, mode="economic")
    _check_qr(q, r, a, dtype, False)
    (r,) = xsl.qr(a, mode="r")
    _close(np.abs(np.asarray(r)), np.abs(sl.qr(a, mode="r")[0]), dtype, 10)
    for full in (True, False):
        for f in _modes(lambda x, fm=full: xlax.linalg.qr(x, full_matrices=fm)):
            q, r = f(a)
            _check_qr(q, r, a, dtype, full)


# ---- derivatives against JAX's ----------------------------------------------------------------

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _against_jax(fx, fj, a, dtype, scale=10, jit=True, hermitian_only=False):
    """jvp and vjp of fx (and of jit(fx)) against jax's of fj, at a (hermitian_only: the
    jvp along a Hermitian tangent alone)."""
    da = _c(*a.shape, dtype=dtype)
    if hermitian_only:
        da = ((da + _mH(da)) / 2).astype(dtype)
    with jax.enable_x64(dtype == np.complex128):
        out_j, t_j = jax.jvp(fj, (a,), (da,))
        cts = jax.tree.map(lambda o: (_c(*o.shape, dtype=dtype) if o.dtype.kind == "c" else
                                      RNG.standard_normal(o.shape).astype(o.dtype)), out_j)
        (g_j,) = jax.vjp(fj, a)[1](cts)
    for f in ([fx, xp.jit(fx)] if jit else [fx]):
        _, t_x = xp.jvp(f, (a,), (da,))
        for got, want in zip(jax.tree.leaves(t_x), jax.tree.leaves(t_j)):
            _close(got, np.asarray(want), dtype, scale)
        if hermitian_only:
            continue
        (g_x,) = xp.vjp(f, a)[1](cts)
        _close(g_x, np.asarray(g_j), dtype, scale)


def test_cholesky_derivatives_match_jax(dtype):
    a = _hpd(4, 4, dtype=dtype)
    for upper in (False, True):
        _against_jax(lambda x, u=upper: xnp.linalg.cholesky(x, upper=u),
                     lambda x, u=upper: jnp.linalg.cholesky(x, upper=u), a, dtype)
    ab = _hpd(2, 3, 3, dtype=dtype)
    _against_jax(xnp.linalg.cholesky, jnp.linalg.cholesky, ab, dtype)
    # jax.scipy.linalg.cho_factor reads one triangle, xlapy's symmetrizes first (as
    # numpy.linalg.cholesky): their derivatives agree along Hermitian tangents
    b = _c(4, 2, dtype=dtype)
    _against_jax(lambda x: xsl.cho_solve(xsl.cho_factor(x), b),
                 lambda x: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(x), b),
                 a, dtype, 100, hermitian_only=True)


def test_eigh_derivatives_match_jax(dtype):
    """Eigenvalues, and gauge-invariant functions of the eigenvectors (|v|^2, the
    projectors v v^H): the vectors' phases are LAPACK's choice."""
    a = _herm(4, 4, dtype=dtype)
    wts = RNG.standard_normal((4, 4)).astype(REAL[dtype])
    _against_jax(xnp.linalg.eigvalsh, jnp.linalg.eigvalsh, a, dtype)
    _against_jax(lambda x: xnp.abs(xnp.linalg.eigh(x)[1]) ** 2 * wts,
                 lambda x: jnp.abs(jnp.linalg.eigh(x)[1]) ** 2 * wts, a, dtype, 100)

    def proj_x(x):
        v = xnp.linalg.eigh(x)[1][:, :2]
        return v @ xnp.conj(v.T)

    def proj_j(x):
        v = jnp.linalg.eigh(x)[1][:, :2]
        return v @ jnp.conj(v.T)
    _against_jax(proj_x, proj_j, a, dtype, 100)
    g = xp.grad(lambda x: xnp.sum(xnp.linalg.eigvalsh(x) * wts[0]))(a)
    with jax.enable_x64(dtype == np.complex128):
        gj = jax.grad(lambda x: jnp.sum(jnp.linalg.eigvalsh(x) * wts[0]))(a)
    _close(g, np.asarray(gj), dtype, 10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr_derivatives_match_jax(shape, dtype):
    a = _c(*shape, dtype=dtype)
    for mode in ("reduced", "complete"):
        _against_jax(lambda x, md=mode: xnp.linalg.qr(x, md),
                     lambda x, md=mode: tuple(jnp.linalg.qr(x, md)), a, dtype, 100)


def test_custom_jvp_reverse_mode_of_complex_arguments():
    """Regression: custom_jvp's reverse mode dropped complex arguments (zero cotangents),
    which made complex QR's VJP silently zero."""
    @xp.custom_jvp
    def f(x):
        return x * x

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2 * x * t

    x = np.array([1 + 2j, -0.5 + 1j], np.complex64)
    ct = np.array([0.3 - 1j, 2 + 0.5j], np.complex64)
    (g,) = xp.vjp(f, x)[1](ct)
    np.testing.assert_allclose(np.asarray(g), 2 * x * ct, rtol=1e-6)   # JAX's: the transpose
    (gj,) = jax.vjp(lambda z: z * z, x)[1](ct)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-6)


# ---- what still refuses complex matrices ------------------------------------------------------

C = np.array([[2 + 1j, 0.5], [0.3j, 3 - 0.5j]], np.complex64)


@pytest.mark.parametrize("name, call", [   # (svd and what is built on it, and scipy's lu,
    ("lax.linalg.lu", lambda: xlax.linalg.lu(C)),          # take complex matrices now:
    ("lax.linalg.lu", lambda: xp.jit(xlax.linalg.lu)(C)),  # test_linalg_svd_complex.py)
    ("lax.linalg.triangular_solve",
     lambda: xlax.linalg.triangular_solve(C, C, left_side=True, lower=True)),
])
def test_the_rest_still_refuse_complex_by_name(name, call):
    with pytest.raises(XlapyError, match=f"{name}: complex matrices are not supported"):
        call()


def test_bad_uplo_is_refused():
    with pytest.raises(XlapyError, match="linalg.eigh: UPLO must be 'L' or 'U'"):
        xnp.linalg.eigh(C, UPLO="X")
