"""The update ops of the optimizers added by tf.train (TF's training_ops): RMSProp,
centered RMSProp and Adadelta. GradientDescent, Momentum, Adagrad and Adam are in
state_ops.py.

Like every Apply* op, each kernel takes the current values of its variable inputs
(ref_inputs) and returns their new values, written once against the array module `m`, so
the same formula runs in the executor (NumPy) and inside a compiled training step
(xlapy.numpy): the optimizer's update is part of the step's XLA cluster.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops.state_ops import _ref_infer


def _one(x):
    return np.ones((), dtype=x.dtype)


@register_op("ApplyRMSProp", infer=_ref_infer, ref_inputs=(0, 1, 2))
def _apply_rms_prop(m, var, ms, mom, lr, rho, momentum, epsilon, grad):
    """ms <- rho ms + (1 - rho) g^2; mom <- momentum mom + lr g / sqrt(ms + eps);
    var <- var - mom."""
    ms = m.add(m.multiply(rho, ms), m.multiply(m.subtract(_one(var), rho), m.square(grad)))
    mom = m.add(m.multiply(momentum, mom),
                m.true_divide(m.multiply(lr, grad), m.sqrt(m.add(ms, epsilon))))
    return m.subtract(var, mom), ms, mom


@register_op("ApplyCenteredRMSProp", infer=_ref_infer, ref_inputs=(0, 1, 2, 3))
def _apply_centered_rms_prop(m, var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    """As ApplyRMSProp with the mean gradient mg subtracted: the denominator is
    sqrt(ms - mg^2 + eps), mg <- rho mg + (1 - rho) g."""
    one_minus_rho = m.subtract(_one(var), rho)
    mg = m.add(m.multiply(rho, mg), m.multiply(one_minus_rho, grad))
    ms = m.add(m.multiply(rho, ms), m.multiply(one_minus_rho, m.square(grad)))
    denom = m.sqrt(m.add(m.subtract(ms, m.square(mg)), epsilon))
    mom = m.add(m.multiply(momentum, mom), m.true_divide(m.multiply(lr, grad), denom))
    return m.subtract(var, mom), mg, ms, mom


@register_op("ApplyAdadelta", infer=_ref_infer, ref_inputs=(0, 1, 2))
def _apply_adadelta(m, var, accum, accum_update, lr, rho, epsilon, grad):
    """accum <- rho accum + (1 - rho) g^2;
    update = sqrt(accum_update + eps) / sqrt(accum + eps) * g;
    accum_update <- rho accum_update + (1 - rho) update^2; var <- var - lr update."""
    one_minus_rho = m.subtract(_one(var), rho)
    accum = m.add(m.multiply(rho, accum), m.multiply(one_minus_rho, m.square(grad)))
    update = m.multiply(m.true_divide(m.sqrt(m.add(accum_update, epsilon)),
                                      m.sqrt(m.add(accum, epsilon))), grad)
    accum_update = m.add(m.multiply(rho, accum_update),
                         m.multiply(one_minus_rho, m.square(update)))
    return m.subtract(var, m.multiply(update, lr)), accum, accum_update


not_differentiable("ApplyRMSProp", "ApplyCenteredRMSProp", "ApplyAdadelta")
