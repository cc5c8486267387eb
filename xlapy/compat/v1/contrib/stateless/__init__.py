"""tf.contrib.stateless: random ops that are pure functions of (shape, seed), seed a [2]
int32/int64 tensor: the same seed gives the same values in every run and session.

stateless_random_uniform and stateless_random_normal are tf.random's (ops/nnx_random.py:
NumPy's generator seeded with the two seed values, so the values differ from TF's Philox
stream while their distribution and determinism match). The two others are built on them:

- stateless_truncated_normal draws 8 normal candidates per value and keeps the first with
  |x| < 2: exactly the normal truncated to (-2, 2) (the chance that all 8 miss, 2e-11 per
  value, gives the first candidate clipped to [-2, 2]), then * stddev + mean.
- stateless_multinomial draws categorical samples by the Gumbel-max trick: the argmax over
  classes of logits - log(-log(u)), u uniform in (0, 1) from the seed.

The uniform and normal draws run in the executor; the arithmetic after them compiles.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor as _Tensor
from xlapy.compat.v1.framework import get_default_graph as _get_default_graph
from xlapy.compat.v1.ops.nnx_random import stateless_random_normal, stateless_random_uniform

_CANDIDATES = 8   # normal draws per truncated-normal value
_BOUND = 2.0      # truncated at two standard deviations, as TF's


def _tf():
    import xlapy.compat.v1 as tf  # (the package imports this module while it loads)
    return tf


def _static_dims(shape):
    """shape as a list of ints when it is known now, else None."""
    if isinstance(shape, _Tensor):
        from xlapy.compat.v1.ops._common import constant_value  # (ops load after this)
        v = constant_value(shape)
        return None if v is None else [int(d) for d in np.reshape(v, [-1])]
    return [int(d) for d in shape]


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None):
    """Values of a normal(mean, stddev) truncated to within two standard deviations, a
    deterministic function of seed ([2] ints)."""
    tf = _tf()
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise InvalidArgumentError(f"stateless_truncated_normal: dtype must be floating, got "
                                   f"{dtype.name}")
    with _get_default_graph().name_scope(name or "stateless_truncated_normal"):
        dims = _static_dims(shape)
        if dims is not None:
            if any(d < 0 for d in dims):
                raise InvalidArgumentError(f"stateless_truncated_normal: shape dimensions must "
                                           f"be >= 0, got {dims}")
            cand_shape = dims + [_CANDIDATES]
        else:
            shp = tf.cast(tf.convert_to_tensor(shape), dtypes.int32)
            cand_shape = tf.concat([shp, tf.constant([_CANDIDATES], dtypes.int32)], 0)
        cand = stateless_random_normal(cand_shape, seed, dtype=dtype)
        ok = tf.cast(tf.less(tf.abs(cand), tf.constant(_BOUND, dtype)), dtypes.int32)
        first = tf.argmax(ok, -1, output_type=dtypes.int32)   # the first inside, else 0
        pick = tf.reduce_sum(tf.multiply(cand, tf.one_hot(first, _CANDIDATES, dtype=dtype)),
                             -1)
        pick = tf.clip_by_value(pick, tf.constant(-_BOUND, dtype), tf.constant(_BOUND, dtype))
        if dims is not None:
            pick.set_shape(dims)
        return tf.add(tf.multiply(pick, tf.cast(stddev, dtype)), tf.cast(mean, dtype))


def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64, name=None):
    """[batch, num_samples] class indices drawn from the categorical distributions of the
    rows of logits ([batch, classes], unnormalized log-probabilities), a deterministic
    function of seed ([2] ints)."""
    tf = _tf()
    output_dtype = dtypes.as_dtype(output_dtype)
    if output_dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"stateless_multinomial: output_dtype must be int32 or "
                                   f"int64, got {output_dtype.name}")
    with _get_default_graph().name_scope(name or "stateless_multinomial"):
        logits = tf.convert_to_tensor(logits)
        if not logits.dtype.is_floating:
            raise InvalidArgumentError(f"stateless_multinomial: logits must be floating, got "
                                       f"{logits.dtype.name}")
        if logits.shape.ndims is not None and logits.shape.ndims != 2:
            raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                       f"{logits.shape.tf_str()}")
        if not isinstance(num_samples, _Tensor):
            if int(num_samples) < 0:
                raise InvalidArgumentError(f"num_samples should be nonnegative, got "
                                           f"{num_samples}")
        noise_dt = dtypes.float64 if logits.dtype == dtypes.float64 else dtypes.float32
        dims = logits.shape.as_list() if logits.shape.is_fully_defined() else None
        n = None if isinstance(num_samples, _Tensor) else int(num_samples)
        if dims is not None and n is not None:
            u_shape = [dims[0], n, dims[1]]
        else:
            s = tf.shape(logits, out_type=dtypes.int32)
            u_shape = tf.stack([s[0], tf.cast(num_samples, dtypes.int32), s[1]])
        tiny = float(np.finfo(noise_dt.np).tiny)
        u = stateless_random_uniform(u_shape, seed, minval=tiny, maxval=1.0, dtype=noise_dt)
        gumbel = tf.negative(tf.log(tf.negative(tf.log(u))))
        scores = tf.add(tf.expand_dims(tf.cast(logits, noise_dt), 1), gumbel)
        return tf.argmax(scores, -1, output_type=output_dtype)


__all__ = ["stateless_multinomial", "stateless_random_normal", "stateless_random_uniform",
           "stateless_truncated_normal"]
