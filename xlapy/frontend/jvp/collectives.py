"""JVP rules of primitives/collectives.py (inside the vmap that names the axis).

  psum, all_gather, ppermute, psum_scatter  linear: the collective of the tangents
  pmax / pmin       the mean of the tangents of the members holding the extremum (as
                    reduce_max's rule; JAX has no rule for them)
  axis_index        an integer result: no rule needed
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.jvp.rules import instantiate, linear
from xlapy.frontend.primitives import collectives as Co
from xlapy.frontend.primitives.all_to_all import all_to_all_p
from xlapy.frontend.primitives.process_collectives import process_allreduce_p
from xlapy.frontend.primitives.basic import convert, div, eq, mul

linear(Co.psum_p)
linear(Co.all_gather_p)
linear(Co.ppermute_p)
linear(Co.psum_scatter_p)
linear(all_to_all_p)
_process_sum = linear(process_allreduce_p)


@process_allreduce_p.def_jvp
def _process_allreduce_jvp(primals, tangents, *, kind):
    if kind != "add":  # (compat's gradient of allreduce allows only sum and average)
        raise Co.XlapyError(f"process_allreduce with the {kind} reducer has no JVP rule")
    return _process_sum(primals, tangents, kind=kind)


def _chooser(prim):
    def rule(primals, tangents, *, axis_name):
        out = bind(prim, *primals, axis_name=axis_name)
        t_out = []
        for x, t, o in zip(primals, tangents, out):
            if t is None:
                t_out.append(None)
                continue
            hit = convert(eq(x, o), o.dtype if hasattr(o, "dtype") else x.dtype)
            num, count = bind(Co.psum_p, mul(instantiate(t, x), hit), hit,
                              axis_name=axis_name)
            t_out.append(div(num, count))
        return out, t_out
    prim.def_jvp(rule)


_chooser(Co.pmax_p)
_chooser(Co.pmin_p)
