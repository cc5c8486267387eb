"""tf.contrib.layers' group_norm and instance_norm, the activation summaries and
apply_regularization (TF 1.15's contrib/layers/python/layers).

- group_norm (Wu & He, 2018): the channels axis split into `groups` groups, each example's
  mean and variance taken over reduction_axes and the channels of a group, then
  gamma * (x - mean) / sqrt(variance + epsilon) + beta with GroupNorm/gamma and
  GroupNorm/beta [channels] (ones / zeros, or param_initializers).
- instance_norm (Ulyanov et al.): each example's and channel's moments over the spatial
  axes, NHWC or NCHW; InstanceNorm/gamma and /beta [channels].
- summarize_activation(op): a histogram summary <op name>/activation, plus the
  <op name>/zero_fraction and /zero scalars for Relu, Softplus and Relu6 and the /six
  scalar for Relu6 and Elu; summarize_activations does it for the tf.GraphKeys
  ACTIVATIONS collection ("activations").
- apply_regularization(regularizer, weights_list=None): the sum of the regularizer's
  penalties over weights_list (default: the "weights" collection), added to
  REGULARIZATION_LOSSES.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.contrib.layers.misc import _collections
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, reshape, shape
from xlapy.compat.v1.ops.math_ops import add, add_n, cast, greater, less, multiply, \
    reduce_mean, rsqrt, subtract
from xlapy.compat.v1.ops.nn_ops import moments, zero_fraction
from xlapy.compat.v1.variables import (get_variable, ones_initializer, variable_scope,
                                       zeros_initializer)

ACTIVATIONS = "activations"  # tf.GraphKeys.ACTIVATIONS
WEIGHTS = "weights"  # tf.GraphKeys.WEIGHTS
DATA_FORMAT_NCHW, DATA_FORMAT_NHWC = "NCHW", "NHWC"


def _params(x, n, center, scale, param_initializers, variables_collections, trainable):
    inits = dict(param_initializers or {})
    beta = gamma = None
    if center:
        beta = get_variable("beta", [n], dtype=x.dtype,
                            initializer=inits.get("beta", zeros_initializer()),
                            trainable=trainable,
                            collections=_collections(variables_collections, "beta"))
    if scale:
        gamma = get_variable("gamma", [n], dtype=x.dtype,
                             initializer=inits.get("gamma", ones_initializer()),
                             trainable=trainable,
                             collections=_collections(variables_collections, "gamma"))
    return beta, gamma


def _normalize(x, mean, variance, beta, gamma, epsilon):
    """(x - mean) / sqrt(variance + epsilon) * gamma + beta (tf.nn.batch_normalization)."""
    inv = rsqrt(add(variance, tensor(np.asarray(epsilon, x.dtype.np))))
    if gamma is not None:
        inv = multiply(inv, gamma)
    out = multiply(x, inv)
    shift = multiply(mean, inv)
    return subtract(out, shift) if beta is None else add(out, subtract(beta, shift))


def _finish(out, activation_fn, outputs_collections):
    if activation_fn is not None:
        out = activation_fn(out)
    for c in outputs_collections or ():
        get_default_graph().add_to_collection(c, out)
    return out


def group_norm(inputs, groups=32, channels_axis=-1, reduction_axes=(-3, -2), center=True,
               scale=True, epsilon=1e-6, activation_fn=None, param_initializers=None,
               reuse=None, variables_collections=None, outputs_collections=None,
               trainable=True, scope=None, mean_close_to_zero=False):
    x = tensor(inputs)
    if x.shape.ndims is None:
        raise InvalidArgumentError(f"Inputs {x.name} has undefined rank.")
    dims = x.shape.as_list()
    rank = len(dims)
    ch = channels_axis + rank if channels_axis < 0 else channels_axis
    if not 0 <= ch < rank:
        raise InvalidArgumentError(f"Axis is out of bounds: channels_axis {channels_axis} "
                                   f"for rank {rank}")
    red = []
    for a in reduction_axes:
        a2 = a + rank if a < 0 else a
        if not 0 <= a2 < rank:
            raise InvalidArgumentError(f"Axis is out of bounds: reduction axis {a} for rank "
                                       f"{rank}")
        if a2 == ch:
            raise InvalidArgumentError("reduction_axis must be mutually exclusive with "
                                       "channels_axis")
        red.append(a2)
    channels = dims[ch]
    if channels is None:
        raise InvalidArgumentError(f"Inputs {x.name} has undefined channel dimension: "
                                   f"{channels_axis}.")
    if groups > channels:
        raise InvalidArgumentError(f"Invalid groups {groups} for {channels} channels.")
    if channels % groups != 0:
        raise InvalidArgumentError(f"{channels} channels is not commensurate with {groups} "
                                   "groups.")
    per = channels // groups
    # [..., groups, channels / groups, ...] in place of the channels axis
    if all(d is not None for d in dims):
        grouped = dims[:ch] + [groups, per] + dims[ch + 1:]
    else:
        s = shape(x)
        grouped = concat([s[:ch], tensor(np.asarray([groups, per], np.int32)),
                          s[ch + 1:]], 0) if ch + 1 < rank else \
            concat([s[:ch], tensor(np.asarray([groups, per], np.int32))], 0)
    axes = sorted([a + 1 if a > ch else a for a in red] + [ch + 1])
    params_shape = [1] * (rank + 1)
    params_shape[ch], params_shape[ch + 1] = groups, per
    with variable_scope(scope, default_name="GroupNorm", values=[x], reuse=reuse):
        beta, gamma = _params(x, channels, center, scale, param_initializers,
                              variables_collections, trainable)
        xg = reshape(x, grouped)
        mean, variance = moments(xg, axes, keep_dims=True)
        out = _normalize(xg, mean, variance,
                         None if beta is None else reshape(beta, params_shape),
                         None if gamma is None else reshape(gamma, params_shape), epsilon)
        out = reshape(out, shape(x) if any(d is None for d in dims) else dims)
        out.set_shape(dims)
        return _finish(out, activation_fn, outputs_collections)


def instance_norm(inputs, center=True, scale=True, epsilon=1e-6, activation_fn=None,
                  param_initializers=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, data_format=DATA_FORMAT_NHWC,
                  scope=None):
    x = tensor(inputs)
    if x.shape.ndims is None:
        raise InvalidArgumentError(f"Inputs {x.name} has undefined rank.")
    if data_format not in (DATA_FORMAT_NCHW, DATA_FORMAT_NHWC):
        raise InvalidArgumentError("data_format has to be either NCHW or NHWC.")
    rank = x.shape.ndims
    if rank < 3:
        raise InvalidArgumentError(f"Inputs {x.name} must have rank at least 3 (a batch, "
                                   f"spatial axes and channels), got {rank}")
    ch = 1 if data_format == DATA_FORMAT_NCHW else rank - 1
    channels = x.shape.dims[ch]
    if channels is None:
        raise InvalidArgumentError(f"Inputs {x.name} has undefined channels dimension "
                                   f"{x.shape}.")
    axes = [a for a in range(1, rank) if a != ch]
    params_shape = [1] * rank
    params_shape[ch] = channels
    with variable_scope(scope, default_name="InstanceNorm", values=[x], reuse=reuse):
        beta, gamma = _params(x, channels, center, scale, param_initializers,
                              variables_collections, trainable)
        mean, variance = moments(x, axes, keep_dims=True)
        out = _normalize(x, mean, variance,
                         None if beta is None else reshape(beta, params_shape),
                         None if gamma is None else reshape(gamma, params_shape), epsilon)
        return _finish(out, activation_fn, outputs_collections)


def _fraction(cond):
    return reduce_mean(cast(cond, dtypes.float32))


def summarize_activation(op):
    """Summaries of an activation tensor; returns its histogram summary."""
    from xlapy.compat.v1 import summary  # (summary imports the layers' modules)
    t = tensor(op)
    name = t.op.name
    kind = t.op.type
    if kind in ("Relu", "Softplus", "Relu6"):
        summary.scalar(f"{name}/zero_fraction", zero_fraction(t))
        x = t.op.inputs[0]
        summary.scalar(f"{name}/zero", _fraction(less(x, tensor(np.zeros((), x.dtype.np)))))
    if kind in ("Relu6", "Elu"):
        x = t.op.inputs[0]
        summary.scalar(f"{name}/six",
                       _fraction(greater(x, tensor(np.asarray(6.0, x.dtype.np)))))
    return summary.histogram(f"{name}/activation", t)


def summarize_collection(collection, name_filter=None, summarizer=None):
    """summarizer (default: a histogram summary) of each tensor of the collection whose op
    name matches name_filter (re.match)."""
    from xlapy.compat.v1 import summary  # (as in summarize_activation)
    if summarizer is None:
        summarizer = lambda t: summary.histogram(t.op.name + "/summary", t)
    return [summarizer(t) for t in get_default_graph().get_collection(collection)
            if not name_filter or re.match(name_filter, t.op.name)]


def summarize_activations(name_filter=None, summarizer=summarize_activation):
    return summarize_collection(ACTIVATIONS, name_filter, summarizer)


def apply_regularization(regularizer, weights_list=None):
    graph = get_default_graph()
    if not weights_list:
        weights_list = graph.get_collection(WEIGHTS)
    if not weights_list:
        raise InvalidArgumentError("No weights to regularize.")
    with graph.name_scope("get_regularization_penalty"):
        penalties = [regularizer(w) for w in weights_list]
        penalties = [tensor(p) if p is not None else tensor(np.float32(0.0))
                     for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise InvalidArgumentError(f"regularizer must return a scalar Tensor instead "
                                           f"of a Tensor with rank {p.shape.ndims}.")
        total = add_n(penalties)
    graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
    return total

