"""Neural-network ops: activations, softmax, cross entropies, bias_add, l2_loss, dropout.

The fused cross-entropy ops return (loss, backprop) like TensorFlow's: the gradient of the
loss is backprop scaled by the incoming gradient, so training graphs stay small.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import float_unary, make, make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _zero(x):
    return np.zeros((), dtype=x.dtype)


def _half(x):
    return np.asarray(0.5, dtype=x.dtype)


# ---- activations -------------------------------------------------------------------------

@register_op("Relu", infer=float_unary)
def _relu(m, x):
    return m.maximum(x, _zero(x))


@register_op("Relu6", infer=float_unary)
def _relu6(m, x):
    return m.minimum(m.maximum(x, _zero(x)), np.asarray(6, x.dtype))


@register_op("ReluGrad", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _relu_grad_kernel(m, g, features):
    return m.multiply(g, m.astype(m.greater(features, _zero(features)), g.dtype))


@register_op("Sigmoid", infer=float_unary)
def _sigmoid(m, x):
    # 1 / (1 + exp(-x)) without overflow for large |x|
    return m.multiply(m.add(m.tanh(m.multiply(x, _half(x))), np.ones((), x.dtype)), _half(x))


@register_op("SigmoidGrad", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _sigmoid_grad_kernel(m, y, dy):
    return m.multiply(dy, m.multiply(y, m.subtract(np.ones((), y.dtype), y)))


@register_op("Tanh", infer=float_unary)
def _tanh(m, x):
    return m.tanh(x)


@register_op("TanhGrad", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _tanh_grad_kernel(m, y, dy):
    return m.multiply(dy, m.subtract(np.ones((), y.dtype), m.multiply(y, y)))


@register_gradient("Relu")
def _relu_grad(op, g):
    return [make("ReluGrad", [g, op.outputs[0]])]


@register_gradient("Relu6")
def _relu6_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import cast, less, logical_and, greater, multiply
    x = op.inputs[0]
    return [multiply(g, cast(logical_and(greater(x, 0.0), less(x, 6.0)), g.dtype))]


@register_gradient("Sigmoid")
def _sigmoid_grad(op, g):
    return [make("SigmoidGrad", [op.outputs[0], g])]


@register_gradient("Tanh")
def _tanh_grad(op, g):
    return [make("TanhGrad", [op.outputs[0], g])]


@register_gradient("ReluGrad")
def _relu_grad_grad(op, g):
    return [make("ReluGrad", [g, op.inputs[1]]), None]


# ---- softmax ------------------------------------------------------------------------------

def _last_axis_float(op):
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"{op.type} expects floating-point logits, got {x.dtype.name}")
    if x.shape.ndims is not None and x.shape.ndims < 1:
        raise InvalidArgumentError(f"logits must have rank >= 1 for '{op.name}'")
    return [(x.dtype, x.shape)]


def _log_softmax_np(m, x):
    sh = m.subtract(x, m.max(x, axis=-1, keepdims=True))
    return m.subtract(sh, m.log(m.sum(m.exp(sh), axis=-1, keepdims=True)))


@register_op("Softmax", infer=_last_axis_float)
def _softmax(m, x):
    e = m.exp(m.subtract(x, m.max(x, axis=-1, keepdims=True)))
    return m.true_divide(e, m.sum(e, axis=-1, keepdims=True))


@register_op("LogSoftmax", infer=_last_axis_float)
def _log_softmax(m, x):
    return _log_softmax_np(m, x)


@register_gradient("Softmax")
def _softmax_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum, subtract
    y = op.outputs[0]
    return [multiply(subtract(g, reduce_sum(multiply(g, y), -1, keepdims=True)), y)]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import exp, multiply, reduce_sum, subtract
    return [subtract(g, multiply(reduce_sum(g, -1, keepdims=True), exp(op.outputs[0])))]


def _xent_infer(op):
    logits, labels = op.inputs
    if not logits.dtype.is_floating:
        raise InvalidTypeError(f"{op.type} expects floating-point logits, got "
                               f"{logits.dtype.name}")
    s = logits.shape.with_rank(2) if logits.shape.ndims in (None, 2) else None
    if s is None:
        raise InvalidArgumentError(f"logits must be 2-dimensional for '{op.name}', got shape "
                                   f"{logits.shape.tf_str()}")
    if op.type == "SoftmaxCrossEntropyWithLogits":
        if labels.dtype != logits.dtype:
            raise InvalidTypeError(f"labels ({labels.dtype.name}) and logits "
                                   f"({logits.dtype.name}) must have the same dtype")
        s = s.merge_with(labels.shape) if labels.shape.ndims in (None, 2) else None
        if s is None:
            raise InvalidArgumentError(f"labels must be 2-dimensional for '{op.name}'")
    else:
        if not labels.dtype.is_integer:
            raise InvalidTypeError(f"sparse labels must be int32 or int64, got "
                                   f"{labels.dtype.name}")
        if labels.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"sparse labels must be 1-dimensional (a class index "
                                       f"per example), got shape {labels.shape.tf_str()}")
        s = s.merge_with(TensorShape([labels.shape.dims[0] if labels.shape.dims else None,
                                      None]))
    return [(logits.dtype, TensorShape([s.dims[0]])), (logits.dtype, s)]


@register_op("SoftmaxCrossEntropyWithLogits", infer=_xent_infer)
def _softmax_xent(m, logits, labels):
    logp = _log_softmax_np(m, logits)
    loss = m.negative(m.sum(m.multiply(labels, logp), axis=-1))
    return loss, m.subtract(m.exp(logp), labels)


@register_op("SparseSoftmaxCrossEntropyWithLogits", infer=_xent_infer)
def _sparse_softmax_xent(m, logits, labels):
    depth = logits.shape[-1]
    hot = m.astype(m.equal(m.expand_dims(labels, -1), m.astype(m.arange(depth), labels.dtype)),
                   logits.dtype)
    logp = _log_softmax_np(m, logits)
    loss = m.negative(m.sum(m.multiply(hot, logp), axis=-1))
    return loss, m.subtract(m.exp(logp), hot)


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, g_loss, g_backprop=None):
    from xlapy.compat.v1.ops.array_ops import expand_dims
    from xlapy.compat.v1.ops.math_ops import multiply, negative
    gl = expand_dims(g_loss, -1)
    logits = op.inputs[0]
    return [multiply(gl, op.outputs[1]),
            multiply(gl, negative(make("LogSoftmax", [logits])))]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, g_loss, g_backprop=None):
    from xlapy.compat.v1.ops.array_ops import expand_dims
    from xlapy.compat.v1.ops.math_ops import multiply
    return [multiply(expand_dims(g_loss, -1), op.outputs[1]), None]


# ---- bias_add, l2_loss -------------------------------------------------------------------

def _bias_add_infer(op):
    v, b = op.inputs
    if v.dtype != b.dtype:
        raise InvalidTypeError(f"bias_add: value is {v.dtype.name} but bias is {b.dtype.name}")
    if b.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"bias must be 1-D, got shape {b.shape.tf_str()}")
    if v.shape.dims and b.shape.dims and v.shape.dims[-1] is not None and \
            b.shape.dims[0] is not None and v.shape.dims[-1] != b.shape.dims[0]:
        raise InvalidArgumentError(f"Dimensions must be equal, but are {v.shape.dims[-1]} and "
                                   f"{b.shape.dims[0]} for '{op.name}' (op: 'BiasAdd')")
    return [(v.dtype, v.shape)]


@register_op("BiasAdd", infer=_bias_add_infer)
def _bias_add(m, value, bias):
    return m.add(value, bias)


@register_op("BiasAddGrad", infer=lambda op: [(op.inputs[0].dtype, TensorShape(
    [op.inputs[0].shape.dims[-1]] if op.inputs[0].shape.dims else None))])
def _bias_add_grad_kernel(m, g):
    return m.sum(g, axis=tuple(range(len(g.shape) - 1)), dtype=g.dtype)


@register_gradient("BiasAdd")
def _bias_add_grad(op, g):
    return [g, make("BiasAddGrad", [g])]


@register_op("L2Loss", infer=lambda op: [(op.inputs[0].dtype, TensorShape([]))])
def _l2_loss(m, x):
    return m.multiply(m.sum(m.multiply(x, x), dtype=x.dtype), _half(x))


@register_gradient("L2Loss")
def _l2_loss_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import multiply
    return [multiply(op.inputs[0], g)]


# ---- user-facing functions ------------------------------------------------------------------

def relu(features, name=None):
    return make("Relu", [tensor(features)], name=name)


def relu6(features, name=None):
    return make("Relu6", [tensor(features)], name=name)


def sigmoid(x, name=None):
    return make("Sigmoid", [tensor(x)], name=name)


def tanh(x, name=None):
    return make("Tanh", [tensor(x)], name=name)


def _on_last_axis(op_type, logits, axis, name):
    x = tensor(logits)
    if axis is not None and axis != -1 and x.shape.ndims is not None and \
            axis % x.shape.ndims != x.shape.ndims - 1:
        from xlapy.compat.v1.ops.array_ops import transpose
        r = x.shape.ndims
        perm = list(range(r))
        perm[axis % r], perm[-1] = perm[-1], perm[axis % r]
        return transpose(make(op_type, [transpose(x, perm)]), perm, name=name)
    return make(op_type, [x], name=name)


def softmax(logits, axis=None, name=None, dim=None):
    return _on_last_axis("Softmax", logits, axis if axis is not None else dim, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return _on_last_axis("LogSoftmax", logits, axis if axis is not None else dim, name)


def _sentinel_check(sentinel, fn):
    if sentinel is not None:
        raise InvalidArgumentError(f"Only call `{fn}` with named arguments (labels=..., "
                                   "logits=..., ...)")


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    _sentinel_check(_sentinel, "softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise InvalidArgumentError("softmax_cross_entropy_with_logits needs labels and logits")
    logits = tensor(logits)
    labels = tensor(labels, dtype=logits.dtype) if not hasattr(labels, "dtype") else \
        tensor(labels)
    op = make_op("SoftmaxCrossEntropyWithLogits", [logits, labels],
                 name=name or "SoftmaxCrossEntropyWithLogits")
    return op.outputs[0]


softmax_cross_entropy_with_logits_v2 = softmax_cross_entropy_with_logits


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    _sentinel_check(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise InvalidArgumentError("sparse_softmax_cross_entropy_with_logits needs labels and "
                                   "logits")
    logits = tensor(logits)
    labels = tensor(labels)
    op = make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                 name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return op.outputs[0]


def bias_add(value, bias, data_format=None, name=None):
    if data_format not in (None, "NHWC", "N...C"):
        raise InvalidArgumentError(f"bias_add: data_format {data_format} is not supported")
    return make("BiasAdd", [tensor(value), tensor(bias)], name=name)


def l2_loss(t, name=None):
    return make("L2Loss", [tensor(t)], name=name)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.math_ops import add, divide, floor, multiply
    from xlapy.compat.v1.ops.random_ops import random_uniform
    x = tensor(x)
    if keep_prob is None:
        keep_prob = 1.0 - (rate if rate is not None else 0.0)
    kp = tensor(keep_prob, dtype=x.dtype)
    ns = noise_shape if noise_shape is not None else shape(x)
    mask = floor(add(kp, random_uniform(ns, dtype=x.dtype, seed=seed)))
    return multiply(divide(x, kp), mask, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=False, keepdims=None):
    from xlapy.compat.v1.ops.math_ops import reduce_mean, square, subtract
    keep = bool(keep_dims if keepdims is None else keepdims)
    mean = reduce_mean(x, axes, keepdims=True)
    var = reduce_mean(square(subtract(x, mean)), axes, keepdims=keep)
    if not keep:
        from xlapy.compat.v1.ops.array_ops import squeeze
        mean = squeeze(mean, list(axes))
    return mean, var



def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)), TF's numerically stable formulation."""
    from xlapy.compat.v1.ops.math_ops import abs as abs_
    from xlapy.compat.v1.ops.math_ops import add, exp, log1p, multiply, negative, subtract
    _sentinel_check(_sentinel, "sigmoid_cross_entropy_with_logits")
    x = tensor(logits)
    z = tensor(labels, dtype=x.dtype)
    return add(subtract(relu(x), multiply(x, z)), log1p(exp(negative(abs_(x)))), name=name)
