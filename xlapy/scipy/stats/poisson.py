"""The Poisson distribution (jax.scipy.stats.poisson): logpmf, pmf, cdf, with loc."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import gammaincc, gammaln, xlogy
from xlapy.scipy.special._common import floats


def logpmf(k, mu, loc=0):
    k, mu, loc = floats(k, mu, loc)
    x = k - loc
    v = xlogy(x, mu) - gammaln(x + 1.0) - mu
    off = (x < 0.0) | (x != xnp.round(x))
    return xnp.where(off, xnp.full_like(v, -np.inf), v)


def pmf(k, mu, loc=0):
    return xnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = floats(k, mu, loc)
    x = xnp.floor(k - loc)
    v = gammaincc(xnp.maximum(x, 0.0) + 1.0, mu)
    return xnp.where(x < 0.0, xnp.zeros_like(v), v)
