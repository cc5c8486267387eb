"""tf.distributions.Multinomial: counts of total_count draws over k classes (event shape
[k], the last dimension of logits or probs; batch shape the broadcast of total_count and
logits.shape[:-1]). Counts are floats of the parameters' dtype, as in TF.

log_prob(counts) = log(n! / prod(counts_i!)) + sum(counts_i log p_i), n the total_count
(as in TF, counts summing to another number are not checked unless validate_args).
Samples are not reparameterized: each is max(total_count) categorical draws of which the
first total_count (of its batch member) are counted.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.distributions import NOT_REPARAMETERIZED, Distribution
from xlapy.compat.v1.distributions._util import (covariance_from, float_params,
                                                 log_combinations, sample_shape_list,
                                                 tf_module)


def draw_counts(logits, n, seed):
    """One multinomial count vector per row of logits [..., k] (total counts n [...], of
    logits' dtype, broadcast): counts [..., k]."""
    tf = tf_module()
    dt = logits.dtype
    n = n + tf.reduce_sum(logits * 0, axis=-1)
    logits = logits + tf.expand_dims(n * 0, -1)
    k = logits.shape.dims[-1] if logits.shape.ndims else None
    k_t = tf.shape(logits)[-1] if k is None else k
    flat = tf.reshape(logits, tf.stack([-1, k_t]))
    nf = tf.reshape(n, [-1])
    max_n = tf.cast(tf.reduce_max(tf.concat([nf, tf.zeros([1], dt)], 0)), tf.int32)
    draws = tf.multinomial(flat, max_n, seed=seed, output_dtype=tf.int32)   # [rows, max_n]
    keep = tf.cast(tf.less(tf.cast(tf.range(max_n), dt)[None, :], nf[:, None]), dt)
    counts = tf.reduce_sum(tf.one_hot(draws, k_t, dtype=dt) * keep[:, :, None], axis=1)
    return tf.reshape(counts, tf.shape(logits))


def probs_and_logits(cls_name, total_count, logits, probs):
    tf = tf_module()
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    which = "logits" if logits is not None else "probs"
    n, p = float_params(cls_name, ("total_count", which),
                        (total_count, logits if logits is not None else probs))
    if p.shape.ndims == 0:
        raise ValueError(f"{cls_name}: {which} must have at least one dimension (its last "
                         "is the event's)")
    if logits is not None:
        return n, tf.nn.softmax(p), p
    return n, p, tf.log(p)


class Multinomial(Distribution):
    """Multinomial(total_count, logits=None, probs=None)."""
    reparameterization_type = NOT_REPARAMETERIZED

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        n, p, lg = probs_and_logits("Multinomial", total_count, logits, probs)
        self._total_count, self._probs, self._logits = n, p, lg
        super().__init__(n.dtype, validate_args, allow_nan_stats, name,
                         {"total_count": n, "logits": lg, "probs": p})

    total_count = property(lambda self: self._total_count)
    probs = property(lambda self: self._probs)
    logits = property(lambda self: self._logits)

    def _batch_tensor(self):
        tf = tf_module()
        return self._total_count * 0 + tf.reduce_sum(self._logits * 0, axis=-1)

    @property
    def event_shape(self):
        return self._logits.shape[-1:]

    def event_shape_tensor(self, name="event_shape_tensor"):
        return tf_module().shape(self._logits, name=name)[-1:]

    def _sample(self, sample_shape, seed):
        tf = tf_module()
        s = sample_shape_list(sample_shape)
        s = s if hasattr(s, "op") else tf.constant(np.asarray(s, np.int32).reshape(-1))
        zeros = tf.zeros(tf.concat([s, tf.shape(self._batch_tensor())], 0), self._dtype)
        return draw_counts(self._logits + tf.expand_dims(zeros, -1),
                           self._total_count + zeros, seed)

    def _log_prob(self, counts):
        tf = tf_module()
        lp = tf.nn.log_softmax(self._logits)
        full = counts + tf.zeros_like(lp)      # (lp * 0 would be NaN where lp is -inf)
        terms = tf.where(tf.equal(full, 0.0), tf.zeros_like(full), counts * lp)
        return log_combinations(self._total_count, counts) + tf.reduce_sum(terms, axis=-1)

    def mean(self, name="mean"):
        return tf_module().expand_dims(self._total_count, -1) * self._probs

    def variance(self, name="variance"):
        p = self._probs
        return tf_module().expand_dims(self._total_count, -1) * p * (1.0 - p)

    def covariance(self, name="covariance"):
        tf = tf_module()
        x = tf.sqrt(tf.expand_dims(self._total_count, -1)) * self._probs
        return covariance_from(x, self.variance())
