"""JVP rules of primitives/sorting.py.

  sort      sort the operands with an extra iota operand, which gives the permutation;
            each tangent is gathered through it along the sorted dimension (JAX's rule)
  cumsum    linear
  cumprod   out * cumsum(t / x)   (x != 0 assumed, as the VJP)
  cummax/cummin  the tangent at the position holding the running extremum (the last such
            position on ties, as the VJP)
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.jvp.rules import linear
from xlapy.frontend.primitives import sorting as So
from xlapy.frontend.primitives.basic import aval_of, div, eq, full, is_float, mul, ne, or_, select
from xlapy.frontend.primitives.indexing import gather_along_axis
from xlapy.frontend.primitives.shapes import iota, rev


def _sort_rule(primals, tangents, dimension, is_stable, num_keys):
    a = aval_of(primals[0])
    ids = iota(So._index_dtype(a.shape[dimension]), a.shape, dimension)
    outs = bind(So.sort_p, *primals, ids, dimension=dimension, is_stable=is_stable,
                num_keys=num_keys)
    perm = outs[-1]
    t_out = [None if t is None else gather_along_axis(t, perm, dimension) for t in tangents]
    return list(outs[:-1]), t_out


So.sort_p.def_jvp(_sort_rule)
linear(So.cumsum_p)


def _cumprod_rule(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    out = So.cumprod(x, axis, reverse)
    return out, mul(out, So.cumsum(div(t, x), axis, reverse))


So.cumprod_p.def_jvp(_cumprod_rule)


def _last_extremum(x, out, axis):
    """For each i, the last j <= i where x_j equals the running extremum out_i."""
    a = aval_of(x)
    it = So._index_dtype(a.shape[axis])
    ids = iota(it, a.shape, axis)
    record = eq(x, out)
    if is_float(a.dtype):
        record = or_(record, ne(x, x))  # NaN counts as the extremum, as max propagates it
    return So.cummax(select(record, ids, full(a.shape, -1, it)), axis)


def _cum_extremum_rule(prim):
    def rule(primals, tangents, axis, reverse):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, axis=axis, reverse=reverse)
        if reverse:
            xr, outr, tr = rev(x, (axis,)), rev(out, (axis,)), rev(t, (axis,))
            return out, rev(gather_along_axis(tr, _last_extremum(xr, outr, axis), axis),
                            (axis,))
        return out, gather_along_axis(t, _last_extremum(x, out, axis), axis)
    prim.def_jvp(rule)


_cum_extremum_rule(So.cummax_p)
_cum_extremum_rule(So.cummin_p)
