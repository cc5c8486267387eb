"""Small primitives used by xlapy.nn and xlapy.lax: stop_gradient and clamp.

stop_gradient(x) is the identity whose VJP is zero: softmax / log_softmax / logsumexp
subtract stop_gradient(max) so the max's (tie-splitting) gradient never enters. It lowers
to nothing (its operand's HLO value is reused).

clamp(lo, x, hi) is XLA's clamp, min(max(x, lo), hi), with JAX's VJP: x gets the cotangent
where lo < x < hi strictly, lo where x < lo (and lo < hi), hi where hi < x.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import bind, primitive
from xlapy.frontend.primitives.basic import (and_, aval_of, gt, is_float, lt, select,
                                             zeros_like)

stop_gradient_p = primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: np.asarray(x))
stop_gradient_p.def_abstract_eval(lambda a: a)
stop_gradient_p.def_lowering(lambda ctx, x: x)
stop_gradient_p.def_vjp(lambda ct, x, out: (None,))                          # d(sg x) = 0


def stop_gradient(x):
    """x, with no gradient flowing back through it (integers pass through unchanged)."""
    if not is_float(aval_of(x).dtype):
        return x
    return bind(stop_gradient_p, x)


clamp_p = primitive("clamp")


@clamp_p.def_impl
def _clamp_impl(lo, x, hi):
    lo, x, hi = np.asarray(lo), np.asarray(x), np.asarray(hi)
    return np.asarray(np.minimum(np.maximum(x, lo), hi), dtype=x.dtype)


@clamp_p.def_abstract_eval
def _clamp_aval(lo, x, hi):
    if lo.shape != x.shape or hi.shape != x.shape or lo.dtype != x.dtype or hi.dtype != x.dtype:
        raise ShapeError(f"clamp: the bounds {lo} and {hi} must have the shape and dtype of "
                         f"the operand {x}")
    return x


clamp_p.def_lowering(lambda ctx, lo, x, hi: ctx.b.clamp(lo, x, hi))


@clamp_p.def_vjp
def _clamp_vjp(ct, lo, x, hi, out):
    z = zeros_like(ct)
    g_lo = select(and_(gt(lo, x), lt(lo, hi)), ct, z)                        # x < lo < hi
    g_x = select(and_(gt(x, lo), lt(x, hi)), ct, z)                          # lo < x < hi
    g_hi = select(lt(hi, x), ct, z)                                          # hi < x
    return g_lo, g_x, g_hi


def clamp(lo, x, hi):
    return bind(clamp_p, lo, x, hi)


__all__ = ["stop_gradient", "stop_gradient_p", "clamp", "clamp_p"]
