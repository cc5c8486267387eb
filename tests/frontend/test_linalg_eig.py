"""xlapy.numpy.linalg.eig / eigvals (LAPACK geev): eigen-decomposition properties
(A v = w v, unit eigenvectors), eigenvalues against numpy's (sorted), dtypes and shapes as
jax.numpy.linalg's, batches, jit, vmap, NaN handling, and the eigenvalues' derivatives
against JAX's. (That the custom-call runs bitwise as jaxlib's kernel, on the interpreter
and the cpu backend, is tests/backends/cpu/test_lapack_calls.py's.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

RNG = np.random.default_rng(5)


def _matrix(dtype, *shape):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _sorted(w):
    w = np.asarray(w)
    return np.take_along_axis(w, np.lexsort((w.imag.round(4), w.real.round(4))), -1)


def _check_decomposition(a, w, v, tol):
    a, w, v = (np.asarray(x).astype(np.complex128) for x in (a, w, v))
    scale = max(1.0, np.abs(a).max())
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * scale * a.shape[-1])
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol * 10)
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a)),
                               atol=tol * scale * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_properties_and_dtypes(dtype):
    a = _matrix(dtype, 3, 6, 6)
    with xp.enable_x64(), jax.enable_x64():
        w, v = xnp.linalg.eig(a)
        jw, jv = jnp.linalg.eig(a)
        wvals = xnp.linalg.eigvals(a)
    assert (np.asarray(w).dtype, np.asarray(w).shape) == (jw.dtype, jw.shape)
    assert (np.asarray(v).dtype, np.asarray(v).shape) == (jv.dtype, jv.shape)
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    _check_decomposition(a, w, v, tol)
    np.testing.assert_allclose(np.asarray(w), np.asarray(jw), atol=tol * 10)
    np.testing.assert_allclose(np.asarray(wvals), np.asarray(w), atol=0)


def test_real_matrix_eigenvalues_are_exact_conjugate_pairs():
    rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], np.float32)
    w, v = (np.asarray(x) for x in xnp.linalg.eig(rot))
    np.testing.assert_allclose(w, np.array([2j, -2j, 3], np.complex64), atol=1e-6)
    assert w[1] == np.conj(w[0]) and w[2].imag == 0 and w[0].real == 0
    np.testing.assert_array_equal(v[:, 1], np.conj(v[:, 0]))
    _check_decomposition(rot, w, v, 1e-6)


def test_default_dtypes_and_promotion():
    w = xnp.linalg.eigvals(np.array([[2, 1], [1, 2]], np.int32))
    assert np.asarray(w).dtype == np.complex64
    np.testing.assert_allclose(_sorted(w), [1, 3], atol=1e-6)
    # (jax's geev takes no float16; xlapy computes it in float32)
    w16 = xnp.linalg.eigvals(np.diag(np.float16([1, 2])))
    assert np.asarray(w16).dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(w16), [1, 2])


def test_under_jit_and_vmap():
    a = _matrix(np.float32, 4, 5, 5)
    w, v = xp.jit(xnp.linalg.eig)(a)
    _check_decomposition(a, w, v, 1e-4)
    wv = xp.vmap(xnp.linalg.eigvals)(a)
    np.testing.assert_allclose(np.asarray(wv), np.asarray(w), atol=1e-5)
    c = _matrix(np.complex64, 2, 4, 4)
    _check_decomposition(c, *xp.jit(xnp.linalg.eig)(c), 1e-4)


def test_nonfinite_and_empty():
    a = _matrix(np.float32, 3, 3, 3)
    a[1, 0, 2] = np.inf
    w, v = xnp.linalg.eig(a)
    jw, jv = jnp.linalg.eig(a)
    np.testing.assert_array_equal(np.asarray(w), np.asarray(jw))   # NaN+NaNj for a[1]
    assert np.isnan(np.asarray(w)[1]).all() and np.isnan(np.asarray(v)[1]).all()
    _check_decomposition(a[0], np.asarray(w)[0], np.asarray(v)[0], 1e-4)
    w0, v0 = xnp.linalg.eig(np.zeros((2, 0, 0), np.float32))
    assert np.asarray(w0).shape == (2, 0) and np.asarray(v0).shape == (2, 0, 0)


def test_eigenvalue_derivatives_as_jax():
    a = _matrix(np.float32, 4, 4)
    t = _matrix(np.float32, 4, 4)

    def loss(m, np_):
        w = np_.linalg.eigvals(m)
        return np_.sum(np_.abs(w) ** 2 + w.real)

    np.testing.assert_allclose(np.asarray(xp.grad(lambda m: loss(m, xnp))(a)),
                               np.asarray(jax.grad(lambda m: loss(m, jnp))(a)), atol=2e-4)
    _, got = xp.jvp(xnp.linalg.eigvals, (a,), (t,))
    _, want = jax.jvp(jnp.linalg.eigvals, (a,), (t,))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=2e-4)
    c, tc = _matrix(np.complex64, 3, 3), _matrix(np.complex64, 3, 3)
    _, got = xp.jvp(xnp.linalg.eigvals, (c,), (tc,))
    _, want = jax.jvp(jnp.linalg.eigvals, (c,), (tc,))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=2e-4)
    for f in (lambda m: xnp.sum(xnp.linalg.eig(m)[1].real),   # as JAX: eig's w too
              lambda m: xnp.sum(xnp.linalg.eig(m)[0].real)):
        with pytest.raises(XlapyError, match="derivatives of eigenvectors"):
            xp.grad(f)(a)
        with pytest.raises(XlapyError, match="derivatives of eigenvectors"):
            xp.jvp(f, (a,), (t,))


def test_errors():
    with pytest.raises(XlapyError, match="square matrices"):
        xnp.linalg.eig(np.ones((3, 4), np.float32))
    with pytest.raises(XlapyError, match="square matrices"):
        xnp.linalg.eigvals(np.ones(3, np.float32))
