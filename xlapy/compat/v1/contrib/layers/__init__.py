"""tf.contrib.layers: the weight regularizers TF 1.x scripts pass to tf.get_variable and
tf.layers (l1_regularizer, l2_regularizer, l1_l2_regularizer, sum_regularizer). Each
returns a function of a weight tensor giving a scalar loss (None when the scale is 0);
get_variable and the layers add those losses to tf.GraphKeys.REGULARIZATION_LOSSES."""

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
