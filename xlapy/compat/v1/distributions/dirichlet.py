"""tf.distributions.Dirichlet: over the probability simplex of k = concentration.shape[-1]
components (event shape [k]; batch shape concentration.shape[:-1]), density
prod(x_i^(c_i-1)) / B(c).

A sample is a vector of k Gamma(c_i) draws divided by their sum (reparameterized as the
Gamma draws are).
"""

from __future__ import annotations

from xlapy.compat.v1.distributions import FULLY_REPARAMETERIZED, Distribution, RegisterKL
from xlapy.compat.v1.distributions._util import (covariance_from, defined_where,
                                                 float_params, sample_shape_list, tf_module)


def _lbeta(c):
    tf = tf_module()
    return tf.reduce_sum(tf.lgamma(c), axis=-1) - tf.lgamma(tf.reduce_sum(c, axis=-1))


class Dirichlet(Distribution):
    """Dirichlet(concentration), concentration [..., k] positive."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        (c,) = float_params("Dirichlet", ("concentration",), (concentration,))
        if c.shape.ndims == 0:
            raise ValueError("Dirichlet: concentration must have at least one dimension "
                             "(its last is the event's)")
        self._concentration = c
        super().__init__(c.dtype, validate_args, allow_nan_stats, name,
                         {"concentration": c})

    concentration = property(lambda self: self._concentration)

    @property
    def total_concentration(self):
        return tf_module().reduce_sum(self._concentration, axis=-1)

    def _batch_tensor(self):
        return self.total_concentration * 0

    @property
    def event_shape(self):
        return self._concentration.shape[-1:]

    def event_shape_tensor(self, name="event_shape_tensor"):
        return tf_module().shape(self._concentration, name=name)[-1:]

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        g = tf.random_gamma(sample_shape_list(sample_shape), self._concentration,
                            dtype=self._dtype, seed=seed)
        return g / tf.reduce_sum(g, axis=-1, keepdims=True)

    def _log_prob(self, x):
        tf = tf_module()
        return (tf.reduce_sum(tf.math.xlogy(self._concentration - 1.0, x), axis=-1) -
                _lbeta(self._concentration))

    def entropy(self, name="entropy"):
        tf = tf_module()
        c, c0 = self._concentration, self.total_concentration
        k = tf.cast(tf.shape(c)[-1], self._dtype)
        return (_lbeta(c) + (c0 - k) * tf.digamma(c0) -
                tf.reduce_sum((c - 1.0) * tf.digamma(c), axis=-1))

    def mean(self, name="mean"):
        return self._concentration / tf_module().expand_dims(self.total_concentration, -1)

    def _scale(self):
        return tf_module().rsqrt(1.0 + tf_module().expand_dims(self.total_concentration, -1))

    def variance(self, name="variance"):
        x = self._scale() * self.mean()
        return x * (self._scale() - x)

    def covariance(self, name="covariance"):
        return covariance_from(self._scale() * self.mean(), self.variance())

    def mode(self, name="mode"):
        tf = tf_module()
        c = self._concentration
        k = tf.cast(tf.shape(c)[-1], self._dtype)
        m = (c - 1.0) / tf.expand_dims(self.total_concentration - k, -1)
        cond = tf.tile(tf.reduce_all(tf.greater(c, 1.0), axis=-1, keepdims=True),
                       tf.concat([tf.ones_like(tf.shape(c)[:-1]), tf.shape(c)[-1:]], 0))
        return defined_where(self, cond, m, "mode undefined when any concentration <= 1")


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    """KL(Dir(c1) || Dir(c2)) = sum((c1 - c2)(digamma(c1) - digamma(sum c1)))
    - lbeta(c1) + lbeta(c2)."""
    tf = tf_module()
    c1, c2 = d1.concentration, d2.concentration
    dg = tf.digamma(c1) - tf.digamma(tf.reduce_sum(c1, axis=-1, keepdims=True))
    return tf.reduce_sum((c1 - c2) * dg, axis=-1) - _lbeta(c1) + _lbeta(c2)
