"""Elementwise math beyond the basics: tf.round, erf, erfc, expm1, lgamma, digamma,
div_no_nan, log_sigmoid, accumulate_n, clip_by_average_norm.

Kernels are written once against the array module `m`; the special functions come from
scipy.special in the executor and xlapy.scipy.special when compiled. Gradients are TF's
(math_grad.py): Round has none; Erf 2/sqrt(pi) exp(-x^2); Lgamma digamma(x); DivNoNan
div_no_nan(g, y) and g * div_no_nan(div_no_nan(-x, y), y), reduced to each input's shape.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import binary_fn, broadcasting, float_unary, tensor, unary_fn
from xlapy.compat.v1.ops.math_ops import (add_n, exp, minimum, multiply, negative, reduce_sum,
                                          rsqrt, square, sum_to)


def _special(m):
    if m is np:
        import scipy.special
        return scipy.special
    import xlapy.scipy.special
    return xlapy.scipy.special


def _c(v, x):
    return np.asarray(v, dtype=x.dtype)


register_op("Round", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])(
    lambda m, x: m.round(x) if x.dtype.kind == "f" else x)  # half to even, as TF
register_op("Erf", infer=float_unary)(lambda m, x: _special(m).erf(x))
register_op("Erfc", infer=float_unary)(lambda m, x: _special(m).erfc(x))
register_op("Expm1", infer=float_unary)(lambda m, x: m.expm1(x))
register_op("Lgamma", infer=float_unary)(lambda m, x: _special(m).gammaln(x))
register_op("Digamma", infer=float_unary)(lambda m, x: _special(m).digamma(x))
not_differentiable("Round")


def _float_binary(op):
    from xlapy.compat.v1.errors import InvalidTypeError
    if not op.inputs[0].dtype.is_floating:
        raise InvalidTypeError(f"Value passed to parameter 'x' of '{op.type}' Op has DataType "
                               f"{op.inputs[0].dtype.name} not in list of allowed values: "
                               "float16, float32, float64")
    return broadcasting()(op)


@register_op("DivNoNan", infer=_float_binary)
def _div_no_nan(m, x, y):
    zero = _c(0, y)
    safe = m.where(m.equal(y, zero), _c(1, y), y)
    return m.where(m.equal(y, zero), zero, m.true_divide(x, safe))


@register_gradient("Erf")
def _erf_grad(op, g):
    x = op.inputs[0]
    k = tensor(np.asarray(2.0 / math.sqrt(math.pi), x.dtype.np))
    return [multiply(g, multiply(k, exp(negative(square(x)))))]


@register_gradient("Erfc")
def _erfc_grad(op, g):
    x = op.inputs[0]
    k = tensor(np.asarray(-2.0 / math.sqrt(math.pi), x.dtype.np))
    return [multiply(g, multiply(k, exp(negative(square(x)))))]


@register_gradient("Expm1")
def _expm1_grad(op, g):
    return [multiply(g, exp(op.inputs[0]))]


@register_gradient("Lgamma")
def _lgamma_grad(op, g):
    return [multiply(g, digamma(op.inputs[0]))]


@register_gradient("DivNoNan")
def _div_no_nan_grad(op, g):
    x, y = op.inputs
    return [sum_to(div_no_nan(g, y), x, y),
            sum_to(multiply(g, div_no_nan(div_no_nan(negative(x), y), y)), y, x)]


round = unary_fn("Round")
erf = unary_fn("Erf")
erfc = unary_fn("Erfc")
expm1 = unary_fn("Expm1")
lgamma = unary_fn("Lgamma")
digamma = unary_fn("Digamma")


div_no_nan = binary_fn("DivNoNan", "div_no_nan",
                       "x / y, and 0 where y is 0 (also for x = 0, inf or nan).")


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), free of overflow for large |x|."""
    from xlapy.compat.v1.ops.activation_ops import softplus
    x = tensor(x)
    with get_default_graph().name_scope(name or "LogSigmoid"):
        return negative(softplus(negative(x)))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The sum of `inputs` (tf.accumulate_n: add_n without waiting for all inputs; in a
    graph run by a session the result is the same)."""
    if not inputs:
        from xlapy.compat.v1.errors import InvalidArgumentError
        raise InvalidArgumentError("accumulate_n: inputs must be a non-empty list of tensors")
    return add_n(list(inputs), name=name)


def clip_by_average_norm(t, clip_norm, name=None):
    """t * clip_norm / max(clip_norm, l2norm(t) / size(t)), TF's formulation:
    t * clip_norm * min(size(t) / l2norm(t), 1 / clip_norm)."""
    from xlapy.compat.v1.ops.array_ops import size
    from xlapy.compat.v1.ops.math_ops import cast, reciprocal
    t = tensor(t)
    with get_default_graph().name_scope(name or "clip_by_average_norm"):
        c = tensor(clip_norm, t.dtype)
        n = cast(size(t), t.dtype)
        inv = rsqrt(reduce_sum(multiply(t, t)))
        return multiply(multiply(t, c), minimum(multiply(inv, n), reciprocal(c)))

