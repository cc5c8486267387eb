"""The geometric distribution (jax.scipy.stats.geom): logpmf, pmf, with loc. P(k) =
(1 - p)^(k - 1) p for k = 1, 2, ...; -inf (0) for k <= 0, as JAX's."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.scipy.special import xlog1py
from xlapy.scipy.special._common import floats


def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc)
    x = k - loc
    v = xlog1py(x - 1.0, -p) + xnp.log(p)
    return xnp.where(x <= 0.0, xnp.full_like(v, -np.inf), v)


def pmf(k, p, loc=0):
    return xnp.exp(logpmf(k, p, loc))
