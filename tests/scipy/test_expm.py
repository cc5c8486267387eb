"""xlapy.scipy.linalg.expm against SciPy (float32 and float64, norms across the scaling
thresholds, batches) and its gradient against JAX's."""

from __future__ import annotations

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sl

import xlapy as xp
import xlapy.scipy.linalg as xsl

rng = np.random.default_rng(0)


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 10.0, 50.0])
def test_expm_against_scipy(scale):
    a = rng.standard_normal((2, 5, 5)) * scale / 5
    want = np.stack([sl.expm(m) for m in a])
    tol = np.maximum(np.abs(want), 1.0)
    got32 = np.asarray(xsl.expm(a.astype(np.float32)))
    assert got32.dtype == np.float32
    assert np.max(np.abs(got32 - want) / tol) < 5e-5
    with xp.enable_x64(True):
        got64 = np.asarray(xsl.expm(a))
    assert got64.dtype == np.float64
    assert np.max(np.abs(got64 - want) / tol) < 1e-12


def test_expm_gradient_matches_jax():
    a = rng.standard_normal((4, 4)).astype(np.float32)
    want = jax.grad(lambda m: jsl.expm(m)[0, 1])(a)
    got = xp.grad(lambda m: xsl.expm(m)[0, 1])(a)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_expm_needs_a_square_matrix():
    with pytest.raises(xp.errors.XlapyError, match="expm: a square matrix"):
        xsl.expm(np.ones((2, 3), np.float32))
