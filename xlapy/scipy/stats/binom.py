"""The binomial distribution (jax.scipy.stats.binom): logpmf, pmf, with loc; -inf outside
0 <= k - loc <= n, and log-probability 0 where it is certain (as JAX's)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import gammaln, xlog1py, xlogy
from xlapy.scipy.special._common import floats


def logpmf(k, n, p, loc=0):
    k, n, p, loc = floats(k, n, p, loc)
    y = k - loc
    comb = gammaln(n + 1.0) - (gammaln(y + 1.0) + gammaln(n - y + 1.0))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    v = comb + linear
    v = xnp.where(((y == 0) & (n == 0)) | (linear == 0), xnp.zeros_like(v), v)
    inside = (k >= loc) & (k < loc + n + 1.0)
    return xnp.where(inside, v, xnp.full_like(v, -np.inf))


def pmf(k, n, p, loc=0):
    return xnp.exp(logpmf(k, n, p, loc))
