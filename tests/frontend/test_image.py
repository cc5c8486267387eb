"""xlapy.image.resize and scale_and_translate against jax.image on the same inputs: every
method, up- and down-sampling, antialias on and off, several dimensions at once."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp

rng = np.random.default_rng(0)
IMG = rng.standard_normal((2, 9, 7, 3)).astype(np.float32)


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "lanczos3", "lanczos5"])
def test_resize_matches_jax(method):
    for shape in [(2, 18, 14, 3), (2, 4, 5, 3), (3, 5, 7, 2)]:
        for antialias in (True, False):
            want = jax.image.resize(IMG, shape, method, antialias=antialias)
            got = xp.image.resize(IMG, shape, method, antialias=antialias)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, atol=1e-5)


def test_resize_jit_grad_and_integers():
    f = xp.jit(lambda x: xp.image.resize(x, (2, 5, 11, 3), "bilinear"))
    np.testing.assert_allclose(f(IMG), jax.image.resize(IMG, (2, 5, 11, 3), "bilinear"),
                               atol=1e-5)
    g = xp.grad(lambda x: (xp.image.resize(x, (2, 4, 4, 3), "cubic") ** 2).sum())(IMG)
    want = jax.grad(lambda x: (jax.image.resize(x, (2, 4, 4, 3), "cubic") ** 2).sum())(IMG)
    np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)
    u8 = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_allclose(xp.image.resize(u8, (6, 8), "linear"),
                               jax.image.resize(u8, (6, 8), "linear"), atol=1e-5)


def test_scale_and_translate_matches_jax():
    args = ((2, 12, 10, 3), (1, 2), np.float32([1.5, 1.2]), np.float32([0.5, -1.0]))
    want = jax.image.scale_and_translate(IMG, *args, method="lanczos3")
    got = xp.image.scale_and_translate(IMG, *args, method="lanczos3")
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_unknown_method_is_named():
    with pytest.raises(xp.errors.XlapyError, match="unknown method 'bilateral'"):
        xp.image.resize(IMG, (2, 4, 4, 3), "bilateral")
