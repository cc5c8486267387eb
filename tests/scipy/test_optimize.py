"""xlapy.scipy.optimize.minimize (BFGS) against scipy.optimize.minimize and
jax.scipy.optimize.minimize: minimizers, values, gradients, the inverse-Hessian estimate on
quadratics, result dtypes, status codes, jit."""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.optimize as jo
import numpy as np
import pytest
import scipy.optimize as so

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.scipy import optimize as xo


def rosen(x, np_=xnp):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def quadratic(x, a, b, np_=xnp):
    return 0.5 * np_.dot(x, np_.dot(a, x)) - np_.dot(b, x)


A = np.array([[4.0, 1.0, 0.0, 0.2], [1.0, 3.0, 0.5, 0.0], [0.0, 0.5, 2.0, 0.3],
              [0.2, 0.0, 0.3, 1.5]])
B = np.array([1.0, 2.0, 3.0, -1.0])


@pytest.mark.parametrize("x0", [[0.0, 0.0, 0.0, 0.0], [-1.2, 1.0, -1.2, 1.0]])
def test_rosenbrock_f64_as_scipy(x0):
    with xp.enable_x64():
        x0 = np.array(x0)
        got = xo.minimize(rosen, x0)
        want = so.minimize(lambda x: rosen(x, np), x0, method="BFGS")
        assert bool(got.success) and int(got.status) == 0 and want.success
        np.testing.assert_allclose(np.asarray(got.x), want.x, atol=1e-4)
        np.testing.assert_allclose(np.asarray(got.x), np.ones(4), atol=1e-5)
        assert float(got.fun) < 1e-10 and np.abs(np.asarray(got.jac)).max() < 1e-5
        assert int(got.nit) <= 2 * want.nit and int(got.nfev) == int(got.njev) > int(got.nit)
        np.testing.assert_allclose(np.asarray(got.jac),
                                   np.asarray(xp.grad(rosen)(np.asarray(got.x))), atol=1e-12)


def test_rosenbrock_f32_dtypes_as_jax():
    x0 = np.zeros(4, np.float32)
    got = xo.minimize(rosen, x0)
    want = jo.minimize(lambda x: rosen(x, jnp), x0, method="BFGS")
    for name in got._fields:
        g, w = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
        assert (g.dtype, g.shape) == (w.dtype, w.shape), name
    # JAX's f32 run stops early (its line search reports a failed zoom); xlapy's converges
    assert bool(got.success)
    np.testing.assert_allclose(np.asarray(got.x), np.ones(4), atol=2e-3)
    np.testing.assert_allclose(np.asarray(want.x), np.ones(4), atol=5e-2)


def test_quadratic_minimizer_and_inverse_hessian():
    # (jax.scipy.optimize stops this one after 3 steps with status 3, a failed zoom)
    with xp.enable_x64():
        got = xo.minimize(quadratic, np.zeros(4), args=(A, B))
        want = so.minimize(quadratic, np.zeros(4), args=(A, B, np), method="BFGS")
        exact = np.linalg.solve(A, B)
        # (gtol=1e-5 bounds the gradient's max norm, as scipy's: x is as close as scipy's)
        np.testing.assert_allclose(np.asarray(got.x), exact, atol=1e-5)
        np.testing.assert_allclose(want.x, exact, atol=1e-5)
        np.testing.assert_allclose(float(got.fun), -0.5 * B @ exact, rtol=1e-9)
        # on a quadratic the estimate approaches A^-1 (exactly so with exact line searches)
        h = np.asarray(got.hess_inv)
        np.testing.assert_allclose(h, h.T, atol=1e-12)
        np.testing.assert_allclose(h, np.linalg.inv(A), atol=1e-2)
        spectrum = np.linalg.eigvals(h @ A).real
        # (scipy's own estimate, stopped by the same max-norm test: 0.99998 .. 1.051)
        assert spectrum.min() > 0.98 and spectrum.max() < 1.04, spectrum
        assert int(got.nit) <= 2 * want.nit


def test_under_jit_with_traced_args():
    f = xp.jit(lambda x0, b: xo.minimize(quadratic, x0, (A.astype(np.float32), b)))
    b = B.astype(np.float32)
    out = f(np.ones(4, np.float32), b)
    np.testing.assert_allclose(np.asarray(out.x), np.linalg.solve(A, B), atol=1e-4)
    assert bool(out.success) and np.asarray(out.x).dtype == np.float32
    out2 = f(np.ones(4, np.float32), 2 * b)
    np.testing.assert_allclose(np.asarray(out2.x), 2 * np.linalg.solve(A, B), atol=1e-4)


def test_vmap_over_args():
    bs = np.stack([B, 2 * B, -B]).astype(np.float32)
    out = xp.vmap(lambda b: xo.minimize(quadratic, np.zeros(4, np.float32),
                                        (A.astype(np.float32), b)))(bs)
    np.testing.assert_allclose(np.asarray(out.x), np.linalg.solve(A, bs.T).T, atol=1e-4)
    assert np.asarray(out.status).shape == (3,) and np.all(np.asarray(out.success))


def test_status_codes():
    capped = xo.minimize(rosen, np.zeros(3, np.float32), options={"maxiter": 3})
    assert int(capped.status) == 1 and not bool(capped.success) and int(capped.nit) == 3
    unbounded = xo.minimize(lambda x: xnp.sum(x), np.zeros(2, np.float32))
    want = jo.minimize(lambda x: jnp.sum(x), jnp.zeros(2), method="BFGS")
    assert int(unbounded.status) == int(want.status) == 5 and not bool(unbounded.success)
    at_min = xo.minimize(rosen, np.ones(3, np.float32))
    assert int(at_min.status) == 0 and int(at_min.nit) == 0 and int(at_min.nfev) == 1


def test_tol_and_options():
    x0 = np.zeros(4, np.float32)
    loose = xo.minimize(rosen, x0, tol=1e-1)
    tight = xo.minimize(rosen, x0, options={"gtol": 1e-1, "norm": 2})
    assert bool(loose.success) and np.abs(np.asarray(loose.jac)).max() < 1e-1
    assert np.linalg.norm(np.asarray(tight.jac)) < 1e-1
    assert int(loose.nit) < int(xo.minimize(rosen, x0).nit)


def test_bad_arguments():
    with pytest.raises(XlapyError, match="args must be a tuple"):
        xo.minimize(rosen, np.zeros(2), args=[1])
    with pytest.raises(XlapyError, match="not supported"):
        xo.minimize(rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(XlapyError, match="unknown BFGS options"):
        xo.minimize(rosen, np.zeros(2), options={"maxfev": 3})
    with pytest.raises(XlapyError, match="1-dimensional"):
        xo.minimize(rosen, np.zeros((2, 2)))
    with pytest.raises(XlapyError, match="complex"):
        xo.minimize(rosen, np.zeros(2, np.complex64))
