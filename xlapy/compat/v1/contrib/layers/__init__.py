"""tf.contrib.layers: the pieces TF 1.x scripts use most.

- Regularizers (l1_regularizer, l2_regularizer, l1_l2_regularizer, sum_regularizer): each
  returns a function of a weight tensor giving a scalar loss (None when the scale is 0);
  get_variable and the layers add those losses to tf.GraphKeys.REGULARIZATION_LOSSES.
- Initializers: xavier_initializer(_conv2d) and contrib's variance_scaling_initializer
  (its own rules: fans multiplied by the receptive field, a truncated normal of standard
  deviation sqrt(1.3 factor / n), or a uniform of limit sqrt(3 factor / n)).
- fully_connected (variables `fully_connected/weights` and `/biases`, applied to the last
  dimension; normalizer_fn replaces the bias) and flatten.
- layer_norm, embed_sequence, optimize_loss (misc.py); conv2d, pooling, batch_norm,
  dropout (conv.py); group_norm, instance_norm, summarize_activation(s),
  apply_regularization (norms.py).
"""

from __future__ import annotations

import numbers

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor


def _check_scale(scale):
    if isinstance(scale, numbers.Integral) and not isinstance(scale, bool):
        raise InvalidArgumentError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real) and scale < 0.0:
        raise InvalidArgumentError(f"Setting a scale less than 0 on a regularizer: {scale}")
    return float(scale)


def l1_regularizer(scale, scope=None):
    """scale * sum(|w|)."""
    scale = _check_scale(scale)
    if scale == 0.0:
        return lambda _: None

    def l1(weights, name=None):
        from xlapy.compat.v1.ops.math_ops import abs, multiply, reduce_sum
        w = tensor(weights)
        with get_default_graph().name_scope(scope or "l1_regularizer"):
            return multiply(tensor(np.asarray(scale, w.dtype.np)), reduce_sum(abs(w)),
                            name=name)
    return l1


def l2_regularizer(scale, scope=None):
    """scale * sum(w^2) / 2 (tf.nn.l2_loss)."""
    scale = _check_scale(scale)
    if scale == 0.0:
        return lambda _: None

    def l2(weights, name=None):
        from xlapy.compat.v1.ops.math_ops import multiply
        from xlapy.compat.v1.ops.nn_ops import l2_loss
        w = tensor(weights)
        with get_default_graph().name_scope(scope or "l2_regularizer"):
            return multiply(tensor(np.asarray(scale, w.dtype.np)), l2_loss(w), name=name)
    return l2


def sum_regularizer(regularizer_list, scope=None):
    regs = [r for r in regularizer_list if r is not None]

    def total(weights):
        from xlapy.compat.v1.ops.math_ops import add_n
        parts = [p for p in (r(weights) for r in regs) if p is not None]
        if not parts:
            return None
        with get_default_graph().name_scope(scope or "sum_regularizer"):
            return add_n(parts)
    return total


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope)


# ---- initializers --------------------------------------------------------------------------

def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=None):
    import math

    from xlapy.compat.v1 import dtypes
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise InvalidArgumentError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    base = dtypes.as_dtype(dtype or dtypes.float32)
    if not base.is_floating:
        raise InvalidArgumentError("Cannot create initializer for non-floating point type.")

    def init(shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_uniform, truncated_normal
        dims = [int(d) for d in shape]
        if dims:
            fan_in = float(dims[-2]) if len(dims) > 1 else float(dims[-1])
            fan_out = float(dims[-1])
        else:
            fan_in = fan_out = 1.0
        for d in dims[:-2]:
            fan_in *= d
            fan_out *= d
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        dt = dtypes.as_dtype(dtype or base)
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_uniform(dims, -limit, limit, dt, seed=seed)
        return truncated_normal(dims, 0.0, math.sqrt(1.3 * factor / n), dt, seed=seed)
    return init


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """Glorot & Bengio's initializer: variance_scaling_initializer(1.0, 'FAN_AVG')."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


# ---- layers ----------------------------------------------------------------------------------

_RELU = object()  # the default activation_fn: tf.nn.relu, as TF's


def fully_connected(inputs, num_outputs, activation_fn=_RELU, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None,
                    weights_regularizer=None, biases_initializer=_RELU,
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """activation_fn(inputs @ weights + biases) over the last dimension of inputs, with
    TF's defaults: activation_fn tf.nn.relu, weights xavier_initializer(), biases zeros
    (biases_initializer=None: no biases)."""
    from xlapy.compat.v1.ops.array_ops import reshape, shape, stack
    from xlapy.compat.v1.ops.math_ops import matmul
    from xlapy.compat.v1.ops.nn_ops import bias_add, relu
    from xlapy.compat.v1.variables import get_variable, variable_scope, zeros_initializer
    x = tensor(inputs)
    n_in = x.shape.dims[-1] if x.shape.dims else None
    if n_in is None:
        raise InvalidArgumentError("fully_connected: the last dimension of the inputs must "
                                   f"be known, got {x.shape.tf_str()}")
    act = relu if activation_fn is _RELU else activation_fn
    b_init = zeros_initializer() if biases_initializer is _RELU else biases_initializer
    with variable_scope(scope, default_name="fully_connected", reuse=reuse):
        w = get_variable("weights", [n_in, int(num_outputs)], dtype=x.dtype,
                         initializer=weights_initializer or xavier_initializer(),
                         regularizer=weights_regularizer, trainable=trainable,
                         collections=_collections(variables_collections, "weights"))
        rank = x.shape.ndims
        if rank == 2:
            out = matmul(x, w)
        else:  # apply to the last dimension
            lead = shape(x)[:-1]
            out = matmul(reshape(x, [-1, n_in]), w)
            out = reshape(out, stack([lead[i] for i in range(rank - 1)] + [int(num_outputs)]))
            out.set_shape(list(x.shape.dims[:-1]) + [int(num_outputs)])
        if normalizer_fn is not None:
            out = normalizer_fn(out, **(normalizer_params or {}))
        elif b_init is not None:
            b = get_variable("biases", [int(num_outputs)], dtype=x.dtype, initializer=b_init,
                             regularizer=biases_regularizer, trainable=trainable,
                             collections=_collections(variables_collections, "biases"))
            out = bias_add(out, b)
        if act is not None:
            out = act(out)
    for c in outputs_collections or ():
        get_default_graph().add_to_collection(c, out)
    return out


def _collections(variables_collections, key):
    from xlapy.compat.v1.framework import GraphKeys
    if variables_collections is None:
        return None
    extra = variables_collections.get(key, []) if isinstance(variables_collections, dict) \
        else list(variables_collections)
    return [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES] + list(extra)


def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] -> [batch, k], k the product of the other dimensions."""
    import numpy as np

    from xlapy.compat.v1.ops.array_ops import reshape
    x = tensor(inputs)
    dims = x.shape.dims
    if dims is None or len(dims) < 2:
        raise InvalidArgumentError(f"flatten: inputs must have rank >= 2, got "
                                   f"{x.shape.tf_str()}")
    with get_default_graph().name_scope(scope or "Flatten"):
        k = int(np.prod(dims[1:])) if all(d is not None for d in dims[1:]) else -1
        if k == -1:
            from xlapy.compat.v1.ops.array_ops import shape, stack
            return reshape(x, stack([shape(x)[0], -1]))
        return reshape(x, [-1, k])


from xlapy.compat.v1.contrib.layers.conv import (avg_pool2d, batch_norm,  # noqa: E402
                                                 conv2d, conv2d_transpose, dropout,
                                                 max_pool2d)
from xlapy.compat.v1.contrib.layers.misc import (OPTIMIZER_CLS_NAMES,  # noqa: E402
                                                 embed_sequence, layer_norm,
                                                 one_hot_encoding, optimize_loss)
from xlapy.compat.v1.contrib.layers.norms import (apply_regularization,  # noqa: E402
                                                  group_norm, instance_norm,
                                                  summarize_activation,
                                                  summarize_activations,
                                                  summarize_collection)
from xlapy.compat.v1.contrib.framework.arg_scope import add_arg_scope  # noqa: E402

# (slim's layers take their defaults from arg_scope blocks)
(fully_connected, flatten, conv2d, conv2d_transpose, max_pool2d, avg_pool2d, batch_norm,
 dropout, layer_norm, one_hot_encoding, group_norm, instance_norm) = (add_arg_scope(f) for f in (
     fully_connected, flatten, conv2d, conv2d_transpose, max_pool2d, avg_pool2d, batch_norm,
     dropout, layer_norm, one_hot_encoding, group_norm, instance_norm))


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """layer applied `repetitions` times, each in scope `<scope>/<scope>_<i>` (slim.repeat)."""
    from xlapy.compat.v1.variables import variable_scope
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "repeat")
    out = inputs
    with variable_scope(scope, default_name="Repeat"):
        for i in range(int(repetitions)):
            kwargs["scope"] = f"{name}_{i + 1}"
            out = layer(out, *args, **kwargs)
    return out


def stack(inputs, layer, stack_args, **kwargs):
    """layer applied once per entry of stack_args (a tuple of its positional arguments, or
    one argument), each in scope `<scope>/<scope>_<i>` (slim.stack)."""
    from xlapy.compat.v1.variables import variable_scope
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "stack")
    out = inputs
    with variable_scope(scope, default_name="Stack"):
        for i, a in enumerate(stack_args):
            kwargs["scope"] = f"{name}_{i + 1}"
            a = a if isinstance(a, (list, tuple)) else [a]
            out = layer(out, *a, **kwargs)
    return out


# the pre-tf.feature_column feature columns (feature_columns_old*.py)
from xlapy.compat.v1.contrib.layers.feature_columns_old import (  # noqa: E402
    bucketized_column, crossed_column, embedding_column, one_hot_column, real_valued_column,
    shared_embedding_columns, sparse_column_with_hash_bucket,
    sparse_column_with_integerized_feature, sparse_column_with_keys,
    sparse_column_with_vocabulary_file, weighted_sparse_column)
from xlapy.compat.v1.contrib.layers.feature_columns_old_io import (  # noqa: E402
    check_feature_columns, create_feature_spec_for_parsing, infer_real_valued_columns,
    input_from_feature_columns, joint_weighted_sum_from_feature_columns,
    make_place_holder_tensors_for_base_features, parse_feature_columns_from_examples,
    transform_features, weighted_sum_from_feature_columns)
from xlapy.compat.v1.contrib.layers.feature_columns_old_ops import (  # noqa: E402
    SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY)
