"""JVP rules of primitives/basic.py: elementwise math, select, convert, broadcast_in_dim.

Derivatives (t: the operand's tangent, out: the primal result), as JAX's rules:
  exp t*out   expm1 t*(out+1)   log t/x   log1p t/(1+x)   logistic t*out*(1-out)
  tanh t*(1-out^2)   sin t*cos x   cos -t*sin x   tan t*(1+out^2)   sqrt t/(2 out)
  rsqrt -t*out/(2x)   cbrt t/(3 out^2)   erf t*2/sqrt(pi)*e^(-x^2)   abs: t where x >= 0,
  else -t   sign/floor/ceil/round: 0
  div  tx/y - ty*out/y     rem  tx - ty*trunc(x/y)     atan2(x, y)  (tx*y - ty*x)/(x^2+y^2)
  pow  tx*y*x^(y-1) + ty*out*log(x)  (the log term is 0 where x == 0, as JAX)
  max/min  the tangent of the operand that is the result; ties take half of each (JAX)
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend.jvp.rules import bilinear, derivatives, linear, zero
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.basic import (add, aval_of, cos, div, eq, exp, full_like, gt,
                                             is_float, log, lt, mul, neg, pow_, select, sin,
                                             sub, zeros_like)


def _scale(fn):
    """The partial t -> t * fn(x, out) of a unary primitive."""
    return lambda t, x, out: mul(t, fn(x, out))


def _one(x):
    return full_like(x, 1)


# ---- unary -------------------------------------------------------------------------------

linear(B.neg_p)
derivatives(B.abs_p, lambda t, x, out: select(B.ge(x, zeros_like(x)), t, neg(t)))
for _p in (B.sign_p, B.floor_p, B.ceil_p, B.round_p, B.round_afz_p):
    zero(_p)
derivatives(B.exp_p, _scale(lambda x, out: out))
derivatives(B.expm1_p, _scale(lambda x, out: add(out, _one(out))))
derivatives(B.log_p, lambda t, x, out: div(t, x))
derivatives(B.log1p_p, lambda t, x, out: div(t, add(x, _one(x))))
derivatives(B.logistic_p, _scale(lambda x, out: mul(out, sub(_one(out), out))))
derivatives(B.tanh_p, _scale(lambda x, out: sub(_one(out), mul(out, out))))
derivatives(B.sin_p, _scale(lambda x, out: cos(x)))
derivatives(B.cos_p, lambda t, x, out: neg(mul(t, sin(x))))
derivatives(B.tan_p, _scale(lambda x, out: add(_one(out), mul(out, out))))
derivatives(B.sqrt_p, lambda t, x, out: div(t, mul(out, full_like(out, 2))))
derivatives(B.rsqrt_p, _scale(lambda x, out: div(mul(out, full_like(out, -0.5)), x)))
derivatives(B.cbrt_p, lambda t, x, out: div(t, mul(full_like(out, 3), mul(out, out))))
derivatives(B.erf_p, _scale(lambda x, out: mul(full_like(x, 2 / np.sqrt(np.pi)),
                                               exp(neg(mul(x, x))))))

# ---- binary ------------------------------------------------------------------------------

linear(B.add_p)
linear(B.sub_p)
bilinear(B.mul_p)
derivatives(B.div_p,
            lambda t, x, y, out: div(t, y),
            lambda t, x, y, out: neg(mul(t, div(out, y))))
derivatives(B.rem_p,
            lambda t, x, y, out: t,
            lambda t, x, y, out: mul(neg(t), B.round_toward_zero(div(x, y))))


def _pow_x(t, x, y, out):
    return mul(t, mul(y, pow_(x, sub(y, _one(y)))))


def _pow_y(t, x, y, out):
    safe = select(eq(x, zeros_like(x)), _one(x), x)
    return mul(t, mul(out, log(safe)))


derivatives(B.pow_p, _pow_x, _pow_y)


def _chooser(cmp, first: bool):
    """max/min: the tangent of whichever operand is the result, half of each on ties."""
    def partial(t, x, y, out):
        half = mul(t, full_like(t, 0.5))
        wins = cmp(x, y) if first else cmp(y, x)
        return select(eq(x, y), half, select(wins, t, zeros_like(t)))
    return partial


derivatives(B.max_p, _chooser(gt, True), _chooser(gt, False))
derivatives(B.min_p, _chooser(lt, True), _chooser(lt, False))


def _atan2_denom(x, y):
    return add(mul(x, x), mul(y, y))


derivatives(B.atan2_p,
            lambda t, x, y, out: mul(t, div(y, _atan2_denom(x, y))),
            lambda t, x, y, out: mul(t, div(neg(x), _atan2_denom(x, y))))

# ---- select, convert, broadcast ---------------------------------------------------------------

linear(B.select_p, argnums=(1, 2))  # the predicate is fixed


def _convert_rule(primals, tangents, dtype):
    (x,), (t,) = primals, tangents
    out = B.convert(x, dtype)
    if t is None or not (is_float(aval_of(x).dtype) and is_float(np.dtype(dtype))):
        return out, None  # to or from an integer type: no tangent
    return out, B.convert(t, dtype)


B.convert_p.def_jvp(_convert_rule)
linear(B.broadcast_in_dim_p)
