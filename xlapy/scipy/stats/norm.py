"""The normal distribution (jax.scipy.stats.norm): logpdf, pdf, cdf, logcdf, ppf, sf,
logsf, isf, with loc and scale."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import log_ndtr, ndtr, ndtri
from xlapy.scipy.special._common import const, floats
from xlapy.scipy.stats._loc_scale import quantile, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    log_normalizer = xnp.log(const(scale, 2 * np.pi) * scale * scale)
    quadratic = (x - loc) ** 2 / (scale * scale)
    return -0.5 * (log_normalizer + quadratic)


def pdf(x, loc=0, scale=1):
    return xnp.exp(logpdf(x, loc, scale))


cdf = standardized(ndtr, "cdf")
logcdf = standardized(log_ndtr, "logcdf")
ppf = quantile(ndtri, "ppf")


def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale)
    return ppf(1.0 - q, loc, scale)
