"""The logistic distribution (jax.scipy.stats.logistic)."""

from __future__ import annotations

import xlapy.numpy as xnp
from xlapy.scipy.special import expit, logit
from xlapy.scipy.special._common import floats


def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    z = (x - loc) / scale
    half = z / 2.0
    return -2.0 * xnp.logaddexp(half, -half) - xnp.log(scale)


def pdf(x, loc=0, scale=1):
    return xnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale)
    return logit(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale)
    return -logit(q) * scale + loc
