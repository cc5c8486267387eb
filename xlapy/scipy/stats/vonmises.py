"""The von Mises distribution (jax.scipy.stats.vonmises): logpdf, pdf; NaN for kappa <= 0
(as JAX's). log p(x) = kappa (cos x - 1) - log(2 pi i0e(kappa))."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import i0e
from xlapy.scipy.special._common import floats


def logpdf(x, kappa):
    x, kappa = floats(x, kappa)
    v = kappa * (xnp.cos(x) - 1.0) - xnp.log(2 * np.pi * i0e(kappa))
    return xnp.where(kappa > 0, v, xnp.full_like(v, np.nan))


def pdf(x, kappa):
    return xnp.exp(logpdf(x, kappa))
