"""quantile, percentile, median (and nan- forms) and the NaN-ignoring reductions against
jax.numpy on the same inputs: every method, axes, keepdims, q arrays, NaN slices."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 5, 6)).astype(np.float32)
AN = A.copy()
AN[0, 1, :] = np.nan
AN[1, 2, 3] = np.nan


@pytest.mark.parametrize("fn,method", [
    ("quantile", "linear"), ("quantile", "lower"), ("quantile", "higher"),
    ("quantile", "midpoint"), ("quantile", "nearest"), ("nanquantile", "linear"),
    ("nanquantile", "nearest")])
def test_quantiles_match_jax(fn, method):
    x = A if fn == "quantile" else AN
    for q, axis, keepdims in ((0.3, 1, False), ([0.0, 0.1, 0.5, 0.95, 1.0], (0, 2), True),
                              ([0.25, 0.5], None, False)):
        want = getattr(jnp, fn)(x, jnp.asarray(q), axis=axis, method=method,
                                keepdims=keepdims)
        got = getattr(xnp, fn)(x, q, axis=axis, method=method, keepdims=keepdims)
        assert got.shape == want.shape, (q, axis, keepdims)
        np.testing.assert_allclose(got, want, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("fn", ["median", "nanmedian", "nanvar", "nanstd", "nanprod",
                                "nancumsum", "nancumprod", "nanargmax", "nanargmin"])
def test_nan_reductions_match_jax(fn):
    want = getattr(jnp, fn)(AN, axis=2)
    got = getattr(xnp, fn)(AN, axis=2)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    jitted = xp.jit(lambda x: getattr(xnp, fn)(x, axis=2))(AN)
    np.testing.assert_allclose(jitted, want, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_percentile_and_gradient():
    np.testing.assert_allclose(xnp.percentile(A, [25, 75], axis=1),
                               jnp.percentile(A, jnp.asarray([25, 75]), axis=1), atol=1e-6)
    g = xp.grad(lambda x: xnp.median(x))(A[0, 0])
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.median(x))(A[0, 0]))


def test_quantile_errors_are_named():
    with pytest.raises(xp.errors.XlapyError, match=r"q must be in \[0, 1\]"):
        xnp.quantile(A, 1.5)
    with pytest.raises(xp.errors.XlapyError, match="method must be one of"):
        xnp.quantile(A, 0.5, method="weibull")
