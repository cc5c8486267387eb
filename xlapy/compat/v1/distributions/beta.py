"""tf.distributions.Beta: density x^(a-1) (1-x)^(b-1) / B(a, b) on (0, 1), a the
concentration1 and b the concentration0.

A sample is g1 / (g1 + g0) of two Gamma draws (g1 ~ Gamma(a), g0 ~ Gamma(b)), so it is
reparameterized as the Gamma draws are. cdf is the regularized incomplete beta function
(tf.betainc), whose gradient TF defines for x only.
"""

from __future__ import annotations

from xlapy.compat.v1.distributions import FULLY_REPARAMETERIZED, Distribution, RegisterKL
from xlapy.compat.v1.distributions._util import (defined_where, float_params,
                                                 sample_shape_list, second_seed, tf_module,
                                                 value_tensor)


class Beta(Distribution):
    """Beta(concentration1, concentration0); batch shape the parameters' broadcast shape."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        if concentration1 is None or concentration0 is None:
            raise ValueError("Beta needs both concentration1 and concentration0")
        c1, c0 = float_params("Beta", ("concentration1", "concentration0"),
                              (concentration1, concentration0))
        self._c1, self._c0 = c1, c0
        super().__init__(c1.dtype, validate_args, allow_nan_stats, name,
                         {"concentration1": c1, "concentration0": c0})

    concentration1 = property(lambda self: self._c1)
    concentration0 = property(lambda self: self._c0)

    @property
    def total_concentration(self):
        return self._c1 + self._c0

    def _batch_tensor(self):
        return self._c1 * 0 + self._c0 * 0

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        full = self._batch_tensor()
        g1 = tf.random_gamma(s, self._c1 + full, dtype=self._dtype, seed=seed)
        g0 = tf.random_gamma(s, self._c0 + full, dtype=self._dtype,
                             seed=second_seed(seed, 7))
        return g1 / (g1 + g0)

    def _log_normalization(self):
        tf = tf_module()
        return tf.lgamma(self._c1) + tf.lgamma(self._c0) - tf.lgamma(self.total_concentration)

    def _log_prob(self, x):
        tf = tf_module()
        return (tf.math.xlogy(self._c1 - 1.0, x) + (self._c0 - 1.0) * tf.log1p(-x) -
                self._log_normalization())

    def cdf(self, value, name="cdf"):
        tf = tf_module()
        x = value_tensor(value, self._dtype)
        full = self._batch_tensor() + x * 0
        return tf.betainc(self._c1 + full, self._c0 + full, x + full, name=name)

    def entropy(self, name="entropy"):
        tf = tf_module()
        c1, c0, t = self._c1, self._c0, self.total_concentration
        return (self._log_normalization() - (c1 - 1.0) * tf.digamma(c1) -
                (c0 - 1.0) * tf.digamma(c0) + (t - 2.0) * tf.digamma(t))

    def mean(self, name="mean"):
        return self._c1 / self.total_concentration + self._batch_tensor()

    def variance(self, name="variance"):
        m = self.mean()
        return m * (1.0 - m) / (1.0 + self.total_concentration)

    def mode(self, name="mode"):
        tf = tf_module()
        m = (self._c1 - 1.0) / (self.total_concentration - 2.0) + self._batch_tensor()
        cond = tf.logical_and(tf.greater(self._c1 + self._batch_tensor(), 1.0),
                              tf.greater(self._c0 + self._batch_tensor(), 1.0))
        return defined_where(self, cond, m,
                             "mode undefined for concentration1 <= 1 or concentration0 <= 1")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    """KL(Beta(a1, b1) || Beta(a2, b2)) in closed form."""
    tf = tf_module()
    a1, b1, t1 = d1.concentration1, d1.concentration0, d1.total_concentration
    a2, b2, t2 = d2.concentration1, d2.concentration0, d2.total_concentration
    return (d2._log_normalization() - d1._log_normalization() -
            tf.digamma(a1) * (a2 - a1) - tf.digamma(b1) * (b2 - b1) +
            tf.digamma(t1) * (t2 - t1))
