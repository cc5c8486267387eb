"""Reverse mode of lax.scan keeps the forward's products (scan_residuals.py) and skips the
cotangents of operands that carry no gradient: gradients against JAX's (first order, of
second order, forward-over-reverse, under vmap, eager and jitted), and the jitted
gradient's products counted in its HLO (none of the forward's is computed again).
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax

RNG = np.random.default_rng(7)


def rand(*shape, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def lstm_loss(lax, m, wx, wh, b, xs, h0):
    """A one-layer LSTM over xs: 2 products per step."""
    n = h0.shape[-1]

    def body(carry, x):
        h, c = carry
        z = x @ wx + h @ wh + b
        i, f, g, o = (z[:, k * n:(k + 1) * n] for k in range(4))
        sig = lambda v: 1.0 / (1.0 + m.exp(-v))
        c = sig(f) * c + sig(i) * m.tanh(g)
        h = sig(o) * m.tanh(c)
        return (h, c), h
    (h, _), ys = lax.scan(body, (h0, h0 * 0.0), xs)
    return m.mean(h * h) + m.mean(ys)


def lstm_args(width=5, batch=3, steps=4, inputs=3):
    return (rand(inputs, 4 * width), rand(width, 4 * width), rand(4 * width),
            rand(steps, batch, inputs), rand(batch, width))


def both(argnums):
    xf = xp.grad(lambda *a: lstm_loss(lax, xnp, *a), argnums)
    jf = jax.grad(lambda *a: lstm_loss(jax.lax, jnp, *a), argnums)
    return xf, jf


def close(got, want, rtol=2e-4, atol=1e-5):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


@pytest.mark.parametrize("argnums", [(0, 1, 2), (0, 1, 2, 3, 4), (3,), (1, 4)])
def test_lstm_gradients_match_jax(argnums):
    args = lstm_args()
    xf, jf = both(argnums)
    want = jf(*args)
    close(xf(*args), want)
    close(xp.jit(xf)(*args), want)


def test_reverse_scan_with_kept_products_and_a_product_in_the_carry():
    w, v, xs, h0 = rand(3, 3), rand(3, 3), rand(5, 3), rand(3)

    def loss(lax, m, w, v, xs, h0):
        def body(c, x):
            p = c @ w        # a product that is also the next carry
            q = (x * c) @ v  # and one that is a y
            return p * m.tanh(q), q
        h, ys = lax.scan(body, h0, xs, reverse=True)
        return (h * h).sum() + m.sin(ys).sum()
    want = jax.grad(lambda *a: loss(jax.lax, jnp, *a), (0, 1, 2, 3))(w, v, xs, h0)
    g = xp.grad(lambda *a: loss(lax, xnp, *a), (0, 1, 2, 3))
    close(g(w, v, xs, h0), want)
    close(xp.jit(g)(w, v, xs, h0), want)


def test_grad_of_grad_through_kept_products():
    args = lstm_args(width=3, batch=2, steps=3, inputs=2)

    def outer(lax, m, grad):
        def f(wh):
            g = grad(lambda w: lstm_loss(lax, m, args[0], w, *args[2:]))(wh)
            return (g * g).sum()
        return grad(f)
    want = outer(jax.lax, jnp, jax.grad)(args[1])
    got = outer(lax, xnp, xp.grad)
    close(got(args[1]), want, rtol=1e-3, atol=1e-5)
    close(xp.jit(got)(args[1]), want, rtol=1e-3, atol=1e-5)


def test_forward_over_reverse_and_vmap_of_grad():
    args = lstm_args(width=3, batch=2, steps=3, inputs=2)
    xf, jf = both(1)
    t = rand(*args[1].shape)
    want = jax.jvp(lambda w: jf(args[0], w, *args[2:]), (args[1],), (t,))
    got = xp.jvp(lambda w: xf(args[0], w, *args[2:]), (args[1],), (t,))
    close(got, want, rtol=1e-3)
    ws = np.stack([args[1], args[1] * 0.5])
    want = jax.vmap(lambda w: jf(args[0], w, *args[2:]))(ws)
    close(xp.vmap(lambda w: xf(args[0], w, *args[2:]))(ws), want)
    close(xp.jit(xp.vmap(lambda w: xf(args[0], w, *args[2:])))(ws), want)


def test_grad_of_vmap():
    args = lstm_args(width=3, batch=2, steps=3, inputs=2)
    xs = np.stack([args[3], args[3] * 0.5])

    def total(lax, m, vmap, wh):
        per = vmap(lambda x: lstm_loss(lax, m, args[0], wh, args[2], x, args[4]))(xs)
        return per.sum()
    want = jax.grad(lambda w: total(jax.lax, jnp, jax.vmap, w))(args[1])
    got = xp.grad(lambda w: total(lax, xnp, xp.vmap, w))
    close(got(args[1]), want)
    close(xp.jit(got)(args[1]), want)


def products(fn, *args) -> int:
    """Products left in the cpu backend's optimized module (after dead code is removed:
    a cotangent nothing uses goes), plain or fused into a gemm update."""
    text = xp.jit(fn).lower(*args).compile().as_text()
    return len(re.findall(r"\bdot\(", text)) + text.count("__xlapy$gemm_update")


def test_backward_loop_does_not_recompute_the_forward_products():
    args = lstm_args()
    # forward: x.wx and h.wh per step; backward: the two weight gradients and h's
    # cotangent (x carries no gradient). Recomputing the gates would add two, x's
    # cotangent one more.
    assert products(both((0, 1, 2))[0], *args) == 5
    # with the inputs differentiated too, their cotangent is one product more
    assert products(both((0, 1, 2, 3))[0], *args) == 6
