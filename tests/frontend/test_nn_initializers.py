"""xlapy.nn.initializers against jax.nn.initializers (the same arrays for the same key,
bit for bit; orthogonal to rounding), and the jax.nn functions xlapy.nn gained against
jax.nn (values and gradients)."""

from __future__ import annotations

import jax
import jax.nn as jnn
import jax.nn.initializers as ji
import numpy as np
import pytest

import xlapy as xp
import xlapy.nn as xnn
import xlapy.nn.initializers as xi
import xlapy.random as xr

NAMED = ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
         "he_normal", "xavier_uniform", "kaiming_normal"]
SHAPES = [(5, 7), (3, 3, 4, 8), (2, 6)]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("name", NAMED)
def test_named_initializers_match_jax(name):
    for seed, shape in zip((0, 5, 9), SHAPES):
        same_bits(getattr(xi, name)()(xr.PRNGKey(seed), shape),
                  getattr(ji, name)()(jax.random.PRNGKey(seed), shape))


@pytest.mark.parametrize("make", [
    lambda m: m.normal(0.3), lambda m: m.uniform(2.0), lambda m: m.truncated_normal(0.5),
    lambda m: m.truncated_normal(1.0, lower=-1.0, upper=3.0),
    lambda m: m.variance_scaling(0.5, "fan_geo_avg", "normal", in_axis=(0, 1), out_axis=3),
    lambda m: m.variance_scaling(3.0, "fan_out", "uniform"),
    lambda m: m.constant(1.5), lambda m: m.zeros, lambda m: m.ones,
], ids=["normal", "uniform", "truncated_normal", "truncated_bounds", "vs_geo", "vs_fan_out",
        "constant", "zeros", "ones"])
def test_parametrized_initializers_match_jax(make):
    shape = (2, 3, 4, 5)
    same_bits(make(xi)(xr.PRNGKey(3), shape), make(ji)(jax.random.PRNGKey(3), shape))


def test_initializer_dtypes_and_typed_keys():
    same_bits(xi.he_normal(dtype=np.float16)(xr.key(1), (4, 6)),
              ji.he_normal(dtype=np.float16)(jax.random.key(1), (4, 6)))


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.orthogonal(), (6, 4)), (lambda m: m.orthogonal(2.0, 0), (3, 5)),
    (lambda m: m.delta_orthogonal(), (3, 3, 4, 6))])
def test_orthogonal_initializers_match_jax_to_rounding(make, shape):
    got = np.asarray(make(xi)(xr.PRNGKey(4), shape))
    want = np.asarray(make(ji)(jax.random.PRNGKey(4), shape))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_initializer_errors():
    with pytest.raises(xr.RandomError, match="at least 2D"):
        xi.glorot_normal()(xr.PRNGKey(0), (5,))
    with pytest.raises(xr.RandomError, match="invalid mode"):
        xi.variance_scaling(1.0, "fan_wrong", "normal")


X = np.linspace(-3, 3, 13).astype(np.float32)
FUNCS = ["identity", "tanh", "mish", "soft_sign", "squareplus", "sparse_plus",
         "sparse_sigmoid", "relu6", "silu", "gelu", "softplus", "log_sigmoid", "celu", "elu",
         "selu", "hard_tanh"]


@pytest.mark.parametrize("name", FUNCS)
def test_nn_functions_match_jax(name):
    np.testing.assert_allclose(getattr(xnn, name)(X), getattr(jnn, name)(X), rtol=2e-6,
                               atol=1e-6)
    g = xp.grad(lambda x: xp.numpy.sum(getattr(xnn, name)(x)))(X)
    jg = jax.grad(lambda x: getattr(jnn, name)(x).sum())(X)
    np.testing.assert_allclose(g, jg, rtol=2e-5, atol=1e-6)


def test_log1mexp_logmeanexp_logsumexp_sign():
    x = np.float32([0.01, 0.5, 1.0, 5.0])
    np.testing.assert_allclose(xnn.log1mexp(x), jnn.log1mexp(x), rtol=1e-6)
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(xnn.logmeanexp(a, axis=1), jnn.logmeanexp(a, axis=1), rtol=1e-6)
    out, sign = xnn.logsumexp(a, axis=0, b=np.float32([1, -1, 1, -1]).reshape(1, 4) * 0 - 1,
                              return_sign=True)
    jout, jsign = jnn.logsumexp(a, axis=0, b=np.float32([1, -1, 1, -1]).reshape(1, 4) * 0 - 1,
                                return_sign=True)
    np.testing.assert_allclose(out, jout, rtol=1e-6)
    np.testing.assert_array_equal(sign, jsign)


def test_dot_product_attention_matches_jax():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 5, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 6, 2, 8)).astype(np.float32)
    v = rng.standard_normal((2, 6, 2, 8)).astype(np.float32)
    np.testing.assert_allclose(xnn.dot_product_attention(q, k, v),
                               jnn.dot_product_attention(q, k, v), rtol=1e-5, atol=1e-6)
    q2, k2, v2 = q[:, :, :2], k, v
    np.testing.assert_allclose(xnn.dot_product_attention(q2, k2[:, :5], v2[:, :5],
                                                         is_causal=True),
                               jnn.dot_product_attention(q2, k2[:, :5], v2[:, :5],
                                                         is_causal=True),
                               rtol=1e-5, atol=1e-6)


def test_nn_module_keeps_its_functions():
    assert xnn.softmax is not None and xp.nn.softmax is xnn.softmax
    assert xp.nn.initializers.glorot_normal is xi.glorot_normal
