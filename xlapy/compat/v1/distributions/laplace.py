"""tf.distributions.Laplace: density exp(-|x - loc| / scale) / (2 scale).

A sample is loc - scale * sign(u) * log(1 - |u|), u uniform in (-1, 1): reparameterized.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1.distributions import FULLY_REPARAMETERIZED, Distribution
from xlapy.compat.v1.distributions._util import (float_params, sample_shape_list, tf_module,
                                                 value_tensor)


class Laplace(Distribution):
    """Laplace(loc, scale); batch shape the parameters' broadcast shape."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="Laplace"):
        self.loc, self.scale = float_params("Laplace", ("loc", "scale"), (loc, scale))
        super().__init__(self.loc.dtype, validate_args, allow_nan_stats, name,
                         {"loc": self.loc, "scale": self.scale})

    def _batch_tensor(self):
        return self.loc * 0 + self.scale * 0

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        shape = tf.concat([s if hasattr(s, "op") else np.asarray(s, np.int32),
                           tf.shape(self._batch_tensor())], 0)
        npdt = self._dtype.np
        low = np.nextafter(npdt.type(-1.0), npdt.type(0.0))
        u = tf.random_uniform(shape, minval=low, maxval=1.0, dtype=self._dtype, seed=seed)
        return self.loc - self.scale * tf.sign(u) * tf.log1p(-tf.abs(u))

    def _log_prob(self, x):
        tf = tf_module()
        return -math.log(2.0) - tf.log(self.scale) - tf.abs(x - self.loc) / self.scale

    def cdf(self, value, name="cdf"):
        tf = tf_module()
        z = (value_tensor(value, self._dtype) - self.loc) / self.scale
        return tf.where(tf.less(z, 0.0), 0.5 * tf.exp(z), 1.0 - 0.5 * tf.exp(-z))

    def entropy(self, name="entropy"):
        return (math.log(2.0) + 1.0) + tf_module().log(self.scale) + self._batch_tensor()

    def mean(self, name="mean"):
        return self.loc + self._batch_tensor()

    mode = mean

    def stddev(self, name="stddev"):
        return math.sqrt(2.0) * self.scale + self._batch_tensor()

    def variance(self, name="variance"):
        return 2.0 * tf_module().square(self.scale) + self._batch_tensor()
