"""Standard forms (loc 0, scale 1) of the continuous distributions in xlapy.scipy.stats:
log-density, cdf, survival function and quantile of z, with the shape parameters after z.
Outside the support the log-density is -inf and the cdf 0 or 1, as SciPy and JAX."""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import betainc, betaln, gammainc, gammaincc, gammaln, xlog1py, xlogy


def _outside(cond, v):
    return xnp.where(cond, xnp.full_like(v, -np.inf), v)


def expon_logpdf(z):
    return _outside(z < 0.0, -z)


def expon_cdf(z):
    return xnp.where(z < 0.0, xnp.zeros_like(z), -xnp.expm1(-z))


def expon_sf(z):
    return xnp.where(z < 0.0, xnp.ones_like(z), xnp.exp(-z))


def expon_ppf(q):
    return -xnp.log1p(-q)


def uniform_logpdf(z):
    return _outside((z < 0.0) | (z > 1.0), xnp.zeros_like(z))


def uniform_cdf(z):
    return xnp.clip(z, 0.0, 1.0)


def uniform_ppf(q):
    return xnp.where((q < 0.0) | (q > 1.0), xnp.full_like(q, np.nan), q)


def cauchy_logpdf(z):
    return -math.log(math.pi) - xnp.log1p(z * z)


def cauchy_cdf(z):
    return 0.5 + xnp.arctan(z) / math.pi


def cauchy_sf(z):
    return 0.5 - xnp.arctan(z) / math.pi


def cauchy_ppf(q):
    return xnp.tan(math.pi * (q - 0.5))


def laplace_logpdf(z):
    return -math.log(2.0) - xnp.abs(z)


def laplace_cdf(z):
    return xnp.where(z < 0.0, 0.5 * xnp.exp(z), 1.0 - 0.5 * xnp.exp(-z))


def laplace_sf(z):
    return laplace_cdf(-z)


def laplace_ppf(q):
    return xnp.where(q < 0.5, xnp.log(2.0 * q), -xnp.log(2.0 - 2.0 * q))


def gamma_logpdf(z, a):
    return _outside(z < 0.0, xlogy(a - 1.0, z) - z - gammaln(a))


def gamma_cdf(z, a):
    return gammainc(a, xnp.maximum(z, 0.0))


def gamma_sf(z, a):
    return gammaincc(a, xnp.maximum(z, 0.0))


def chi2_logpdf(z, df):
    k = df / 2.0
    return _outside(z < 0.0, xlogy(k - 1.0, z) - z / 2.0 - gammaln(k) - k * math.log(2.0))


def chi2_cdf(z, df):
    return gammainc(df / 2.0, xnp.maximum(z, 0.0) / 2.0)


def chi2_sf(z, df):
    return gammaincc(df / 2.0, xnp.maximum(z, 0.0) / 2.0)


def beta_logpdf(z, a, b):
    return _outside((z < 0.0) | (z > 1.0), xlogy(a - 1.0, z) + xlog1py(b - 1.0, -z) -
                    betaln(a, b))


def beta_cdf(z, a, b):
    return betainc(a, b, xnp.clip(z, 0.0, 1.0))


def beta_sf(z, a, b):
    return betainc(b, a, 1.0 - xnp.clip(z, 0.0, 1.0))


def t_logpdf(z, df):
    return (gammaln((df + 1.0) / 2.0) - gammaln(df / 2.0) - 0.5 * xnp.log(df * math.pi) -
            (df + 1.0) / 2.0 * xnp.log1p(z * z / df))


def t_cdf(z, df):
    tail = 0.5 * betainc(df / 2.0, xnp.full_like(df, 0.5), df / (df + z * z))
    return xnp.where(z < 0.0, tail, 1.0 - tail)


def t_sf(z, df):
    return t_cdf(-z, df)
