"""tf.distributions.DirichletMultinomial: counts of total_count draws over k classes whose
probabilities are themselves drawn from Dirichlet(concentration) (event shape [k]).

log_prob(counts) = log(n! / prod(counts_i!)) + lbeta(c + counts) - lbeta(c). A sample
draws the probabilities (Gamma draws, normalized) and then the counts, so it is not
reparameterized.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.distributions import NOT_REPARAMETERIZED, Distribution
from xlapy.compat.v1.distributions._util import (covariance_from, float_params,
                                                 log_combinations, sample_shape_list,
                                                 second_seed, tf_module)
from xlapy.compat.v1.distributions.dirichlet import _lbeta
from xlapy.compat.v1.distributions.multinomial import draw_counts


class DirichletMultinomial(Distribution):
    """DirichletMultinomial(total_count, concentration)."""
    reparameterization_type = NOT_REPARAMETERIZED

    def __init__(self, total_count, concentration, validate_args=False,
                 allow_nan_stats=True, name="DirichletMultinomial"):
        n, c = float_params("DirichletMultinomial", ("total_count", "concentration"),
                            (total_count, concentration))
        if c.shape.ndims == 0:
            raise ValueError("DirichletMultinomial: concentration must have at least one "
                             "dimension (its last is the event's)")
        self._total_count, self._concentration = n, c
        super().__init__(n.dtype, validate_args, allow_nan_stats, name,
                         {"total_count": n, "concentration": c})

    total_count = property(lambda self: self._total_count)
    concentration = property(lambda self: self._concentration)

    @property
    def total_concentration(self):
        return tf_module().reduce_sum(self._concentration, axis=-1)

    def _batch_tensor(self):
        return self._total_count * 0 + self.total_concentration * 0

    @property
    def event_shape(self):
        return self._concentration.shape[-1:]

    def event_shape_tensor(self, name="event_shape_tensor"):
        return tf_module().shape(self._concentration, name=name)[-1:]

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        s = s if hasattr(s, "op") else tf.constant(np.asarray(s, np.int32).reshape(-1))
        batch = self._batch_tensor()
        c = self._concentration + tf.expand_dims(batch, -1)
        g = tf.random_gamma(s, c, dtype=self._dtype, seed=seed)        # [S..., B..., k]
        zeros = tf.zeros(tf.concat([s, tf.shape(batch)], 0), self._dtype)
        return draw_counts(tf.log(g), self._total_count + zeros, second_seed(seed, 11))

    def _log_prob(self, counts):
        c = self._concentration
        return (_lbeta(c + counts) - _lbeta(c) +
                log_combinations(self._total_count, counts))

    def mean(self, name="mean"):
        tf = tf_module()
        return (tf.expand_dims(self._total_count, -1) * self._concentration /
                tf.expand_dims(self.total_concentration, -1))

    def _scale(self):
        tf = tf_module()
        c0 = tf.expand_dims(self.total_concentration, -1)
        return tf.sqrt((1.0 + c0 / tf.expand_dims(self._total_count, -1)) / (1.0 + c0))

    def variance(self, name="variance"):
        x = self._scale() * self.mean()
        return x * (tf_module().expand_dims(self._total_count, -1) * self._scale() - x)

    def covariance(self, name="covariance"):
        return covariance_from(self._scale() * self.mean(), self.variance())
