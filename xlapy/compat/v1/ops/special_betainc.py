"""tf.betainc / tf.math.betainc: the regularized incomplete beta function I_x(a, b).

TF's Betainc takes a, b and x of one float dtype (float32 or float64) that are either all
of one shape or scalars (no other broadcasting: mismatched shapes raise). The kernel is
scipy.special.betainc in the executor and xlapy.scipy.special.betainc when compiled.

Gradient (TF 1.15's): only x has one, dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b), summed to x's
shape when x is a scalar; a and b get None.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.ops.math_ops import add, exp, log1p, multiply, negative, subtract, sum_to
from xlapy.compat.v1.ops.special_math_ops import lgamma
from xlapy.compat.v1.ops.trig_ops import xlogy


def _betainc_infer(op):
    a, b, x = op.inputs
    for t, nm in zip(op.inputs, ("a", "b", "x")):
        if t.dtype.name not in ("float32", "float64"):
            raise InvalidTypeError(f"Value passed to parameter '{nm}' of 'Betainc' Op has "
                                   f"DataType {t.dtype.name} not in list of allowed values: "
                                   "float32, float64")
        if t.dtype != a.dtype:
            raise InvalidTypeError(f"Input '{nm}' of 'Betainc' Op has type {t.dtype.name} "
                                   f"that does not match type {a.dtype.name} of argument 'a'.")
    out = None
    for t in op.inputs:
        if t.shape.ndims == 0:
            continue
        if out is None:
            out = t.shape
        elif not out.is_compatible_with(t.shape):
            raise InvalidArgumentError(f"Shapes of a, b and x are inconsistent: "
                                       f"{a.shape.tf_str()} vs. {b.shape.tf_str()} vs. "
                                       f"{x.shape.tf_str()}")
        else:
            out = out.merge_with(t.shape)
    return [(a.dtype, out if out is not None else a.shape)]


def _betainc_lower(m, a, b, x):
    import xlapy.scipy.special  # the compiled kernel, loaded when a cluster is traced
    return xlapy.scipy.special.betainc(a, b, x)


@register_op("Betainc", infer=_betainc_infer, lowering=_betainc_lower)
def _betainc(m, a, b, x):
    import scipy.special  # the executor's kernel; SciPy is loaded only when it runs
    shapes = {tuple(np.shape(v)) for v in (a, b, x) if np.ndim(v)}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"Shapes of a, b and x are inconsistent: {np.shape(a)} "
                                   f"vs. {np.shape(b)} vs. {np.shape(x)}")
    return np.asarray(scipy.special.betainc(a, b, x), dtype=np.asarray(a).dtype)


@register_gradient("Betainc")
def _betainc_grad(op, g):
    a, b, x = op.inputs
    one = tensor(np.ones((), a.dtype.np))
    log_beta = subtract(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    partial_x = exp(subtract(add(multiply(subtract(b, one), log1p(negative(x))),
                                 xlogy(subtract(a, one), x)), log_beta))
    return [None, None, sum_to(multiply(g, partial_x), x, op.outputs[0])]


def betainc(a, b, x, name=None):
    """I_x(a, b) = B(x; a, b) / B(a, b), elementwise (a, b, x of one shape, or scalars)."""
    dt = next((v.dtype for v in (a, b, x) if isinstance(v, Tensor)), None)
    a = tensor(a, dt)
    return make("Betainc", [a, tensor(b, a.dtype), tensor(x, a.dtype)],
                name=name or "Betainc")
