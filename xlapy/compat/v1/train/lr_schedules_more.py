"""More tf.train learning-rate schedules: cosine_decay_restarts (SGDR), linear_cosine_decay
and noisy_linear_cosine_decay, with TF 1.x's formulas, as graph ops on the global step (so
they are evaluated inside the compiled training step; the noisy one's noise is a random
op, drawn on the host)."""

from __future__ import annotations

import math

from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops.math_ops import (add, cos, divide, floor, log, minimum, multiply,
                                          pow, sqrt, subtract)
from xlapy.compat.v1.train.learning_rate_decay import _check_step, _rate_and_step


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0,
                          m_mul=1.0, alpha=0.0, name=None):
    """Cosine decay restarted after first_decay_steps, each period t_mul times longer and
    its peak m_mul times lower (Loshchilov & Hutter's SGDR)."""
    _check_step(global_step, "cosine decay restarts")
    with get_default_graph().name_scope(name or "SGDRDecay"):
        lr, step, (first, tm, mm, a) = _rate_and_step(learning_rate, global_step,
                                                      first_decay_steps, t_mul, m_mul, alpha)
        frac = divide(step, first)
        if float(t_mul) == 1.0:
            i_restart = floor(frac)
            frac = subtract(frac, i_restart)
        else:
            i_restart = floor(divide(log(subtract(1.0, multiply(frac, subtract(1.0, tm)))),
                                     log(tm)))
            sum_r = divide(subtract(1.0, pow(tm, i_restart)), subtract(1.0, tm))
            frac = divide(subtract(frac, sum_r), pow(tm, i_restart))
        m_fac = pow(mm, i_restart)
        cosine = multiply(multiply(0.5, m_fac), add(1.0, cos(multiply(math.pi, frac))))
        return multiply(lr, add(multiply(subtract(1.0, a), cosine), a))


def _linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha, beta, noise):
    lr, step, (ds, periods, a, b) = _rate_and_step(learning_rate, global_step, decay_steps,
                                                   num_periods, alpha, beta)
    step = minimum(step, ds)
    linear = divide(subtract(ds, step), ds)
    if noise is not None:
        linear = add(linear, noise(step, lr.dtype))
    frac = multiply(multiply(2.0, periods), divide(step, ds))
    cosine = multiply(0.5, add(1.0, cos(multiply(math.pi, frac))))
    return multiply(lr, add(multiply(add(a, linear), cosine), b))


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    _check_step(global_step, "linear cosine decay")
    with get_default_graph().name_scope(name or "LinearCosineDecay"):
        return _linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha,
                              beta, None)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with Gaussian noise of variance
    initial_variance / (1 + step)^variance_decay added to its linear part."""
    from xlapy.compat.v1.ops.random_ops import random_normal
    _check_step(global_step, "noisy linear cosine decay")

    def noise(step, dtype):
        var = divide(float(initial_variance), pow(add(1.0, step), float(variance_decay)))
        return multiply(random_normal([], dtype=dtype), sqrt(var))
    with get_default_graph().name_scope(name or "NoisyLinearCosineDecay"):
        return _linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha,
                              beta, noise)
