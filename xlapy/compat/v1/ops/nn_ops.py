"""Neural-network ops: activations, softmax, cross entropies, bias_add, l2_loss, dropout.

The fused cross-entropy ops return (loss, backprop) like TensorFlow's: the gradient of the
loss is backprop scaled by the incoming gradient, so training graphs stay small.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import accumulate_f32, float_unary, make, make_op, tensor
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
@accumulate_f32
def _softmax(m, x):
    e = m.exp(m.subtract(x, m.max(x, axis=-1, keepdims=True)))
    return m.true_divide(e, m.sum(e, axis=-1, keepdims=True))


@register_op("LogSoftmax", infer=_last_axis_float)
@accumulate_f32
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
    if m is np and labels.size and (labels.min() < 0 or labels.max() >= depth):
        bad = labels[(labels < 0) | (labels >= depth)][0]
        raise InvalidArgumentError(f"Received a label value of {bad} which is outside the "
                                   f"valid range of [0, {depth}).  Label values: "
                                   f"{' '.join(map(str, labels.tolist()))}")
    hot = m.astype(m.equal(m.expand_dims(labels, -1), m.astype(m.arange(depth), labels.dtype)),
                   logits.dtype)
    logp = _log_softmax_np(m, logits)
    loss = m.negative(m.sum(m.multiply(hot, logp), axis=-1))
    back = m.subtract(m.exp(logp), hot)
    if m is not np:  # compiled: out-of-range labels give NaN, as TF's XLA kernel
        ok = m.logical_and(m.greater_equal(labels, np.zeros((), labels.dtype)),
                           m.less(labels, np.asarray(depth, labels.dtype)))
        nan = np.asarray(np.nan, logits.dtype)
        loss = m.where(ok, loss, nan)
        back = m.where(m.expand_dims(ok, -1), back, nan)
    return loss, back


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

def _bias_axis(op_or_fmt, ndim):
    fmt = op_or_fmt if isinstance(op_or_fmt, str) else op_or_fmt._attrs.get("data_format",
                                                                            "NHWC")
    return 1 if fmt.startswith("NC") and ndim is not None and ndim > 2 else -1


def _bias_add_infer(op):
    v, b = op.inputs
    if v.dtype != b.dtype:
        raise InvalidTypeError(f"bias_add: value is {v.dtype.name} but bias is {b.dtype.name}")
    if b.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"bias must be 1-D, got shape {b.shape.tf_str()}")
    if v.shape.ndims is not None and v.shape.ndims < 2:
        raise InvalidArgumentError(f"Shape must be at least rank 2 but is rank "
                                   f"{v.shape.ndims} for '{op.name}' (op: 'BiasAdd')")
    if v.shape.dims and b.shape.dims:
        d = v.shape.dims[_bias_axis(op, v.shape.ndims)]
        if d is not None and b.shape.dims[0] is not None and d != b.shape.dims[0]:
            raise InvalidArgumentError(f"Dimensions must be equal, but are {d} and "
                                       f"{b.shape.dims[0]} for '{op.name}' (op: 'BiasAdd')")
    return [(v.dtype, v.shape)]


@register_op("BiasAdd", infer=_bias_add_infer, attrs=("data_format",))
def _bias_add(m, value, bias, data_format="NHWC"):
    if _bias_axis(data_format, value.ndim) == 1:
        bias = m.reshape(bias, (-1,) + (1,) * (value.ndim - 2))
    return m.add(value, bias)


def _bias_grad_infer(op):
    g = op.inputs[0]
    if not g.shape.dims:
        return [(g.dtype, TensorShape([None]))]
    return [(g.dtype, TensorShape([g.shape.dims[_bias_axis(op, g.shape.ndims)]]))]


@register_op("BiasAddGrad", infer=_bias_grad_infer, attrs=("data_format",))
@accumulate_f32
def _bias_add_grad_kernel(m, g, data_format="NHWC"):
    axis = _bias_axis(data_format, g.ndim) % g.ndim
    return m.sum(g, axis=tuple(a for a in range(g.ndim) if a != axis), dtype=g.dtype)


@register_gradient("BiasAdd")
def _bias_add_grad(op, g):
    fmt = op._attrs.get("data_format", "NHWC")
    return [g, make("BiasAddGrad", [g], {"data_format": fmt})]


@register_op("L2Loss", infer=lambda op: [(op.inputs[0].dtype, TensorShape([]))])
@accumulate_f32
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


def _flatten_classes(logits, axis):
    """logits with the class axis moved last and flattened to 2-D (TF's wrapper), and a
    function restoring the loss's shape."""
    from xlapy.compat.v1.ops.array_ops import reshape, shape, transpose
    r = logits.shape.ndims
    if r is None:
        return logits, lambda loss: loss
    a = axis % r if r else 0
    x = logits
    if a != r - 1:
        perm = list(range(r))
        perm[a], perm[-1] = perm[-1], perm[a]
        x = transpose(x, perm)
    if r == 2:
        return x, lambda loss: loss
    lead = shape(x)[:-1] if not x.shape[:-1].is_fully_defined() else x.shape[:-1].as_list()
    k = x.shape.dims[-1] if x.shape.dims[-1] is not None else -1
    return reshape(x, [-1, k]), lambda loss: reshape(loss, lead)


def _softmax_xent(labels, logits, axis, name, stop_labels):
    from xlapy.compat.v1.ops.array_ops import stop_gradient
    logits = tensor(logits)
    labels = tensor(labels, dtype=logits.dtype) if not hasattr(labels, "dtype") else \
        tensor(labels)
    if stop_labels:
        labels = stop_gradient(labels)
    lg, restore = _flatten_classes(logits, axis)
    lb, _ = _flatten_classes(labels, axis)
    op = make_op("SoftmaxCrossEntropyWithLogits", [lg, lb],
                 name=name or "SoftmaxCrossEntropyWithLogits")
    return restore(op.outputs[0])


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF 1.x's v1: no gradient flows into the labels."""
    _sentinel_check(_sentinel, "softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise InvalidArgumentError("softmax_cross_entropy_with_logits needs labels and logits")
    return _softmax_xent(labels, logits, dim if axis is None else axis, name, True)


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, axis=None,
                                         name=None, dim=None):
    """The labels are differentiable too."""
    _sentinel_check(_sentinel, "softmax_cross_entropy_with_logits_v2")
    if labels is None or logits is None:
        raise InvalidArgumentError("softmax_cross_entropy_with_logits_v2 needs labels and "
                                   "logits")
    a = axis if axis is not None else (dim if dim is not None else -1)
    return _softmax_xent(labels, logits, a, name, False)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """labels: class indices of rank rank(logits) - 1. Out-of-range labels raise in the
    executor (TF's CPU kernel) and give NaN compiled (TF's XLA kernel)."""
    from xlapy.compat.v1.ops.array_ops import reshape, shape
    _sentinel_check(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise InvalidArgumentError("sparse_softmax_cross_entropy_with_logits needs labels and "
                                   "logits")
    logits = tensor(logits)
    labels = tensor(labels)
    rl, rg = labels.shape.ndims, logits.shape.ndims
    if rl is not None and rg is not None and rl != rg - 1:
        raise InvalidArgumentError(f"Rank mismatch: Rank of labels (received {rl}) should "
                                   f"equal rank of logits minus 1 (received {rg}).")
    if rg is None or rg == 2:
        op = make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                     name=name or "SparseSoftmaxCrossEntropyWithLogits")
        return op.outputs[0]
    if rg == 1:
        raise InvalidArgumentError("logits must have rank >= 2 (a batch of class scores)")
    k = logits.shape.dims[-1] if logits.shape.dims[-1] is not None else -1
    lead = labels.shape.as_list() if labels.shape.is_fully_defined() else shape(labels)
    op = make_op("SparseSoftmaxCrossEntropyWithLogits",
                 [reshape(logits, [-1, k]), reshape(labels, [-1])],
                 name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return reshape(op.outputs[0], lead)


def bias_add(value, bias, data_format=None, name=None):
    if data_format not in (None, "NHWC", "N...C", "NCHW", "NC...", "NDHWC", "NCDHW"):
        raise InvalidArgumentError(f"bias_add: data_format {data_format} is not supported")
    fmt = "NCHW" if data_format and data_format.startswith("NC") else "NHWC"
    value = tensor(value)
    return make("BiasAdd", [value, tensor(bias, dtype=value.dtype)], {"data_format": fmt},
                name=name or "BiasAdd")


def l2_loss(t, name=None):
    return make("L2Loss", [tensor(t)], name=name)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Keeps each element with probability keep_prob (= 1 - rate), scaled by 1/keep_prob;
    noise_shape broadcasts the keep decision (e.g. [batch, 1] drops whole rows)."""
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.math_ops import add, divide, floor, multiply
    from xlapy.compat.v1.ops.random_ops import random_uniform
    from xlapy.compat.v1.framework import Tensor
    x = tensor(x)
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"x has to be a floating point tensor since it's going to "
                                   f"be scaled. Got a {x.dtype.name} tensor instead.")
    if keep_prob is not None and rate is not None:
        raise InvalidArgumentError("dropout: pass keep_prob or rate, not both")
    if keep_prob is None:
        keep_prob = 1.0 - (rate if rate is not None else 0.0) if not isinstance(rate, Tensor) \
            else 1.0 - rate
    if not isinstance(keep_prob, Tensor) and not 0 < float(keep_prob) <= 1:
        raise InvalidArgumentError(f"keep_prob must be a scalar tensor or a float in the range "
                                   f"(0, 1], got {keep_prob}")
    with get_default_graph().name_scope(name or "dropout"):
        kp = tensor(keep_prob, dtype=x.dtype)
        ns = noise_shape if noise_shape is not None else shape(x)
        mask = floor(add(kp, random_uniform(ns, dtype=x.dtype, seed=seed)))
        return multiply(divide(x, kp), mask)


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


def weighted_cross_entropy_with_logits(targets=None, logits=None, pos_weight=None,
                                       name=None, labels=None):
    """sigmoid cross entropy with the positive term weighted by pos_weight (TF's stable
    form: (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0)))."""
    from xlapy.compat.v1.ops.math_ops import (abs as abs_, add, exp, log1p, maximum,
                                              multiply, negative, subtract)
    z = labels if labels is not None else targets
    x = tensor(logits)
    z = tensor(z, dtype=x.dtype)
    q = tensor(pos_weight, dtype=x.dtype)
    one = tensor(np.ones((), x.dtype.np))
    log_weight = add(one, multiply(subtract(q, one), z))
    zero = tensor(np.zeros((), x.dtype.np))
    tail = add(log1p(exp(negative(abs_(x)))), maximum(negative(x), zero))
    return add(multiply(subtract(one, z), x), multiply(log_weight, tail), name=name)


def xw_plus_b(x, weights, biases, name=None):
    from xlapy.compat.v1.ops.math_ops import matmul
    return bias_add(matmul(x, weights), biases, name=name or "xw_plus_b")


def relu_layer(x, weights, biases, name=None):
    return relu(xw_plus_b(x, weights, biases), name=name or "Relu")


def zero_fraction(value, name=None):
    """The fraction of zeros in value."""
    from xlapy.compat.v1.ops.math_ops import cast, equal, reduce_mean
    from xlapy.compat.v1 import dtypes
    v = tensor(value)
    return reduce_mean(cast(equal(v, tensor(np.zeros((), v.dtype.np))), dtypes.float32),
                       name=name or "zero_fraction")
