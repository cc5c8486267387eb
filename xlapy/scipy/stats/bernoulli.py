"""The Bernoulli distribution (jax.scipy.stats.bernoulli)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import xlog1py, xlogy
from xlapy.scipy.special._common import floats


def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1.0 - x, -p)
    return xnp.where((x < 0) | (x > 1), xnp.full_like(log_probs, -np.inf), log_probs)


def pmf(k, p, loc=0):
    return xnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = floats(k, p)
    k, p = xnp.broadcast_arrays(k, p)
    bad = xnp.isnan(k) | xnp.isnan(p) | (p < 0) | (p > 1)
    out = xnp.where(k < 0, xnp.zeros_like(k), xnp.where(k < 1, 1.0 - p, xnp.ones_like(k)))
    return xnp.where(bad, xnp.full_like(out, np.nan), out)


def ppf(q, p):
    q, p = floats(q, p)
    q, p = xnp.broadcast_arrays(q, p)
    bad = xnp.isnan(q) | xnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    out = xnp.where(q <= 1.0 - p, xnp.zeros_like(q), xnp.ones_like(q))
    return xnp.where(bad, xnp.full_like(out, np.nan), out)
