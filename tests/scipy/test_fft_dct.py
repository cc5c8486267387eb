"""xlapy.scipy.fft.dct / idct against jax.scipy.fft: odd and even lengths, n (cut and
padded), norm, axis, jit, gradients, the round trip, errors."""

from __future__ import annotations

import jax
import jax.scipy.fft as J
import numpy as np
import pytest

import xlapy as xp
import xlapy.scipy.fft as X
from xlapy.errors import UnsupportedError, XlapyError

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("N", [5, 8])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n", [None, 4, 9])
def test_dct_idct_match_jax(N, norm, n):
    x = RNG.standard_normal((3, N)).astype(np.float32)
    for ours, theirs in ((X.dct, J.dct), (X.idct, J.idct)):
        got, want = ours(x, n=n, norm=norm), theirs(x, n=n, norm=norm)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=2e-6)


def test_axis_jit_grad_and_round_trip():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(xp.jit(lambda v: X.dct(v, axis=0))(x)),
                               np.asarray(J.dct(x, axis=0)), atol=2e-6)
    g = xp.grad(lambda v: X.idct(v, norm="ortho")[1].sum())(x)
    jg = jax.grad(lambda v: J.idct(v, norm="ortho")[1].sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), atol=1e-6)
    np.testing.assert_allclose(np.asarray(X.idct(X.dct(x))), x, atol=1e-5)
    with pytest.raises(UnsupportedError, match="type=2"):
        X.dct(x, type=1)
    with pytest.raises(XlapyError, match="norm"):
        X.idct(x, norm="forward")
