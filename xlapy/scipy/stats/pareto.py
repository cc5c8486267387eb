"""The Pareto distribution (jax.scipy.stats.pareto): logpdf, pdf, cdf, logcdf, sf, logsf,
ppf, with shape b, loc and scale; support x >= loc + scale (as JAX's: below it logpdf is
-inf, cdf 0, logsf 0)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special._common import floats


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = floats(x, b, loc, scale)
    z = (x - loc) / scale
    v = -(xnp.log(scale / b) + (b + 1.0) * xnp.log(z))
    return xnp.where(x < loc + scale, xnp.full_like(v, -np.inf), v)


def pdf(x, b, loc=0, scale=1):
    return xnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = floats(x, b, loc, scale)
    v = 1.0 - ((x - loc) / scale) ** (-b)
    return xnp.where(x < loc + scale, xnp.zeros_like(v), v)


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = floats(x, b, loc, scale)
    v = xnp.log1p(-(((x - loc) / scale) ** (-b)))
    return xnp.where(x < loc + scale, xnp.full_like(v, -np.inf), v)


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = floats(x, b, loc, scale)
    v = -b * xnp.log((x - loc) / scale)
    return xnp.where(x < loc + scale, xnp.zeros_like(v), v)


def sf(x, b, loc=0, scale=1):
    return xnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = floats(q, b, loc, scale)
    v = scale * (1.0 - q) ** (-1.0 / b) + loc
    return xnp.where(xnp.isnan(q) | (q < 0) | (q > 1), xnp.full_like(v, np.nan), v)
