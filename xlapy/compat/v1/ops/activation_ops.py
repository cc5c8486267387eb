"""More tf.nn activations and normalizations: elu, selu, leaky_relu, softplus, softsign,
crelu, swish, l2_normalize, local_response_normalization.

Each activation op has TF's gradient op (EluGrad reads the output, LeakyReluGrad and
SoftplusGrad the input, as TF's kernels do). Softplus is computed as
max(x, 0) + log1p(exp(-|x|)), exact where TF's thresholded form is and free of overflow.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import float_unary, make, same_as_input, tensor
from xlapy.compat.v1.ops.array_ops import concat
from xlapy.compat.v1.ops.math_ops import maximum, multiply, negative, reduce_sum, rsqrt, square
from xlapy.compat.v1.ops.nn_ops import relu, sigmoid

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _c(v, x):
    return np.asarray(v, dtype=x.dtype)


def _grad_infer(op):
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


@register_op("Elu", infer=float_unary)
def _elu(m, x):
    return m.where(m.greater(x, _c(0, x)), x, m.expm1(m.minimum(x, _c(0, x))))


@register_op("EluGrad", infer=_grad_infer)
def _elu_grad_kernel(m, g, y):
    return m.where(m.greater(y, _c(0, y)), g, m.multiply(g, m.add(y, _c(1, y))))


@register_op("Selu", infer=float_unary)
def _selu(m, x):
    neg = m.multiply(_c(SELU_ALPHA, x), m.expm1(m.minimum(x, _c(0, x))))
    return m.multiply(_c(SELU_SCALE, x), m.where(m.greater(x, _c(0, x)), x, neg))


@register_op("SeluGrad", infer=_grad_infer)
def _selu_grad_kernel(m, g, y):
    return m.where(m.greater(y, _c(0, y)), m.multiply(g, _c(SELU_SCALE, y)),
                   m.multiply(g, m.add(y, _c(SELU_SCALE * SELU_ALPHA, y))))


@register_op("LeakyRelu", infer=float_unary, attrs=("alpha",))
def _leaky_relu(m, x, alpha=0.2):
    return m.where(m.greater(x, _c(0, x)), x, m.multiply(x, _c(alpha, x)))


@register_op("LeakyReluGrad", infer=_grad_infer, attrs=("alpha",))
def _leaky_relu_grad_kernel(m, g, x, alpha=0.2):
    return m.where(m.greater(x, _c(0, x)), g, m.multiply(g, _c(alpha, g)))


@register_op("Softplus", infer=float_unary)
def _softplus(m, x):
    return m.add(m.maximum(x, _c(0, x)), m.log1p(m.exp(m.negative(m.abs(x)))))


@register_op("SoftplusGrad", infer=_grad_infer)
def _softplus_grad_kernel(m, g, x):
    half = _c(0.5, x)
    sig = m.multiply(m.add(m.tanh(m.multiply(x, half)), _c(1, x)), half)
    return m.multiply(g, sig)


@register_op("Softsign", infer=float_unary)
def _softsign(m, x):
    return m.true_divide(x, m.add(m.abs(x), _c(1, x)))


@register_op("SoftsignGrad", infer=_grad_infer)
def _softsign_grad_kernel(m, g, x):
    d = m.add(m.abs(x), _c(1, x))
    return m.true_divide(g, m.multiply(d, d))


@register_gradient("Elu")
def _elu_grad(op, g):
    return [make("EluGrad", [g, op.outputs[0]])]


@register_gradient("Selu")
def _selu_grad(op, g):
    return [make("SeluGrad", [g, op.outputs[0]])]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, g):
    return [make("LeakyReluGrad", [g, op.inputs[0]], {"alpha": op.get_attr("alpha")})]


@register_gradient("Softplus")
def _softplus_grad(op, g):
    return [make("SoftplusGrad", [g, op.inputs[0]])]


@register_gradient("Softsign")
def _softsign_grad(op, g):
    return [make("SoftsignGrad", [g, op.inputs[0]])]


# the gradient ops' own gradients (second derivatives) are not needed by TF 1.x training
# code; taking one raises LookupGradientError naming the op.


def elu(features, name=None):
    return make("Elu", [tensor(features)], name=name)


def selu(features, name=None):
    return make("Selu", [tensor(features)], name=name)


def leaky_relu(features, alpha=0.2, name=None):
    return make("LeakyRelu", [tensor(features)], {"alpha": float(alpha)}, name=name)


def softplus(features, name=None):
    return make("Softplus", [tensor(features)], name=name)


def softsign(features, name=None):
    return make("Softsign", [tensor(features)], name=name)


def crelu(features, name=None, axis=-1):
    x = tensor(features)
    with get_default_graph().name_scope(name or "CRelu"):
        return relu(concat([x, negative(x)], axis))


def swish(features, name=None):
    x = tensor(features)
    return multiply(x, sigmoid(x), name=name)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x**2, axis), epsilon))."""
    axis = dim if axis is None else axis
    x = tensor(x)
    with get_default_graph().name_scope(name or "l2_normalize"):
        ss = reduce_sum(square(x), axis, keepdims=True)
        inv = rsqrt(maximum(ss, tensor(np.asarray(epsilon, x.dtype.np))))
        return multiply(x, inv)


# ---- local response normalization -------------------------------------------------------------

_LRN_ATTRS = ("depth_radius", "bias", "alpha", "beta")


def _lrn(m, x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    import xlapy.lax as lax
    r = int(depth_radius)
    sq = m.multiply(x, x)
    window = (1,) * (x.ndim - 1) + (2 * r + 1,)
    pads = [(0, 0)] * (x.ndim - 1) + [(r, r)]
    ssum = lax.reduce_window(sq, np.zeros((), x.dtype), "sum", window, (1,) * x.ndim, pads)
    base = m.add(_c(bias, x), m.multiply(_c(alpha, x), ssum))
    return m.multiply(x, m.power(base, _c(-beta, x)))


def _lrn_infer(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 4):
        raise InvalidArgumentError(f"input must be 4-dimensional, got {x.shape}")
    return float_unary(op)


register_op("LRN", infer=_lrn_infer, attrs=_LRN_ATTRS)(_lrn)


@register_op("LRNGrad", infer=same_as_input(1), attrs=_LRN_ATTRS)
def _lrn_grad_kernel(m, g, x, y, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    import xlapy.numpy as xnp
    from xlapy.frontend.autodiff import vjp
    _, back = vjp(lambda v: _lrn(xnp, v, depth_radius, bias, alpha, beta), x)
    out = back(g)[0]
    return np.asarray(out) if m is np else out


@register_gradient("LRN")
def _lrn_op_grad(op, g):
    return [make("LRNGrad", [g, op.inputs[0], op.outputs[0]],
                 {k: op.get_attr(k) for k in _LRN_ATTRS})]


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,
                                 name=None):
    return make("LRN", [tensor(input)], {"depth_radius": int(depth_radius),
                                         "bias": float(bias), "alpha": float(alpha),
                                         "beta": float(beta)}, name=name)


lrn = local_response_normalization
