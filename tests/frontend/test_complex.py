"""Complex numbers in the frontend: xlapy.numpy's complex dtypes and functions (against
NumPy and JAX), jit with complex arguments and results, and derivatives through complex
intermediates with JAX's convention (grad of a real loss, vjp, jvp) against JAX itself."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
Z = (RNG.normal(size=(2, 5)) + 1j * RNG.normal(size=(2, 5))).astype(np.complex64)
X = RNG.normal(size=(2, 5)).astype(np.float32)


def test_dtypes_promotion_and_canonicalization():
    assert xnp.asarray([1 + 2j]).dtype == np.complex64          # x64 off, as in JAX
    assert xnp.asarray(np.zeros(2, np.complex128)).dtype == np.complex64
    assert (xnp.ones(2, xnp.float32) * 1j).dtype == np.complex64  # weak Python complex
    assert xp.jit(lambda a: a * 2j + 1)(X).dtype == jnp.asarray(X * 2j + 1).dtype
    assert xp.jit(lambda z: z)(1 + 1j).dtype == np.complex64
    with xp.enable_x64(True):
        assert xnp.asarray(np.zeros(2, np.complex128)).dtype == np.complex128


FUNCS = ["real", "imag", "conj", "conjugate", "angle", "abs", "iscomplex", "isreal", "exp",
         "log", "sqrt", "sin", "cos", "tanh", "sign", "negative", "square", "reciprocal"]


@pytest.mark.parametrize("name", FUNCS)
def test_functions_match_numpy_and_jax_eager_and_jit(name):
    for arg in (Z, X):
        with np.errstate(invalid="ignore"):
            want = getattr(np, name)(arg)
        want_jax = np.asarray(getattr(jnp, name)(arg))
        for got in (getattr(xnp, name)(arg), xp.jit(getattr(xnp, name))(arg)):
            got = np.asarray(got)
            assert got.dtype == want_jax.dtype, (name, arg.dtype)
            np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6)


def test_arithmetic_methods_and_predicates():
    f = xp.jit(lambda z, w: (z * w - z / w + z ** 2, (z * z.conj()).real, z.imag, z == w))
    want = (Z * Z[::-1] - Z / Z[::-1] + Z ** 2, (Z * Z.conj()).real, Z.imag, Z == Z[::-1])
    for g, w in zip(f(Z, Z[::-1]), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert xnp.iscomplexobj(Z) and not xnp.iscomplexobj(X) and xnp.isrealobj(X)
    assert xp.jit(lambda z: xnp.sum(z * z))(Z).dtype == np.complex64
    np.testing.assert_allclose(xp.jit(lambda z: xnp.sum(z, axis=1))(Z), Z.sum(1), rtol=1e-5)
    np.testing.assert_allclose(xp.jit(lambda a, b: a @ b)(Z, Z.T), Z @ Z.T, rtol=1e-5)
    np.testing.assert_allclose(xlax.complex(X, X), X + 1j * X)


def test_complex_to_real_conversion_keeps_the_real_part_as_jax():
    with warnings.catch_warnings():  # JAX deprecates it (a ValueError to come)
        warnings.simplefilter("ignore")
        want = np.asarray(jnp.asarray(Z).astype(jnp.float32))
    np.testing.assert_array_equal(xp.jit(lambda z: z.astype(xnp.float32))(Z), want)


def _losses(N):
    return {
        "abs2": lambda x: N.sum(N.abs(x * (1 + 2j)) ** 2),
        "exp_div": lambda x: N.real(N.sum(N.exp(x * 1j) / (x + 3 - 1j))),
        "conj_imag": lambda x: N.sum(N.imag(N.conj(x * (2 - 1j)) * x * x)),
        "angle_sqrt": lambda x: N.sum(N.angle(N.sqrt(x + 0.5j)) + N.abs(N.log(x + 2j))),
        "matmul": lambda x: N.sum(N.abs((x * 1j + 1) @ (x.T + 0j))),
    }


@pytest.mark.parametrize("name", list(_losses(np)))
def test_grad_of_real_losses_through_complex_values_matches_jax(name):
    x = X + 0.1
    want = np.asarray(jax.grad(_losses(jnp)[name])(x))
    for f in (xp.grad(_losses(xnp)[name]), xp.jit(xp.grad(_losses(xnp)[name]))):
        np.testing.assert_allclose(f(x), want, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["abs2", "conj_imag", "angle_sqrt"])
def test_grad_with_respect_to_complex_inputs_matches_jax(name):
    want = np.asarray(jax.grad(_losses(jnp)[name])(Z))
    got = xp.grad(_losses(xnp)[name])(Z)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def test_jvp_and_vjp_of_complex_functions_match_jax():
    f = lambda N: (lambda z: N.exp(z) * N.conj(z) + N.abs(z))
    t = (Z * 0.5 + 1j).astype(np.complex64)
    want_out, want_t = jax.jvp(f(jnp), (Z,), (t,))
    got_out, got_t = xp.jvp(f(xnp), (Z,), (t,))
    np.testing.assert_allclose(got_out, want_out, rtol=1e-5)
    np.testing.assert_allclose(got_t, want_t, rtol=1e-4, atol=1e-5)
    _, vjp_j = jax.vjp(f(jnp), Z)
    _, vjp_x = xp.vjp(f(xnp), Z)
    np.testing.assert_allclose(vjp_x(t)[0], vjp_j(t)[0], rtol=1e-4, atol=1e-5)


def test_grad_of_a_complex_output_is_an_error():
    with pytest.raises(XlapyError, match="real floating-point output"):
        xp.grad(lambda z: xnp.sum(z * z))(Z)
