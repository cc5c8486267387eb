"""Learning-rate schedules of tf.train: graph ops computing the rate from the global step.

Each returns a scalar tensor (float32 unless the initial rate has another float dtype)
that the optimizers take as learning_rate, so under XLA the schedule is evaluated inside
the compiled training step. p = global_step / decay_steps, floored with staircase=True:

  exponential_decay   lr * decay_rate ** p
  natural_exp_decay   lr * exp(-decay_rate * p)
  inverse_time_decay  lr / (1 + decay_rate * p)
  polynomial_decay    (lr - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end;
                      cycle=True: decay_steps * ceil(step / decay_steps) instead of the min
  cosine_decay        lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, steps) / steps)) + alpha)
  piecewise_constant  values[i] for boundaries[i-1] < x <= boundaries[i]
"""

from __future__ import annotations

import math

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (add, cast, ceil, cos, divide, exp, floor, greater,
                                          minimum, multiply, pow, subtract)


def _check_step(global_step, what):
    if global_step is None:
        raise InvalidArgumentError(f"global_step is required for {what}.")


def _rate_and_step(learning_rate, global_step, *others):
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    if not lr.dtype.is_floating:
        lr = cast(lr, dtypes.float32)
    step = cast(convert_to_tensor(global_step), lr.dtype)
    rest = [v if isinstance(v, Tensor) and v.dtype == lr.dtype else
            cast(convert_to_tensor(v), lr.dtype) if isinstance(v, Tensor) else
            convert_to_tensor(v, dtype=lr.dtype) for v in others]
    return lr, step, rest


def _progress(step, decay_steps, staircase):
    p = divide(step, decay_steps)
    return floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    _check_step(global_step, "exponential decay")
    with get_default_graph().name_scope(name or "ExponentialDecay") as scope:
        lr, step, (ds, dr) = _rate_and_step(learning_rate, global_step, decay_steps, decay_rate)
        return multiply(lr, pow(dr, _progress(step, ds, staircase)), name=scope[:-1] + "/")


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    _check_step(global_step, "natural exp decay")
    with get_default_graph().name_scope(name or "NaturalExpDecay") as scope:
        lr, step, (ds, dr) = _rate_and_step(learning_rate, global_step, decay_steps, decay_rate)
        return multiply(lr, exp(-dr * _progress(step, ds, staircase)), name=scope[:-1] + "/")


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    _check_step(global_step, "inverse time decay")
    with get_default_graph().name_scope(name or "InverseTimeDecay") as scope:
        lr, step, (ds, dr) = _rate_and_step(learning_rate, global_step, decay_steps, decay_rate)
        denom = add(1.0, multiply(dr, _progress(step, ds, staircase)))
        return divide(lr, denom, name=scope[:-1] + "/")


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    _check_step(global_step, "polynomial decay")
    with get_default_graph().name_scope(name or "PolynomialDecay") as scope:
        lr, step, (ds, end, pw) = _rate_and_step(learning_rate, global_step, decay_steps,
                                                 end_learning_rate, power)
        if cycle:
            # the first cycle starts at step 0: ceil(0 / ds) = 0 would divide by zero
            mult = where(greater(step, 0.0), ceil(divide(step, ds)), 1.0)
            ds = multiply(ds, mult)
        else:
            step = minimum(step, ds)
        frac = subtract(1.0, divide(step, ds))
        return add(multiply(subtract(lr, end), pow(frac, pw)), end, name=scope[:-1] + "/")


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    _check_step(global_step, "cosine decay")
    with get_default_graph().name_scope(name or "CosineDecay") as scope:
        lr, step, (ds, a) = _rate_and_step(learning_rate, global_step, decay_steps, alpha)
        frac = divide(minimum(step, ds), ds)
        cosine = multiply(0.5, add(1.0, cos(multiply(math.pi, frac))))
        decayed = add(multiply(subtract(1.0, a), cosine), a)
        return multiply(lr, decayed, name=scope[:-1] + "/")


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <=
    boundaries[i], values[-1] after the last boundary."""
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise InvalidArgumentError("The length of boundaries should be 1 less than the length "
                                   f"of values ({len(boundaries)} boundaries, {len(values)} "
                                   "values)")
    with get_default_graph().name_scope(name or "PiecewiseConstant"):
        x = convert_to_tensor(x)
        bs = [convert_to_tensor(b, dtype=x.dtype) if not isinstance(b, Tensor) else b
              for b in boundaries]
        first = convert_to_tensor(values[0])
        vs = [first] + [convert_to_tensor(v, dtype=first.dtype) if not isinstance(v, Tensor)
                        else v for v in values[1:]]
        for v in vs:
            if v.dtype != first.dtype:
                raise InvalidArgumentError(f"Values must have elements all with the same dtype "
                                           f"({first.dtype.name} vs {v.dtype.name}).")
        out = vs[0]
        for b, v in zip(bs, vs[1:]):
            out = where(greater(x, b), v, out)
        return out
