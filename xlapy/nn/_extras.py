"""jax.nn functions beyond the activations of xlapy.nn's core: identity, tanh, mish,
soft_sign, squareplus, sparse_plus, sparse_sigmoid, log1mexp, logmeanexp, and
dot_product_attention (the reference formulation: softmax(q k^T / sqrt(d) + bias) v)."""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp


def identity(x):
    return xnp.asarray(x)


def tanh(x):
    return xnp.tanh(x)


def mish(x):
    """x * tanh(softplus(x))."""
    from xlapy.nn import softplus
    return x * xnp.tanh(softplus(x))


def soft_sign(x):
    """x / (|x| + 1)."""
    x = xnp.asarray(x)
    return x / (xnp.abs(x) + 1)


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    x = xnp.asarray(x)
    return (x + xnp.sqrt(x * x + b)) / 2


def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)^2 / 4 between."""
    x = xnp.asarray(x)
    return xnp.where(x <= -1.0, 0.0, xnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """0 below -1, 1 above 1, (x + 1) / 2 between (the derivative of sparse_plus)."""
    x = xnp.asarray(x)
    return 0.5 * xnp.minimum(xnp.maximum(x + 1.0, 0.0), 2.0)  # (JAX's gradient at +-1)


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate at both ends."""
    x = xnp.asarray(x)
    return xnp.where(x < math.log(2.0), xnp.log(-xnp.expm1(-x)), xnp.log1p(-xnp.exp(-x)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over axis (of the elements where `where` is True)."""
    from xlapy.scipy.special import logsumexp
    x = xnp.asarray(x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    if where is None:
        nd = xnp.ndim(x)
        axes = range(nd) if axis is None else ((axis,) if isinstance(axis, int) else axis)
        count = float(np.prod([xnp.shape(x)[a % nd] for a in axes]))
        return lse - math.log(count)
    count = xnp.sum(xnp.broadcast_to(where, xnp.shape(x)), axis=axis, keepdims=keepdims)
    return lse - xnp.log(count.astype(lse.dtype))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, **unsupported):
    """softmax(q k^T * scale + bias, masked) v for q (B, T, N, H), k and v (B, S, K, H)
    (K divides N: grouped heads); scale defaults to 1/sqrt(H)."""
    from xlapy.nn import softmax
    if unsupported:
        raise NotImplementedError(f"dot_product_attention: {sorted(unsupported)} not "
                                  "supported by xlapy")
    q, k, v = xnp.asarray(query), xnp.asarray(key), xnp.asarray(value)
    squeeze = xnp.ndim(q) == 3
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    n, kh = xnp.shape(q)[2], xnp.shape(k)[2]
    if n != kh:
        k = xnp.repeat(k, n // kh, axis=2)
        v = xnp.repeat(v, n // kh, axis=2)
    h = xnp.shape(q)[-1]
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    logits = xnp.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    big_neg = -0.7 * float(np.finfo(np.dtype(logits.dtype)).max)
    if mask is not None:
        logits = xnp.where(mask, logits, big_neg)
    if is_causal:
        t, s = xnp.shape(logits)[-2:]
        causal = np.tril(np.ones((t, s), bool))
        logits = xnp.where(causal, logits, big_neg)
    probs = softmax(logits, axis=-1)
    out = xnp.einsum("bnts,bsnh->btnh", probs, v)
    return out[0] if squeeze else out
