"""JVP rules of primitives/misc.py: stop_gradient (tangent zero) and clamp (JAX's rule: the
tangent of whichever of lo, x, hi is the result; lo where x < lo < hi, hi where hi < x)."""

from __future__ import annotations

from xlapy.frontend.jvp.rules import derivatives, zero
from xlapy.frontend.primitives.basic import and_, gt, lt, select, zeros_like
from xlapy.frontend.primitives.misc import clamp_p, stop_gradient_p

zero(stop_gradient_p)
derivatives(clamp_p,
            lambda t, lo, x, hi, out: select(and_(gt(lo, x), lt(lo, hi)), t, zeros_like(t)),
            lambda t, lo, x, hi, out: select(and_(gt(x, lo), lt(x, hi)), t, zeros_like(t)),
            lambda t, lo, x, hi, out: select(lt(hi, x), t, zeros_like(t)))
