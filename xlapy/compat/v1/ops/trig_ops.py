"""Trigonometric and hyperbolic functions (tf.tan, atan, asin, acos, sinh, cosh, asinh,
acosh, atanh, atan2), tf.rint, and the zero-safe products of tf.math (xlogy, xdivy,
multiply_no_nan, reciprocal_no_nan), with TF's gradients (math_grad.py):

    tan: g / cos^2     atan: g / (1 + x^2)     asin: g / sqrt(1 - x^2)   acos: -that
    sinh: g cosh x     cosh: g sinh x          asinh: g / sqrt(x^2 + 1)  acosh: g / sqrt(x^2 - 1)
    atanh: g / (1 - x^2)                       atan2(y, x): (g x, -g y) / (x^2 + y^2)
    xlogy: (xlogy(x != 0, y), xdivy(x, y))     xdivy: (xdivy(x != 0, y), xdivy(-x, y^2))
    mul_no_nan: (mul_no_nan(g, y), mul_no_nan(x, g))
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import (binary_args, binary_fn, float_unary, make, tensor,
                                         unary_fn)
from xlapy.compat.v1.ops.special_math_ops import _float_binary
from xlapy.compat.v1.ops.math_ops import (add, cast, cos, multiply, negative, not_equal,
                                          reciprocal, sqrt, square, subtract, sum_to)


def _c(v, x):
    return np.asarray(v, dtype=x.dtype)


_UNARY = {"Tan": "tan", "Atan": "arctan", "Asin": "arcsin", "Acos": "arccos",
          "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
          "Atanh": "arctanh", "Rint": "rint"}
for _t, _f in _UNARY.items():
    register_op(_t, infer=float_unary)(lambda m, x, _f=_f: getattr(m, _f)(x))
not_differentiable("Rint")

register_op("Atan2", infer=_float_binary)(lambda m, y, x: m.arctan2(y, x))


@register_op("Xlogy", infer=_float_binary)
def _xlogy(m, x, y):
    safe = m.where(m.equal(x, _c(0, x)), m.ones_like(y), y)
    return m.where(m.equal(x, _c(0, x)), _c(0, x), m.multiply(x, m.log(safe)))


@register_op("Xdivy", infer=_float_binary)
def _xdivy(m, x, y):
    safe = m.where(m.equal(x, _c(0, x)), m.ones_like(y), y)
    return m.where(m.equal(x, _c(0, x)), _c(0, x), m.true_divide(x, safe))


@register_op("MulNoNan", infer=_float_binary)
def _mul_no_nan(m, x, y):
    zero = m.equal(y, _c(0, y))
    return m.multiply(m.where(zero, _c(0, x), x), y)  # 0 * (inf or nan) never computed


def _unary_grad(op_type, fn):
    register_gradient(op_type)(lambda op, g: [multiply(g, fn(op.inputs[0], op))])


def _one(x):
    return tensor(np.ones((), x.dtype.np))


_unary_grad("Tan", lambda x, op: reciprocal(square(cos(x))))
_unary_grad("Atan", lambda x, op: reciprocal(add(_one(x), square(x))))
_unary_grad("Asin", lambda x, op: reciprocal(sqrt(subtract(_one(x), square(x)))))
_unary_grad("Acos", lambda x, op: negative(reciprocal(sqrt(subtract(_one(x), square(x))))))
_unary_grad("Sinh", lambda x, op: cosh(x))
_unary_grad("Cosh", lambda x, op: sinh(x))
_unary_grad("Asinh", lambda x, op: reciprocal(sqrt(add(square(x), _one(x)))))
_unary_grad("Acosh", lambda x, op: reciprocal(sqrt(subtract(square(x), _one(x)))))
_unary_grad("Atanh", lambda x, op: reciprocal(subtract(_one(x), square(x))))


@register_gradient("Atan2")
def _atan2_grad(op, g):
    y, x = op.inputs
    inv = reciprocal(add(square(x), square(y)))
    return [sum_to(multiply(g, multiply(x, inv)), y, x),
            sum_to(multiply(g, negative(multiply(y, inv))), x, y)]


@register_gradient("Xlogy")
def _xlogy_grad(op, g):
    x, y = op.inputs
    nz = cast(not_equal(x, tensor(np.zeros((), x.dtype.np))), x.dtype)
    return [sum_to(multiply(g, xlogy(nz, y)), x, y), sum_to(multiply(g, xdivy(x, y)), y, x)]


@register_gradient("Xdivy")
def _xdivy_grad(op, g):
    x, y = op.inputs
    nz = cast(not_equal(x, tensor(np.zeros((), x.dtype.np))), x.dtype)
    return [sum_to(multiply(g, xdivy(nz, y)), x, y),
            sum_to(multiply(g, xdivy(negative(x), square(y))), y, x)]


@register_gradient("MulNoNan")
def _mul_no_nan_grad(op, g):
    x, y = op.inputs
    return [sum_to(multiply_no_nan(g, y), x, y), sum_to(multiply_no_nan(x, g), y, x)]


tan, atan, asin, acos = (unary_fn(t) for t in ("Tan", "Atan", "Asin", "Acos"))
sinh, cosh, asinh, acosh, atanh = (unary_fn(t) for t in ("Sinh", "Cosh", "Asinh", "Acosh",
                                                         "Atanh"))
rint = unary_fn("Rint")


def atan2(y, x, name=None):
    y, x = binary_args(y, x, "Atan2")
    return make("Atan2", [y, x], name=name)


xlogy = binary_fn("Xlogy", "xlogy", "x * log(y), and 0 where x is 0.")
xdivy = binary_fn("Xdivy", "xdivy", "x / y, and 0 where x is 0.")
multiply_no_nan = binary_fn("MulNoNan", "multiply_no_nan",
                            "x * y, and 0 where y is 0 (even if x is inf or nan).")


def reciprocal_no_nan(x, name=None):
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    x = tensor(x)
    return div_no_nan(tensor(np.ones((), x.dtype.np)), x, name=name)

