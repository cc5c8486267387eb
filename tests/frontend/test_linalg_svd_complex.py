"""Complex svd (LAPACK's cgesdd/zgesdd through the lapack_[cz]gesdd_ffi custom-call; cgesvd/
zgesvd for JAX's QR algorithm) and what is built on it: xlapy.numpy.linalg svd, svdvals,
pinv, lstsq, matrix_rank, norm (2, -2, nuc) and cond, xlapy.lax.linalg.svd and
xlapy.scipy.linalg svd (and lu) on c64/c128 matrices against NumPy/SciPy, eager, under jit
(cpu backend) and on the interpreter, tall, wide, square and batched; the modules jax lowers
for them on both backends against jax.jit (bitwise for the custom-calls); and the
derivatives against jax.jvp / jax.vjp, on phase-independent quantities (singular values,
the reconstruction U S V^H, projectors, |U|^2): the singular vectors' phases are LAPACK's
choice."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import scipy.linalg as sl

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
import xlapy.scipy.linalg as xsl
from xlapy.errors import XlapyError

RNG = np.random.default_rng(31)
TOL = {np.complex64: 1e-4, np.complex128: 1e-10}
REAL = {np.complex64: np.float32, np.complex128: np.float64}


def _c(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _low_rank(m, n, r, dtype):
    """An m x n complex matrix of rank r."""
    return (_c(m, r, dtype=np.complex128) @ _c(r, n, dtype=np.complex128)).astype(dtype)


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


# ---- svd --------------------------------------------------------------------------------------

def _check_svd(u, s, vh, a, dtype, full):
    u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    assert u.dtype == vh.dtype == dtype and s.dtype == REAL[dtype]
    assert u.shape == batch + ((m, m) if full else (m, k))
    assert vh.shape == batch + ((n, n) if full else (k, n))
    assert s.shape == batch + (k,)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)          # descending
    _close(s, np.linalg.svd(a, compute_uv=False), dtype, 10)
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, 10)   # U S V^H = A
    _close(_mH(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), batch + (u.shape[-1],) * 2),
           dtype, 10)
    _close(vh @ _mH(vh), np.broadcast_to(np.eye(vh.shape[-2]), batch + (vh.shape[-2],) * 2),
           dtype, 10)


SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
def test_svd(shape, dtype):
    a = _c(*shape, dtype=dtype)
    for full in (True, False):
        for f in _modes(lambda x, fm=full: xnp.linalg.svd(x, full_matrices=fm)):
            _check_svd(*f(a), a, dtype, full)
    want = np.linalg.svd(a, compute_uv=False)
    for f in _modes(lambda x: xnp.linalg.svd(x, compute_uv=False)):
        s = np.asarray(f(a))
        assert s.dtype == REAL[dtype]
        _close(s, want, dtype, 10)
    _close(xnp.linalg.svdvals(a), want, dtype, 10)


def test_lax_scipy_and_vmapped_svd(dtype):
    a = _c(2, 6, 4, dtype=dtype)
    for full in (True, False):
        for f in _modes(lambda x, fm=full: xlax.linalg.svd(x, full_matrices=fm)):
            _check_svd(*f(a), a, dtype, full)
        _check_svd(*xsl.svd(a, full_matrices=full), a, dtype, full)
    _close(xlax.linalg.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), dtype, 10)
    _close(xsl.svd(a[0], compute_uv=False), sl.svd(a[0], compute_uv=False), dtype, 10)
    _check_svd(*xp.vmap(lambda x: xnp.linalg.svd(x, full_matrices=False))(a), a, dtype, False)
    _check_svd(*xp.jit(xp.vmap(xnp.linalg.svd))(a), a, dtype, True)


def test_svd_of_a_zero_and_a_one_by_one_matrix(dtype):
    z = np.zeros((3, 2), dtype)
    for f in _modes(xnp.linalg.svd):
        u, s, vh = f(z)
        assert np.all(np.asarray(s) == 0)
        _check_svd(u, s, vh, z, dtype, True)
    one = np.array([[3 - 4j]], dtype)
    for f in _modes(xnp.linalg.svd):
        u, s, vh = f(one)
        _close(s, [5.0], dtype)
        _close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), one, dtype)


# ---- pinv, lstsq, matrix_rank, norm, cond -----------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)])
def test_pinv(shape, dtype):
    a = _c(*shape, dtype=dtype)
    want = np.linalg.pinv(a)
    for f in _modes(xnp.linalg.pinv):
        p = f(a)
        assert np.dtype(p.dtype) == dtype and p.shape == want.shape
        _close(p, want, dtype, 10)
    low = _low_rank(5, 4, 2, dtype)                          # the cutoff drops the rest
    _close(xnp.linalg.pinv(low, rtol=1e-3), np.linalg.pinv(low, rcond=1e-3), dtype, 100)
    _close(xnp.linalg.pinv(a, rtol=0.5), np.linalg.pinv(a, rcond=0.5), dtype, 10)


def test_lstsq_against_numpy(dtype):
    for a, b in [(_c(6, 3, dtype=dtype), _c(6, dtype=dtype)),         # tall, full rank
                 (_c(6, 3, dtype=dtype), _c(6, 2, dtype=dtype))]:
        x_n, res_n, rank_n, s_n = np.linalg.lstsq(a, b, rcond=None)
        for f in _modes(xnp.linalg.lstsq):
            x, res, rank, s = f(a, b)
            assert np.dtype(x.dtype) == dtype and np.dtype(res.dtype) == REAL[dtype]
            assert np.dtype(s.dtype) == REAL[dtype]
            _close(x, x_n, dtype, 10)
            _close(np.ravel(res), res_n, dtype, 100)
            assert int(rank) == rank_n
            _close(s, s_n, dtype, 10)
    # wide, and rank deficient (an explicit rcond: the cutoff): the minimum-norm solution,
    # the rank and s as NumPy's (NumPy's residuals are empty there; xlapy's, as JAX's, are
    # the squared norms of the columns of a x - b)
    for a, b, rcond in [(_c(3, 5, dtype=dtype), _c(3, dtype=dtype), None),
                        (_low_rank(6, 4, 2, dtype), _c(6, 2, dtype=dtype), 1e-3)]:
        x_n, _, rank_n, s_n = np.linalg.lstsq(a, b, rcond=rcond)
        for f in _modes(lambda p, q, r=rcond: xnp.linalg.lstsq(p, q, rcond=r)):
            x, res, rank, s = f(a, b)
            _close(x, x_n, dtype, 100)
            assert int(rank) == rank_n
            _close(s, s_n, dtype, 10)
            want_res = np.atleast_1d(np.sum(np.abs(a @ x_n - b) ** 2, axis=0))
            _close(np.ravel(res), want_res, dtype, 1000)
    # a real matrix with a complex right side (and the other way round): promoted
    a, b = RNG.standard_normal((5, 3)).astype(REAL[dtype]), _c(5, dtype=dtype)
    x = xnp.linalg.lstsq(a, b)[0]
    assert np.dtype(x.dtype) == dtype
    _close(x, np.linalg.lstsq(a, b, rcond=None)[0], dtype, 10)
    a, b = _c(5, 3, dtype=dtype), RNG.standard_normal(5).astype(REAL[dtype])
    _close(xnp.linalg.lstsq(a, b)[0], np.linalg.lstsq(a, b, rcond=None)[0], dtype, 10)


def test_matrix_rank(dtype):
    cases = [_c(4, 4, dtype=dtype), _c(5, 3, dtype=dtype), _low_rank(5, 4, 2, dtype),
             _low_rank(3, 6, 1, dtype), np.stack([_low_rank(4, 4, r, dtype) for r in (1, 3)])]
    for a in cases:
        for f in _modes(xnp.linalg.matrix_rank):
            np.testing.assert_array_equal(np.asarray(f(a)), np.linalg.matrix_rank(a))
    a = _c(4, 4, dtype=dtype)
    s = np.linalg.svd(a, compute_uv=False)
    tol = float((s[1] + s[2]) / 2)                       # between the 2nd and 3rd values
    assert int(xnp.linalg.matrix_rank(a, tol=tol)) == 2 == np.linalg.matrix_rank(a, tol=tol)
    assert int(xnp.linalg.matrix_rank(a, rtol=tol / s[0])) == 2


def test_norms(dtype):
    a = _c(4, 3, dtype=dtype)
    for ord_ in (2, -2, "nuc", None, "fro", 1, -1, np.inf, -np.inf):
        want = np.linalg.norm(a, ord_)
        for f in _modes(lambda x, o=ord_: xnp.linalg.norm(x, o)):
            r = f(a)
            assert np.dtype(r.dtype) == REAL[dtype]
            _close(r, want, dtype, 10)
    b = _c(3, 2, 5, dtype=dtype)
    for ord_ in (2, -2, "nuc"):
        for axis in ((0, 2), (2, 0), (-1, -2)):
            for keepdims in (False, True):
                want = np.linalg.norm(b, ord_, axis=axis, keepdims=keepdims)
                for f in _modes(lambda x, o=ord_, ax=axis, k=keepdims:
                                xnp.linalg.norm(x, o, axis=ax, keepdims=k)):
                    r = f(b)
                    assert r.shape == want.shape
                    _close(r, want, dtype, 10)
    _close(xnp.linalg.matrix_norm(b, ord=2), np.linalg.matrix_norm(b, ord=2), dtype, 10)
    _close(xnp.linalg.matrix_norm(b, ord="nuc"), np.linalg.matrix_norm(b, ord="nuc"), dtype, 10)


def test_cond(dtype):
    a = _c(2, 4, 4, dtype=dtype)
    for p in (None, 2, -2, "fro", 1, np.inf):
        want = np.linalg.cond(a, p)
        for f in _modes(lambda x, q=p: xnp.linalg.cond(x, q)):
            r = f(a)
            assert np.dtype(r.dtype) == REAL[dtype]
            _close(r, want, dtype, 100)
    tall = _c(5, 3, dtype=dtype)
    _close(xnp.linalg.cond(tall), np.linalg.cond(tall), dtype, 100)


def test_scipy_lu(dtype):
    for a in (_c(4, 4, dtype=dtype), _c(5, 3, dtype=dtype), _c(3, 5, dtype=dtype)):
        p_s, l_s, u_s = sl.lu(a)
        for f in _modes(xsl.lu):
            p, low, up = (np.asarray(v) for v in f(a))
            assert p.dtype == REAL[dtype] and low.dtype == up.dtype == dtype
            np.testing.assert_array_equal(p, p_s)
            _close(low, l_s, dtype, 10)
            _close(up, u_s, dtype, 10)
            _close(p @ low @ up, a, dtype, 10)
        pl, up = xsl.lu(a, permute_l=True)
        _close(np.asarray(pl) @ np.asarray(up), a, dtype, 10)


# ---- what jax lowers: lapack_[cz]gesdd_ffi, lapack_[cz]gesvd_ffi ------------------------------

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _run_all(f, *args, bitwise=True):
    """(HLO text, interpreter outputs) of f lowered by jax, run on the interpreter and the
    cpu backend against jax.jit (tests/backends/cpu/jax_lowered.py, loaded by its path:
    this directory's conftest does not register the cpu tests' helpers)."""
    name = "xlapy_tests_cpu_jax_lowered"
    if name not in sys.modules:
        path = pathlib.Path(__file__).parents[1] / "backends" / "cpu" / "jax_lowered.py"
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name].run_lowered(jax, f, *args, bitwise=bitwise)[:2]


_QR = {"algorithm": jax.lax.linalg.SvdAlgorithm.QR}
JAX_CASES = {   # name: (function, shape, the target it must call, bitwise)
    "full": (jnp.linalg.svd, (2, 5, 3), "gesdd", True),
    "thin": (lambda x: jnp.linalg.svd(x, full_matrices=False), (3, 6), "gesdd", True),
    "values": (lambda x: jnp.linalg.svd(x, compute_uv=False), (4, 4), "gesdd", True),
    "qr_full": (lambda x: jax.lax.linalg.svd(x, **_QR), (3, 5), "gesvd", True),
    "qr_thin": (lambda x: jax.lax.linalg.svd(x, full_matrices=False, **_QR), (2, 5, 3),
                "gesvd", True),
    "qr_values": (lambda x: jax.lax.linalg.svd(x, compute_uv=False, **_QR), (4, 4), "gesvd",
                  True),
    "pinv": (jnp.linalg.pinv, (5, 3), "gesdd", False),
    "matrix_rank": (jnp.linalg.matrix_rank, (2, 4, 4), "gesdd", True),
    "norm_nuc": (lambda x: jnp.linalg.norm(x, "nuc"), (3, 5), "gesdd", False),
}


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_jax_complex_svd_modules(name, dt):
    f, shape, routine, bitwise = JAX_CASES[name]
    text, _ = _run_all(f, _c(*shape, dtype=dt), bitwise=bitwise)
    assert f"lapack_{'c' if dt == np.complex64 else 'z'}{routine}_ffi" in text


def test_jax_complex_svd_results_are_right():
    a = _c(2, 6, 4, dtype=np.complex128)
    _, (u, s, vh) = _run_all(lambda x: jnp.linalg.svd(x, full_matrices=False), a)
    _check_svd(u, s, vh, a, np.complex128, False)
    _, (u, s, vh) = _run_all(lambda x: jax.lax.linalg.svd(x, **_QR), a)
    _check_svd(u, s, vh, a, np.complex128, True)


def test_jax_complex_svd_of_empty_and_nan_matrices():
    for shape in [(0, 3, 3), (2, 0, 3), (1, 1)]:
        _run_all(jnp.linalg.svd, _c(*shape))
    bad = _c(3, 3)
    bad[1, 1] = np.nan
    _run_all(lambda x: jnp.linalg.svd(x, compute_uv=False), bad)


# ---- derivatives against JAX's ----------------------------------------------------------------

def _against_jax(fx, fj, a, dtype, scale=10):
    """jvp and vjp of fx (and of jit(fx)) against jax's of fj, at a."""
    da = _c(*a.shape, dtype=dtype)
    with jax.enable_x64(dtype == np.complex128):
        _, t_j = jax.jvp(fj, (a,), (da,))
        out_j = jax.eval_shape(fj, a)
        cts = jax.tree.map(lambda o: (_c(*o.shape, dtype=o.dtype) if o.dtype.kind == "c" else
                                      RNG.standard_normal(o.shape).astype(o.dtype)), out_j)
        (g_j,) = jax.vjp(fj, a)[1](cts)
    for f in (fx, xp.jit(fx)):
        _, t_x = xp.jvp(f, (a,), (da,))
        for got, want in zip(jax.tree.leaves(t_x), jax.tree.leaves(t_j)):
            _close(got, np.asarray(want), dtype, scale)
        (g_x,) = xp.vjp(f, a)[1](cts)
        _close(g_x, np.asarray(g_j), dtype, scale)


def _phase_free(np_, full=False):
    """Functions of the SVD that do not depend on the singular vectors' phases."""
    def recon(x):                               # U S V^H
        u, s, vh = np_.linalg.svd(x, full_matrices=full)
        k = s.shape[-1]
        return (u[..., :, :k] * s[..., None, :].astype(u.dtype)) @ vh[..., :k, :]

    def projectors(x):                          # U U^H, V V^H of the thin factors
        u, _, vh = np_.linalg.svd(x, full_matrices=False)
        return (u @ np_.conj(np_.swapaxes(u, -1, -2)),
                np_.conj(np_.swapaxes(vh, -1, -2)) @ vh)

    def moduli(x):                              # |U|^2, |V^H|^2 (and s)
        u, s, vh = np_.linalg.svd(x, full_matrices=False)
        return np_.abs(u) ** 2, np_.abs(vh) ** 2, s
    return recon, projectors, moduli


@pytest.mark.parametrize("shape, dt", [
    ((5, 3), np.complex64), ((3, 5), np.complex128), ((4, 4), np.complex128),
    ((2, 4, 3), np.complex64)], ids=["tall-c64", "wide-c128", "square-c128", "batch-c64"])
def test_svd_derivatives_match_jax(shape, dt):
    # (each shape with one dtype: the rules are the same code for both, about 3 s a case)
    with xp.enable_x64(dt == np.complex128):
        _svd_derivatives_match_jax(shape, dt)


def _svd_derivatives_match_jax(shape, dtype):
    a = _c(*shape, dtype=dtype)
    _against_jax(lambda x: xnp.linalg.svd(x, compute_uv=False),
                 lambda x: jnp.linalg.svd(x, compute_uv=False), a, dtype)
    for fx, fj in zip(_phase_free(xnp), _phase_free(jnp)):
        _against_jax(fx, fj, a, dtype, 100)
    if shape[-1] == shape[-2]:                  # full_matrices=True: square matrices only
        _against_jax(_phase_free(xnp, True)[0], _phase_free(jnp, True)[0], a, dtype, 100)


def test_derivatives_of_what_is_built_on_svd(dtype):
    a = _c(5, 3, dtype=dtype)
    _against_jax(xnp.linalg.pinv, jnp.linalg.pinv, a, dtype, 100)
    for o in (2, "nuc"):
        _against_jax(lambda x, q=o: xnp.linalg.norm(x, q), lambda x, q=o: jnp.linalg.norm(x, q),
                     a, dtype, 100)
    b = _c(5, 2, dtype=dtype)
    _against_jax(lambda x: xnp.linalg.lstsq(x, b)[0], lambda x: jnp.linalg.lstsq(x, b)[0],
                 a, dtype, 100)
    g = xp.grad(lambda x: xnp.sum(xnp.linalg.svd(x, compute_uv=False)))(a)
    with jax.enable_x64(dtype == np.complex128):
        gj = jax.grad(lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False)))(a)
    _close(g, np.asarray(gj), dtype, 10)


def test_full_matrices_derivative_of_a_non_square_matrix_is_refused(dtype):
    a = _c(4, 3, dtype=dtype)
    with pytest.raises(XlapyError, match="svd: the derivative with full_matrices=True"):
        xp.jvp(xnp.linalg.svd, (a,), (a,))
    with pytest.raises(XlapyError, match="svd: the derivative with full_matrices=True"):
        xp.vjp(lambda x: xnp.linalg.svd(x)[0], a)[1](np.ones((4, 4), dtype))
