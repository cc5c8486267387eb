"""Helpers shared by the distribution families of this package (gamma.py, beta.py, ...):
parameter conversion to one float dtype, statistics that are undefined for some
parameters (NaN, or a run-time assertion with allow_nan_stats=False), the seed of a second
random draw, and the log multinomial coefficient."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor


def tf_module():
    import xlapy.compat.v1 as tf  # (the package: its ops are composed here at call time)
    return tf


def float_params(cls_name: str, names: tuple, values: tuple) -> list:
    """The parameters as tensors of one float dtype (that of the first tensor among them,
    else float32); a tensor of another dtype is refused by name."""
    tf = tf_module()
    dt = next((v.dtype for v in values if isinstance(v, Tensor) or hasattr(v, "op")), None)
    if dt is None:
        # NumPy float64 values keep their precision; Python numbers become float32 (TF's)
        dt = tf.float64 if any(isinstance(v, (np.ndarray, np.generic)) and
                               v.dtype == np.float64 for v in values) else tf.float32
    if not dt.is_floating:
        raise InvalidArgumentError(f"{cls_name}: {names[0]} has dtype {dt.name}; the "
                                   "parameters must be of a float type")
    out = []
    for n, v in zip(names, values):
        t = v if hasattr(v, "op") else tf.convert_to_tensor(np.asarray(v, dt.np))
        if t.dtype != dt:
            raise InvalidArgumentError(f"{cls_name}: {n} is {t.dtype.name} but {names[0]} is "
                                       f"{dt.name}; they must be one float type")
        out.append(t)
    return out


def value_tensor(value, dtype):
    tf = tf_module()
    if hasattr(value, "op"):
        return value
    return tf.convert_to_tensor(np.asarray(value, dtype.np))


def defined_where(dist, cond, value, what: str):
    """value where cond holds, elsewhere NaN (allow_nan_stats, TF's default) or, with
    allow_nan_stats=False, a run-time InvalidArgumentError naming the statistic."""
    tf = tf_module()
    if dist.allow_nan_stats:
        nan = tf.fill(tf.shape(value), np.asarray(np.nan, value.dtype.np))
        return tf.where(cond, value, nan)
    check = tf.Assert(tf.reduce_all(cond), [f"{type(dist).__name__}: {what}"])
    with tf.control_dependencies([check]):
        return tf.identity(value)


def second_seed(seed, salt: int):
    """The op seed of a second draw of one sample() call (None stays None), so that a
    seeded sample draws its two parts from different streams."""
    if seed is None:
        return None
    return (int(seed) * 1000003 + salt) % (2 ** 31 - 1)


def log_combinations(n, counts):
    """log(n! / prod(counts_i!)), the multinomial coefficient, over the last axis of counts."""
    tf = tf_module()
    return tf.lgamma(n + 1.0) - tf.reduce_sum(tf.lgamma(counts + 1.0), axis=-1)


def sample_shape_list(sample_shape):
    """sample_shape as a list of ints, or an int32 tensor [k] when it is a tensor."""
    tf = tf_module()
    if hasattr(sample_shape, "op"):
        return tf.reshape(tf.cast(sample_shape, tf.int32), [-1])
    return [int(sample_shape)] if np.ndim(sample_shape) == 0 else [int(d) for d in sample_shape]


def covariance_from(mean_scaled, variance):
    """The covariance matrix [..., k, k] with -x_i x_j off the diagonal (x = mean_scaled)
    and `variance` on it (Dirichlet, Multinomial, DirichletMultinomial)."""
    tf = tf_module()
    outer = -tf.expand_dims(mean_scaled, -1) * tf.expand_dims(mean_scaled, -2)
    return tf.matrix_set_diag(outer, variance)
