"""tf.distributions.Gamma and Exponential (an Exponential is a Gamma of concentration 1,
so KL(Gamma || Gamma) covers both).

Gamma(concentration, rate): density rate^c x^(c-1) e^(-rate x) / Gamma(c) on x > 0.
Samples are tf.random_gamma draws divided by the rate; they are reparameterized (the
RandomGamma op has TF's implicit gradient with respect to the concentration), so
gradients reach both parameters. Exponential(rate) draws -log(u) / rate, u uniform.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.distributions import (FULLY_REPARAMETERIZED, Distribution,
                                           RegisterKL)
from xlapy.compat.v1.distributions._util import (defined_where, float_params,
                                                 sample_shape_list, tf_module, value_tensor)


class Gamma(Distribution):
    """Gamma(concentration, rate); batch shape the parameters' broadcast shape."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        c, r = float_params(type(self).__name__, ("concentration", "rate"),
                            (concentration, rate))
        self._concentration, self._rate = c, r
        super().__init__(c.dtype, validate_args, allow_nan_stats, name,
                         {"concentration": c, "rate": r})

    concentration = property(lambda self: self._concentration)
    rate = property(lambda self: self._rate)

    def _batch_tensor(self):
        return self._concentration * 0 + self._rate * 0

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        return tf.random_gamma(sample_shape_list(sample_shape), self._concentration,
                               beta=self._rate, dtype=self._dtype, seed=seed)

    def _log_prob(self, x):
        tf = tf_module()
        c, r = self._concentration, self._rate
        return tf.math.xlogy(c - 1.0, x) - r * x + c * tf.log(r) - tf.lgamma(c)

    def cdf(self, value, name="cdf"):
        tf = tf_module()
        x = value_tensor(value, self._dtype)
        full = self._batch_tensor() + x * 0
        return tf.igamma(self._concentration + full, self._rate * x + full, name=name)

    def entropy(self, name="entropy"):
        tf = tf_module()
        c, r = self._concentration, self._rate
        return c - tf.log(r) + tf.lgamma(c) + (1.0 - c) * tf.digamma(c)

    def mean(self, name="mean"):
        return self._concentration / self._rate + self._batch_tensor()

    def variance(self, name="variance"):
        return self._concentration / tf_module().square(self._rate) + self._batch_tensor()

    def stddev(self, name="stddev"):
        return tf_module().sqrt(self._concentration) / self._rate + self._batch_tensor()

    def mode(self, name="mode"):
        m = (self._concentration - 1.0) / self._rate + self._batch_tensor()
        cond = tf_module().greater(self._concentration + self._batch_tensor(), 1.0)
        return defined_where(self, cond, m, "mode not defined when any concentration <= 1")


class Exponential(Gamma):
    """Exponential(rate): density rate e^(-rate x) on x >= 0."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        tf = tf_module()
        (r,) = float_params("Exponential", ("rate",), (rate,))
        super().__init__(tf.ones_like(r), r, validate_args, allow_nan_stats, name)
        self._parameters = {"rate": r}

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        shape = tf.concat([s if hasattr(s, "op") else np.asarray(s, np.int32),
                           tf.shape(self._batch_tensor())], 0)
        tiny = np.finfo(self._dtype.np).tiny
        u = tf.random_uniform(shape, minval=tiny, maxval=1.0, dtype=self._dtype, seed=seed)
        return -tf.log(u) / self._rate

    def _log_prob(self, x):
        tf = tf_module()
        return tf.log(self._rate) - self._rate * x

    def cdf(self, value, name="cdf"):
        tf = tf_module()
        x = value_tensor(value, self._dtype)
        return -tf.expm1(-self._rate * x)

    def entropy(self, name="entropy"):
        return 1.0 - tf_module().log(self._rate)

    def mode(self, name="mode"):
        return self._batch_tensor()


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    """KL(Gamma(c0, r0) || Gamma(c1, r1)) in closed form."""
    tf = tf_module()
    c0, r0, c1, r1 = g0.concentration, g0.rate, g1.concentration, g1.rate
    return ((c0 - c1) * tf.digamma(c0) + tf.lgamma(c1) - tf.lgamma(c0) +
            c1 * (tf.log(r0) - tf.log(r1)) + c0 * (r1 / r0 - 1.0))
