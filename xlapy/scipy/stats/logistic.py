"""The logistic distribution (jax.scipy.stats.logistic)."""

from __future__ import annotations

import xlapy.numpy as xnp
from xlapy.scipy.special import expit, logit
from xlapy.scipy.special._common import floats
from xlapy.scipy.stats._loc_scale import quantile, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    z = (x - loc) / scale
    half = z / 2.0
    return -2.0 * xnp.logaddexp(half, -half) - xnp.log(scale)


def pdf(x, loc=0, scale=1):
    return xnp.exp(logpdf(x, loc, scale))


cdf = standardized(expit, "cdf")
sf = standardized(lambda z: expit(-z), "sf")
ppf = quantile(logit, "ppf")
isf = quantile(lambda q: -logit(q), "isf")
