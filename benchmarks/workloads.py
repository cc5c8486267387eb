"""The benchmark workloads: each is the same computation written for every system.

A workload is a name, an input builder, the bytes it must move at least (for the
bandwidth bound) and one function per system: "numpy" (hand-written NumPy, eager),
"xlapy" (xlapy.numpy under xlapy.jit), "jax" (jax.jit), and optionally "numexpr" and
"torch" (torch.compile) when those packages are installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

f32 = np.float32


@dataclass
class Workload:
    name: str
    make: Callable[[], tuple]
    min_bytes: int = 0                  # bytes that must cross memory at least
    flops: int = 0
    fns: dict = field(default_factory=dict)   # system -> callable(*inputs)
    issue: str = ""


def _rng():
    return np.random.default_rng(0)


# ---- the computations, written once per system -------------------------------------------

def np_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def np_layernorm_gelu(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + f32(1e-5)) * g + b
    return f32(0.5) * y * (f32(1) + np.tanh(f32(0.7978845608) * (y + f32(0.044715) * y ** 3)))


def make_numpy_like(xnp):
    """The same functions over any NumPy-like module (xlapy.numpy, jax.numpy)."""

    def softmax(x):
        m = xnp.max(x, axis=-1, keepdims=True)
        e = xnp.exp(x - m)
        return e / xnp.sum(e, axis=-1, keepdims=True)

    def layernorm_gelu(x, g, b):
        mu = xnp.mean(x, -1, keepdims=True)
        var = xnp.mean((x - mu) ** 2, -1, keepdims=True)
        y = (x - mu) / xnp.sqrt(var + 1e-5) * g + b
        return 0.5 * y * (1 + xnp.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))

    def dense_relu(x, w, b):
        return xnp.maximum(x @ w + b, 0.0)

    def dense_relu_softmax(x, w, b):
        return softmax(xnp.maximum(x @ w + b, 0.0))

    def xent(logits, labels):
        m = xnp.max(logits, -1, keepdims=True)
        shifted = logits - m
        lse = xnp.log(xnp.sum(xnp.exp(shifted), -1, keepdims=True))
        return -xnp.mean(xnp.sum(labels * (shifted - lse), -1))

    return dict(softmax=softmax, layernorm_gelu=layernorm_gelu, dense_relu=dense_relu,
                dense_relu_softmax=dense_relu_softmax, xent=xent)


def np_mnist_step(w, b, x, y, lr=f32(0.5)):  # noqa: B008 (a NumPy scalar: immutable)
    logits = x @ w + b
    p = np_softmax(logits)
    g = (p - y) / f32(x.shape[0])
    return w - lr * (x.T @ g), b - lr * g.sum(0)


def np_mlp_step(w1, b1, w2, b2, w3, b3, x, y, lr=f32(0.01)):  # noqa: B008 (NumPy scalar)
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    p = np_softmax(h2 @ w3 + b3)
    d3 = (p - y) / f32(x.shape[0])
    d2 = (d3 @ w3.T) * (h2 > 0)
    d1 = (d2 @ w2.T) * (h1 > 0)
    return (w1 - lr * (x.T @ d1), b1 - lr * d1.sum(0), w2 - lr * (h1.T @ d2), b2 - lr * d2.sum(0),
            w3 - lr * (h2.T @ d3), b3 - lr * d3.sum(0))


def grad_steps(grad, xent_fn, lr_mnist=0.5, lr_mlp=0.01):
    """MNIST and MLP SGD steps built from a grad transformation (xlapy's or JAX's)."""

    def mnist_step(w, b, x, y):
        def loss(w, b):
            return xent_fn(x @ w + b, y)
        gw, gb = grad(loss, argnums=(0, 1))(w, b)
        return w - lr_mnist * gw, b - lr_mnist * gb

    def mlp_step(w1, b1, w2, b2, w3, b3, x, y):
        import xlapy.numpy as _x  # noqa: F401 (only for name resolution below)

        def loss(w1, b1, w2, b2, w3, b3):
            relu = lambda v: v * (v > 0)
            h1 = relu(x @ w1 + b1)
            h2 = relu(h1 @ w2 + b2)
            return xent_fn(h2 @ w3 + b3, y)
        grads = grad(loss, argnums=(0, 1, 2, 3, 4, 5))(w1, b1, w2, b2, w3, b3)
        return tuple(p - lr_mlp * g for p, g in zip((w1, b1, w2, b2, w3, b3), grads))

    return mnist_step, mlp_step


def mlp_params(rng, sizes=(784, 1024, 1024, 10)):
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out.append((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(f32))
        out.append(np.zeros(b, f32))
    return out


def one_hot(rng, n, k):
    y = np.zeros((n, k), f32)
    y[np.arange(n), rng.integers(0, k, n)] = 1
    return y
