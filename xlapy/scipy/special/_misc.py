"""logsumexp (with weights b, signs and a mask), expit, logit, xlogy, xlog1py, entr,
rel_entr, kl_div, softmax, log_softmax, as jax.scipy.special defines them (the values at
0 * log 0 and the signs of the results included)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.frontend.primitives.misc import stop_gradient
from xlapy.scipy.special._common import float1, floats


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % nd for a in axes))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stable for large |a|. With return_sign, the log of
    the absolute value and the sign of the sum; without, NaN where the sum is negative."""
    if where is not None:
        a = xnp.where(where, a, 0)
    if b is not None:
        a, b = floats(a, b)
        a, b = xnp.broadcast_arrays(a, b)
        a = xnp.where(b != 0, a, -np.inf)
    else:
        a = float1(a)
    nd = xnp.ndim(a)
    axes = _axes(axis, nd)
    if where is not None:
        masked = xnp.where(where, a, -np.inf)
        amax = xnp.max(masked, axis=axes, keepdims=True)
    else:
        amax = xnp.max(a, axis=axes, keepdims=True) if xnp.size(a) else \
            xnp.full([1 if i in axes else d for i, d in enumerate(xnp.shape(a))], -np.inf,
                     a.dtype)
    amax = stop_gradient(xnp.where(xnp.isfinite(amax), amax, xnp.zeros_like(amax)))
    e = xnp.exp(a - amax)
    if b is not None:
        e = e * b
    if where is not None:
        e = xnp.where(where, e, 0)
    s = xnp.sum(e, axis=axes, keepdims=keepdims)
    sign = xnp.sign(s)
    m = amax if keepdims else xnp.squeeze(amax, axis=axes)
    out = xnp.log(xnp.abs(s)) + m
    if return_sign:
        return out, sign
    if b is not None:
        out = xnp.where(sign < 0, xnp.full_like(out, np.nan), out)
    return out


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    x = float1(x)
    return 1.0 / (1.0 + xnp.exp(-x))


def logit(x):
    """log(x / (1 - x))."""
    x = float1(x)
    return xnp.log(x / (1.0 - x))


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (even for y == 0)."""
    x, y = floats(x, y)
    safe = xnp.where(x == 0, xnp.ones_like(y), y)
    return xnp.where(x == 0, xnp.zeros_like(x * safe), x * xnp.log(safe))


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0."""
    x, y = floats(x, y)
    safe = xnp.where(x == 0, xnp.zeros_like(y), y)
    return xnp.where(x == 0, xnp.zeros_like(x * safe), x * xnp.log1p(safe))


def _xlogx(x):
    safe = xnp.where(x == 0, xnp.ones_like(x), x)
    return xnp.where(x == 0, xnp.zeros_like(x), x * xnp.log(safe))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    x = float1(x)
    return xnp.where(x < 0, xnp.full_like(x, -np.inf), -_xlogx(x))


def _entropy_term(p, q, kl: bool):
    """p log(p / q) (kl: - p + q) where p, q > 0; at p = 0 <= q: 0 (kl: q); else inf."""
    p, q = floats(p, q)
    p, q = xnp.broadcast_arrays(p, q)
    both_pos = (p > 0) & (q > 0)
    safe_p = xnp.where(both_pos, p, xnp.ones_like(p))
    safe_q = xnp.where(both_pos, q, xnp.ones_like(q))
    val = safe_p * xnp.log(safe_p / safe_q)
    if kl:
        val = val - safe_p + safe_q
    at_zero = q if kl else xnp.zeros_like(p)
    out = xnp.where((p == 0) & (q >= 0), at_zero, xnp.full_like(p, np.inf))
    return xnp.where(both_pos, val, out)


def rel_entr(p, q):
    """p log(p / q) (0 at p = 0 <= q, inf where the terms are not both >= 0)."""
    return _entropy_term(p, q, kl=False)


def kl_div(p, q):
    """p log(p / q) - p + q (0 at p = 0 <= q, inf where the terms are not both >= 0)."""
    return _entropy_term(p, q, kl=True)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over axis (all axes by default, as SciPy)."""
    x = float1(x)
    axes = _axes(axis, xnp.ndim(x))
    e = xnp.exp(x - stop_gradient(xnp.max(x, axis=axes, keepdims=True)))
    return e / xnp.sum(e, axis=axes, keepdims=True)


def log_softmax(x, axis=None):
    x = float1(x)
    axes = _axes(axis, xnp.ndim(x))
    shifted = x - stop_gradient(xnp.max(x, axis=axes, keepdims=True))
    return shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=axes, keepdims=True))
