"""tf.distributions.StudentT(df, loc, scale): the location-scale Student's t, density
Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi) |scale|) (1 + y^2/df)^(-(df+1)/2), y =
(x - loc) / scale.

A sample is loc + scale * z / sqrt(g / df), z standard normal and g chi-squared with df
degrees of freedom (a Gamma(df/2, rate 1/2) draw): reparameterized. The mean is NaN for
df <= 1, the variance inf for 1 < df <= 2 and NaN for df <= 1 (or a run-time error with
allow_nan_stats=False).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1.distributions import FULLY_REPARAMETERIZED, Distribution
from xlapy.compat.v1.distributions._util import (defined_where, float_params,
                                                 sample_shape_list, second_seed, tf_module,
                                                 value_tensor)


class StudentT(Distribution):
    """StudentT(df, loc, scale); batch shape the parameters' broadcast shape."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        self._df, self._loc, self._scale = float_params(
            "StudentT", ("df", "loc", "scale"), (df, loc, scale))
        super().__init__(self._df.dtype, validate_args, allow_nan_stats, name,
                         {"df": self._df, "loc": self._loc, "scale": self._scale})

    df = property(lambda self: self._df)
    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_tensor(self):
        return self._df * 0 + self._loc * 0 + self._scale * 0

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        shape = tf.concat([s if hasattr(s, "op") else np.asarray(s, np.int32),
                           tf.shape(self._batch_tensor())], 0)
        z = tf.random_normal(shape, dtype=self._dtype, seed=seed)
        df = self._df + self._batch_tensor()
        g = tf.random_gamma(s, 0.5 * df, beta=0.5, dtype=self._dtype,
                            seed=second_seed(seed, 13))
        return z * tf.rsqrt(g / df) * self._scale + self._loc

    def _log_prob(self, x):
        tf = tf_module()
        df = self._df
        y = (x - self._loc) / self._scale
        return (-0.5 * (df + 1.0) * tf.log1p(tf.square(y) / df) -
                (tf.log(tf.abs(self._scale)) + 0.5 * tf.log(df) + 0.5 * math.log(math.pi) +
                 tf.lgamma(0.5 * df) - tf.lgamma(0.5 * (df + 1.0))))

    def cdf(self, value, name="cdf"):
        tf = tf_module()
        y = (value_tensor(value, self._dtype) - self._loc) / self._scale
        full = y + self._batch_tensor()
        df = self._df + full * 0
        x_t = df / (tf.square(full) + df)
        neg = 0.5 * tf.betainc(0.5 * df, 0.5 + full * 0, x_t)
        return tf.where(tf.less(full, 0.0), neg, 1.0 - neg, name=name)

    def entropy(self, name="entropy"):
        tf = tf_module()
        df = self._df + self._batch_tensor()
        lbeta = tf.lgamma(0.5 * df) + math.lgamma(0.5) - tf.lgamma(0.5 * df + 0.5)
        return (tf.log(tf.abs(self._scale)) + 0.5 * tf.log(df) + lbeta +
                0.5 * (df + 1.0) * (tf.digamma(0.5 * (df + 1.0)) - tf.digamma(0.5 * df)))

    def mean(self, name="mean"):
        m = self._loc + self._batch_tensor()
        cond = tf_module().greater(self._df + self._batch_tensor(), 1.0)
        return defined_where(self, cond, m, "mean not defined for components of df <= 1")

    def mode(self, name="mode"):
        return self._loc + self._batch_tensor()

    def variance(self, name="variance"):
        tf = tf_module()
        df = self._df + self._batch_tensor()
        denom = tf.where(tf.greater(df, 2.0), df - 2.0, tf.ones_like(df))
        var = tf.square(self._scale) * df / denom
        inf = tf.fill(tf.shape(df), np.asarray(np.inf, self._dtype.np))
        var = tf.where(tf.greater(df, 2.0), var, inf)
        return defined_where(self, tf.greater(df, 1.0), var,
                             "variance not defined for components of df <= 1")

    def stddev(self, name="stddev"):
        return tf_module().sqrt(self.variance())
