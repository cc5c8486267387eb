"""The Dirichlet distribution (jax.scipy.stats.dirichlet): logpdf, pdf. x holds the
categories along axis 0 (all K of them, or K - 1 with the last implied); -inf off the
simplex (an entry <= 0, or a sum more than 1e-6 from 1), as JAX's."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import ShapeError
from xlapy.scipy.special import gammaln, xlogy
from xlapy.scipy.special._common import floats


def logpdf(x, alpha):
    x, alpha = floats(x, alpha)
    x, alpha = xnp.asarray(x), xnp.asarray(alpha)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet: alpha must be 1-dimensional, got shape "
                         f"{list(alpha.shape)}")
    if x.ndim == 0 or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ShapeError(f"dirichlet: x needs {alpha.shape[0]} or {alpha.shape[0] - 1} "
                         f"entries along axis 0 for alpha of shape {list(alpha.shape)}, got "
                         f"shape {list(x.shape)}")
    if x.shape[0] != alpha.shape[0]:
        x = xnp.concatenate([x, 1.0 - xnp.sum(x, axis=0, keepdims=True)], axis=0)
    norm = xnp.sum(gammaln(alpha)) - gammaln(xnp.sum(alpha))
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    v = xnp.sum(xlogy(a - 1.0, x), axis=0) - norm
    simplex = xnp.all(x > 0, axis=0) & (xnp.abs(xnp.sum(x, axis=0) - 1.0) < 1e-6)
    return xnp.where(simplex, v, xnp.full_like(v, -np.inf))


def pdf(x, alpha):
    return xnp.exp(logpdf(x, alpha))
