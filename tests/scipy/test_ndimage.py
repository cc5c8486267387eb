"""xlapy.scipy.ndimage.map_coordinates against jax.scipy.ndimage: orders 0 and 1, every
mode, integer inputs, jit, gradients in the input and the coordinates, errors."""

from __future__ import annotations

import jax
import jax.scipy.ndimage as J
import numpy as np
import pytest

import xlapy as xp
import xlapy.scipy.ndimage as X
from xlapy.errors import ShapeError, UnsupportedError

RNG = np.random.default_rng(0)
IMG = RNG.standard_normal((5, 4)).astype(np.float32)
COORDS = [RNG.uniform(-3, 8, (3, 7)).astype(np.float32),
          RNG.uniform(-3, 7, (3, 7)).astype(np.float32)]
COORDS[0][0, :3] = [0.5, 1.5, -0.5]  # halves: rounded away from zero with order 0


@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
@pytest.mark.parametrize("order", [0, 1])
def test_matches_jax(order, mode):
    got = X.map_coordinates(IMG, COORDS, order, mode, cval=-2.0)
    want = J.map_coordinates(IMG, COORDS, order, mode, cval=-2.0)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)


def test_integers_jit_and_gradients():
    ints = RNG.integers(0, 9, (5, 4)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(X.map_coordinates(ints, COORDS, 1, "nearest")),
                                  np.asarray(J.map_coordinates(ints, COORDS, 1, "nearest")))
    got = xp.jit(lambda im, c: X.map_coordinates(im, c, 1))(IMG, COORDS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(J.map_coordinates(IMG, COORDS, 1)),
                               atol=1e-6)
    g = xp.grad(lambda im, c: X.map_coordinates(im, c, 1, "reflect").sum(), (0, 1))(IMG, COORDS)
    jg = jax.grad(lambda im, c: J.map_coordinates(im, c, 1, "reflect").sum(), (0, 1))(
        IMG, COORDS)
    np.testing.assert_allclose(np.asarray(g[0]), np.asarray(jg[0]), atol=1e-5)
    for a, b in zip(g[1], jg[1]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5)


def test_errors():
    with pytest.raises(ShapeError, match="one coordinate array per input dimension"):
        X.map_coordinates(IMG, COORDS[:1], 1)
    with pytest.raises(UnsupportedError, match="order"):
        X.map_coordinates(IMG, COORDS, 3)
    with pytest.raises(UnsupportedError, match="mode"):
        X.map_coordinates(IMG, COORDS, 1, mode="grid-wrap")
