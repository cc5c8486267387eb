"""xlapy.scipy.signal against scipy.signal (values, in float64) and jax.scipy.signal (dtypes,
shapes, errors, gradients), eagerly and under jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.signal as js
import numpy as np
import pytest
import scipy.signal as ss

import xlapy as xp
import xlapy.numpy as xnp
import xlapy.scipy.signal as xs
from xlapy.errors import XlapyError

RNG = np.random.default_rng(0)
MODES = ["full", "same", "valid"]
ND_FUNCS = ["convolve", "correlate", "fftconvolve"]
SHAPES_1D = [((7,), (3,)), ((3,), (8,)), ((4,), (4,)), ((1,), (5,))]
SHAPES_2D = [((5, 6), (3, 2)), ((3, 4), (5, 6)), ((4, 4), (4, 4)), ((6, 4), (2, 4)),
             ((3, 3), (3, 5))]


def _data(shp, complex_):
    a = RNG.standard_normal(shp)
    if complex_:
        a = a + 1j * RNG.standard_normal(shp)
    return a.astype(np.complex64 if complex_ else np.float32)


def _check(fn, a, b, mode, **kw):
    want = getattr(ss, fn)(a.astype(np.result_type(a.dtype, np.float64)),
                           b.astype(np.result_type(b.dtype, np.float64)), mode)
    got = np.asarray(getattr(xs, fn)(a, b, mode, **kw))
    ref = np.asarray(getattr(js, fn)(a, b, mode, **kw))
    assert got.dtype == ref.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                want.shape)
    scale = max(1.0, np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("fn", ND_FUNCS)
def test_nd_against_scipy(fn, complex_):
    for sa, sb in SHAPES_1D + SHAPES_2D:
        a, b = _data(sa, complex_), _data(sb, complex_)
        for mode in MODES:
            _check(fn, a, b, mode)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_2d_against_scipy(fn, complex_):
    for sa, sb in SHAPES_2D + [((1, 5), (1, 2)), ((2, 1), (4, 3))]:
        a, b = _data(sa, complex_), _data(sb, complex_)
        for mode in MODES:
            if mode == "valid" and sa == (2, 1):
                continue  # neither input covers the other
            _check(fn, a, b, mode)


def test_three_dimensional_and_direct_method():
    a, b = _data((4, 5, 3), False), _data((2, 3, 2), False)
    for mode in MODES:
        _check("convolve", a, b, mode, method="direct")
        _check("correlate", a, b, mode, method="fft")


def test_integer_inputs_promote_as_jax():
    a, b = np.arange(6, dtype=np.int32), np.int32([1, 2, 1])
    for fn in ND_FUNCS:
        got, want = getattr(xs, fn)(a, b), getattr(js, fn)(a, b)
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), np.convolve(a, b) if fn != "correlate"
                                   else np.correlate(a, b, "full"), atol=1e-4)


def test_fftconvolve_axes_as_jax():
    a, b = _data((3, 8, 5), False), _data((3, 4, 5), False)
    for axes in [1, (1,), (-2,), (1, 2)]:
        if axes == (1, 2):
            b = _data((3, 4, 2), False)
        for mode in MODES:
            got = np.asarray(xs.fftconvolve(a, b, mode, axes=axes))
            want = np.asarray(js.fftconvolve(a, b, mode, axes=axes))
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, atol=1e-4)
    with pytest.raises(XlapyError, match="same sizes"):
        xs.fftconvolve(a, _data((2, 4, 5), False), axes=1)


@pytest.mark.parametrize("fn", ND_FUNCS + ["convolve2d", "correlate2d"])
def test_under_jit_and_gradient_as_jax(fn):
    a, b = _data((6, 5), False), _data((3, 2), False)
    w = _data((6, 5), False)

    def loss(mod, xnp_):
        return lambda x, y: xnp_.sum(getattr(mod, fn)(x, y, "same") * w)

    got = xp.jit(getattr(xs, fn), static_argnums=2)(a, b, "valid")
    np.testing.assert_allclose(np.asarray(got), np.asarray(getattr(js, fn)(a, b, "valid")),
                               atol=1e-4)
    ga, gb = xp.grad(loss(xs, xnp), argnums=(0, 1))(a, b)
    wa, wb = jax.grad(loss(js, jnp), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), np.asarray(wa), atol=1e-4)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(wb), atol=1e-4)


def test_vmap():
    a, b = _data((4, 9), False), _data((4, 3), False)
    got = xp.vmap(lambda x, y: xs.convolve(x, y, "same"))(a, b)
    want = np.stack([ss.convolve(x, y, "same") for x, y in zip(a, b)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)


def test_errors():
    a, b = np.ones((3, 4), np.float32), np.ones((4, 3), np.float32)
    with pytest.raises(XlapyError, match="mode must be one of"):
        xs.convolve(a, a, "circular")
    with pytest.raises(XlapyError, match="at least as large"):
        xs.convolve(a, b, "valid")
    with pytest.raises(XlapyError, match="same number of dimensions"):
        xs.correlate(a, np.ones(3))
    with pytest.raises(XlapyError, match="zero-size"):
        xs.convolve(np.ones(0), np.ones(2))
    with pytest.raises(XlapyError, match="method"):
        xs.convolve(a, a, method="winograd")
    with pytest.raises(XlapyError, match="2-dimensional"):
        xs.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(XlapyError, match="boundary='fill'"):
        xs.correlate2d(a, a, boundary="wrap")
