"""The FTRL-Proximal update ops of tf.train.FtrlOptimizer (TF's ApplyFtrl and ApplyFtrlV2,
training_ops) and the proximal ones of ProximalGradientDescent / ProximalAdagrad: written
once against the array module `m`, so the update runs in the executor and inside a
compiled training step.

    accum' = accum + g^2
    linear += g_s - (accum'^(-p) - accum^(-p)) / lr * var     (g_s = g + 2 l2_shrinkage var)
    var = (sign(linear) l1 - linear) / (accum'^(-p) / lr + 2 l2)  if |linear| > l1, else 0

with p = lr_power (-0.5 by default, where accum^(-p) is sqrt(accum)).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops.state_ops import _ref_infer


def _pow_neg(m, a, lr_power):
    return m.power(a, m.negative(lr_power))


def _ftrl(m, var, accum, linear, grad, lr, l1, l2, shrink, lr_power):
    new_accum = m.add(accum, m.multiply(grad, grad))
    g = grad if shrink is None else m.add(grad, m.multiply(m.multiply(
        np.asarray(2, var.dtype), shrink), var))
    sigma = m.true_divide(m.subtract(_pow_neg(m, new_accum, lr_power),
                                     _pow_neg(m, accum, lr_power)), lr)
    linear = m.add(linear, m.subtract(g, m.multiply(sigma, var)))
    x = m.subtract(m.multiply(l1, m.sign(linear)), linear)
    y = m.add(m.true_divide(_pow_neg(m, new_accum, lr_power), lr),
              m.multiply(np.asarray(2, var.dtype), l2))
    var = m.where(m.greater(m.abs(linear), l1), m.true_divide(x, y), m.zeros_like(var))
    return var, new_accum, linear


@register_op("ApplyFtrl", infer=_ref_infer, ref_inputs=(0, 1, 2), attrs=("use_locking",))
def _apply_ftrl(m, var, accum, linear, grad, lr, l1, l2, lr_power, use_locking=False):
    return _ftrl(m, var, accum, linear, grad, lr, l1, l2, None, lr_power)


@register_op("ApplyFtrlV2", infer=_ref_infer, ref_inputs=(0, 1, 2), attrs=("use_locking",))
def _apply_ftrl_v2(m, var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power,
                   use_locking=False):
    return _ftrl(m, var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power)


def _prox(m, v, lr, l1, l2):
    """sign(v) max(|v| - lr l1, 0) / (1 + lr l2): the proximal step of l1 + l2/2."""
    shrunk = m.maximum(m.subtract(m.abs(v), m.multiply(lr, l1)), m.zeros_like(v))
    return m.true_divide(m.multiply(m.sign(v), shrunk),
                         m.add(np.asarray(1, v.dtype), m.multiply(lr, l2)))


@register_op("ApplyProximalGradientDescent", infer=_ref_infer, ref_inputs=(0,),
             attrs=("use_locking",))
def _apply_prox_gd(m, var, alpha, l1, l2, delta, use_locking=False):
    """var <- prox(var - alpha delta)."""
    return (_prox(m, m.subtract(var, m.multiply(alpha, delta)), alpha, l1, l2),)


@register_op("ApplyProximalAdagrad", infer=_ref_infer, ref_inputs=(0, 1),
             attrs=("use_locking",))
def _apply_prox_adagrad(m, var, accum, lr, l1, l2, grad, use_locking=False):
    """accum += g^2; with lr' = lr / sqrt(accum): var <- prox_lr'(var - lr' g)."""
    accum = m.add(accum, m.multiply(grad, grad))
    eff = m.true_divide(lr, m.sqrt(accum))
    return _prox(m, m.subtract(var, m.multiply(eff, grad)), eff, l1, l2), accum


not_differentiable("ApplyFtrl", "ApplyFtrlV2", "ApplyProximalGradientDescent",
                   "ApplyProximalAdagrad")
