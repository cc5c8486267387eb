"""xlapy.nn against jax.nn: values and gradients of every function.

Each row applies an xlapy.nn function and its jax.nn twin to the same float32 input (with
kinks placed on purpose: 0 and 6 for relu/relu6, +-1 for hard_tanh, -3 and 3 for
hard_sigmoid) and compares the outputs and the gradient of sum(f(x) * c). xlapy runs
eagerly and inside ONE jitted function per backend; JAX's references come from one
jax.jit. Then: one_hot, logsumexp options, numerical stability of softmax-like functions,
and second derivatives through softmax cross-entropy.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.nn as xnn
import xlapy.numpy as xnp

ROWS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("hard_tanh", {}), ("sigmoid", {}), ("silu", {}), ("swish", {}), ("hard_sigmoid", {}),
    ("hard_silu", {}), ("softplus", {}), ("log_sigmoid", {}), ("elu", {}),
    ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 1.5}), ("gelu", {}),
    ("gelu", {"approximate": False}), ("glu", {}), ("softmax", {}), ("softmax", {"axis": 0}),
    ("softmax", {"axis": (0, 1)}), ("log_softmax", {}), ("log_softmax", {"axis": 0}),
    ("logsumexp", {"axis": 1}), ("logsumexp", {}), ("standardize", {}),
    ("standardize", {"axis": 0, "epsilon": 1e-3}),
]


def _x():
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32) * 3
    x[0] = [0.0, 6.0, -1.0, 1.0, -3.0, 3.0]
    x[1, :2] = [25.0, -30.0]          # large magnitudes: no overflow in the stable forms
    return x


def _cot(i, shape):
    return np.random.default_rng(10 + i).standard_normal(shape).astype(np.float32)


def _apply(mod, row, x):
    name, kw = row
    return getattr(mod, name)(x, **kw)


@functools.lru_cache(maxsize=None)
def _refs():
    x = _x()
    cots = [_cot(i, np.shape(_apply(xnn, r, x))) for i, r in enumerate(ROWS)]

    def refs(x, cots):
        return [(_apply(jax.nn, r, x),
                 jax.grad(lambda x, r=r, c=c: jnp.sum(_apply(jax.nn, r, x) * c))(x))
                for r, c in zip(ROWS, cots)]

    return cots, [tuple(np.asarray(a) for a in r) for r in jax.jit(refs)(x, cots)]


def _close(got, want, what, rtol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    # float32 cancellation (e.g. 1 + tanh near -1 in gelu's tail) limits absolute accuracy
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6 * scale * 10, err_msg=what)


def test_eager_against_jax():
    x = _x()
    cots, refs = _refs()
    for row, c, (want, want_g) in zip(ROWS, cots, refs):
        _close(_apply(xnn, row, x), want, f"{row} value")
        g = xp.grad(lambda x: xnp.sum(_apply(xnn, row, x) * c))(x)  # noqa: B023 (called at once)
        _close(g, want_g, f"{row} gradient")


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_jit_against_jax(backend):
    x = _x()
    cots, refs = _refs()

    def f(x):
        outs = [_apply(xnn, r, x) for r in ROWS]
        grads = [xp.grad(lambda x, r=r, c=c: xnp.sum(_apply(xnn, r, x) * c))(x)
                 for r, c in zip(ROWS, cots)]
        return outs, grads

    outs, grads = xp.jit(f, backend=backend)(x)
    for row, o, g, (want, want_g) in zip(ROWS, outs, grads, refs):
        _close(o, want, f"{row} value ({backend})")
        _close(g, want_g, f"{row} gradient ({backend})")


def test_kinks_follow_jax():
    x = np.array([0.0, 6.0, -1.0, 1.0], np.float32)
    np.testing.assert_array_equal(xp.grad(lambda x: xnp.sum(xnn.relu(x)))(x), [0, 1, 0, 1])
    np.testing.assert_array_equal(xp.grad(lambda x: xnp.sum(xnn.relu6(x)))(x), [0, 0, 0, 1])
    np.testing.assert_array_equal(xp.grad(lambda x: xnp.sum(xnn.hard_tanh(x)))(x),
                                  [1, 0, 1, 1])


def test_one_hot():
    labels = np.array([[0, 2], [3, 1]])
    for kw in ({}, {"axis": 0}, {"axis": 1}, {"dtype": np.int32}):
        want = jax.nn.one_hot(labels, 4, **kw)
        got = xnn.one_hot(labels, 4, **kw)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xp.jit(lambda l: xnn.one_hot(l, 4))(labels),
                                  jax.nn.one_hot(labels, 4))
    # out-of-range labels give all-zero rows, as in JAX
    np.testing.assert_array_equal(xnn.one_hot(np.array([-1, 4]), 4), np.zeros((2, 4)))


def test_logsumexp_options_and_stability():
    x = np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf]], np.float32)
    np.testing.assert_allclose(xnn.logsumexp(x, axis=1),
                               jax.nn.logsumexp(x, axis=1))
    b = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], np.float32)
    y = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(xnn.logsumexp(y, axis=0, b=b, keepdims=True),
                               jax.nn.logsumexp(y, axis=0, b=b, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(xnn.softmax(np.float32([1e4, 0.0, -1e4])), [1.0, 0.0, 0.0])
    assert np.all(np.isfinite(xnn.log_softmax(np.float32([1e4, 0.0]))))


def test_cross_entropy_second_order():
    """grad of grad through log_softmax (a Hessian-vector product) matches JAX."""
    logits = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    labels = np.array([1, 4, 0])
    v = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)

    def make(nn, N):
        def loss(z):
            return -N.sum(nn.log_softmax(z) * nn.one_hot(labels, 5))
        return loss

    jl, xl = make(jax.nn, jnp), make(xnn, xnp)
    want = jax.grad(lambda z: jnp.sum(jax.grad(jl)(z) * v))(logits)
    hvp = lambda z: xnp.sum(xp.grad(xl)(z) * v)
    np.testing.assert_allclose(xp.grad(hvp)(logits), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xp.jit(xp.grad(hvp))(logits), want, rtol=1e-5, atol=1e-6)
