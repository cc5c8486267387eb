"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): logpdf and
pdf, the covariance factored by Cholesky (xlapy.scipy._linalg)."""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy._linalg import cholesky, solve_lower
from xlapy.scipy.special._common import floats


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = floats(x, mean, cov)
    if not xnp.shape(mean):
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * math.pi) + xnp.log(cov))
    n = xnp.shape(mean)[-1]
    if not xnp.shape(cov):
        y = x - mean
        return (-0.5 * xnp.sum(y * y, axis=-1) / cov
                - n / 2 * (math.log(2 * math.pi) + xnp.log(cov)))
    if xnp.ndim(cov) < 2 or xnp.shape(cov)[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes: mean "
                         f"{xnp.shape(mean)}, cov {xnp.shape(cov)}")
    lower = cholesky(cov)
    diff = x - mean
    batch = np.broadcast_shapes(xnp.shape(lower)[:-2], xnp.shape(diff)[:-1])
    y = solve_lower(xnp.broadcast_to(lower, batch + (n, n)), xnp.broadcast_to(diff, batch + (n,)))
    log_det = xnp.sum(xnp.log(xnp.diagonal(lower, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * xnp.sum(y * y, axis=-1) - n / 2 * math.log(2 * math.pi) - log_det


def pdf(x, mean, cov):
    return xnp.exp(logpdf(x, mean, cov))
