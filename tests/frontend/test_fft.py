"""xlapy.numpy.fft against numpy.fft and jax.numpy.fft (values, dtypes, JAX's tolerances),
eagerly (the evaluator) and under jit (the cpu backend's native fft), and its derivatives
and batching against JAX's."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 10)).astype(np.float32)
Z = (RNG.normal(size=(3, 10)) + 1j * RNG.normal(size=(3, 10))).astype(np.complex64)
Y = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
H = np.fft.rfft(RNG.normal(size=(3, 10))).astype(np.complex64)

CASES = [  # (function name, argument, keywords)
    ("fft", Z, {}), ("fft", X, {"n": 7}), ("fft", Z, {"n": 13, "axis": 0}),
    ("ifft", Z, {"norm": "ortho"}), ("ifft", X, {"norm": "forward"}),
    ("rfft", X, {}), ("rfft", X, {"n": 16, "axis": 0, "norm": "ortho"}),
    ("irfft", H, {}), ("irfft", H, {"n": 9}), ("irfft", H, {"n": 30, "norm": "forward"}),
    ("fft2", Z, {}), ("ifft2", Y, {"s": (5, 3)}), ("rfft2", Y, {"axes": (0, 3)}),
    ("irfft2", H, {"s": (4, 12)}), ("fftn", Y, {}), ("ifftn", Y, {"axes": (3, 1, 0)}),
    ("rfftn", Y, {"norm": "forward"}), ("rfftn", Y, {"s": (2, 8), "axes": (1, 2)}),
    ("irfftn", np.fft.rfftn(Y).astype(np.complex64), {"s": Y.shape, "axes": (0, 1, 2, 3)}),
    ("hfft", H, {}), ("ihfft", X, {"norm": "ortho"}),
]


@pytest.mark.parametrize("name,arg,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_numpy_and_jax_eager_and_jit(name, arg, kw):
    want_np = getattr(np.fft, name)(arg.astype(np.complex128 if np.iscomplexobj(arg)
                                              else np.float64), **kw)
    want_jax = np.asarray(getattr(jnp.fft, name)(arg, **kw))
    eager = getattr(xnp.fft, name)(arg, **kw)
    jitted = xp.jit(lambda a: getattr(xnp.fft, name)(a, **kw))(arg)
    for got in (eager, jitted):
        got = np.asarray(got)
        assert got.dtype == want_jax.dtype and got.shape == want_jax.shape
        scale = max(np.abs(want_np).max(), 1)
        np.testing.assert_allclose(got, want_np, rtol=0, atol=1e-5 * scale)


def test_frequencies_and_shifts():
    np.testing.assert_allclose(xnp.fft.fftfreq(9, 0.25), np.fft.fftfreq(9, 0.25), rtol=1e-6)
    np.testing.assert_allclose(xnp.fft.fftfreq(8), np.fft.fftfreq(8), rtol=1e-6)
    np.testing.assert_allclose(xnp.fft.rfftfreq(9, 2.0), np.fft.rfftfreq(9, 2.0), rtol=1e-6)
    assert xnp.fft.fftfreq(4).dtype == jnp.fft.fftfreq(4).dtype
    for axes in (None, 0, (1, 3)):
        np.testing.assert_array_equal(xnp.fft.fftshift(Y, axes), np.fft.fftshift(Y, axes))
        np.testing.assert_array_equal(xnp.fft.ifftshift(Y, axes), np.fft.ifftshift(Y, axes))
    f = xp.jit(lambda a: xnp.fft.ifftshift(xnp.fft.fftshift(a)))
    np.testing.assert_array_equal(f(X), X)


def test_errors_are_clear():
    from xlapy.errors import XlapyError
    with pytest.raises(XlapyError, match="Invalid norm value"):
        xnp.fft.fft(X, norm="bogus")
    with pytest.raises(XlapyError, match="invalid number of FFT data points"):
        xnp.fft.fft(X, n=0)
    with pytest.raises(XlapyError, match="does not support complex input"):
        xnp.fft.rfft(Z)
    with pytest.raises(XlapyError, match="out of bounds"):
        xnp.fft.fft(X, axis=2)


def _loss(F, N, kind):
    """A real loss through complex intermediates, written once for xlapy and JAX."""
    def loss(x):
        if kind == "fft":
            y = N.fft.fft(x * (1 + 0.5j))
            return N.sum(N.abs(y) ** 2 * N.arange(y.shape[-1])) + N.sum(N.real(y))
        if kind == "rfft":
            return N.sum(N.abs(N.fft.rfft(x, n=12)) * N.arange(7)) + N.sum(N.imag(N.fft.rfft(x)))
        if kind == "irfft":
            y = N.fft.rfft(x)
            return N.sum(N.fft.irfft(y * (1 - 2j), n=x.shape[-1]) ** 3)
        if kind == "fft2":
            return N.sum(N.real(N.fft.ifft2(N.fft.fft2(x) * N.conj(N.fft.fft2(x)))))
        if kind == "rfftn":
            return N.sum(N.abs(N.fft.rfftn(x, axes=(0, 1), norm="ortho")))
        if kind == "angle":
            return N.sum(N.angle(N.fft.fft(x)) * N.arange(x.shape[-1]))
        raise ValueError(kind)
    return loss


@pytest.mark.parametrize("kind", ["fft", "rfft", "irfft", "fft2", "rfftn", "angle"])
def test_grad_matches_jax(kind):
    x = X[:, :8] + 0.1
    want = np.asarray(jax.grad(_loss(jax, jnp, kind))(x))
    got = xp.grad(_loss(xp, xnp, kind))(x)
    got_jit = xp.jit(xp.grad(_loss(xp, xnp, kind)))(x)
    for g in (got, got_jit):
        np.testing.assert_allclose(g, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())


def test_grad_with_respect_to_a_complex_input_matches_jax():
    def loss(N):
        return lambda z: N.sum(N.abs(N.fft.fft(z)) ** 2 + N.real(z * z))
    want = np.asarray(jax.grad(loss(jnp))(Z))
    got = xp.grad(loss(xnp))(Z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_vmap_and_jvp_match_jax():
    f = lambda N: (lambda x: N.fft.rfft(x * 2, n=6))
    want = np.asarray(jax.vmap(f(jnp), in_axes=1)(X))
    got = xp.vmap(f(xnp), in_axes=1)(X)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    g = lambda N: (lambda x: N.real(N.fft.fft2(x)).sum())
    t = np.ones_like(Y)
    _, want_t = jax.jvp(g(jnp), (Y,), (t,))
    _, got_t = xp.jvp(g(xnp), (Y,), (t,))
    np.testing.assert_allclose(got_t, want_t, rtol=1e-4, atol=1e-4)
