"""The negative binomial distribution (jax.scipy.stats.nbinom): logpmf, pmf, with loc
(k failures before the n-th success of probability p; -inf for k < loc)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import gammaln, xlogy
from xlapy.scipy.special._common import floats


def logpmf(k, n, p, loc=0):
    k, n, p, loc = floats(k, n, p, loc)
    y = k - loc
    v = (gammaln(y + n) - gammaln(n) - gammaln(y + 1.0)) + (xlogy(n, p) + xlogy(y, 1.0 - p))
    return xnp.where(k < loc, xnp.full_like(v, -np.inf), v)


def pmf(k, n, p, loc=0):
    return xnp.exp(logpmf(k, n, p, loc))
