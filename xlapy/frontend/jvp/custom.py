"""JVP rules of custom_derivatives.py and checkpoint.py.

  custom_jvp_call       the user's rule (its primal output too); tangents of integer
                        arguments are float0 zeros, zero tangents are materialized
  custom_vjp_call       refused, as in JAX (a custom VJP says nothing about forward mode)
  checkpoint            the JVP of its graph (recomputation is a reverse-mode matter)
  optimization_barrier  linear
"""

from __future__ import annotations

from xlapy.errors import XlapyError
from xlapy.frontend.checkpoint import checkpoint_p, optimization_barrier_p
from xlapy.frontend.custom_derivatives import (_zero_tangent, custom_jvp_call_p,
                                               custom_vjp_call_p)
from xlapy.frontend.forward import jvp_call
from xlapy.frontend.graph import eval_graph
from xlapy.frontend.jvp.rules import linear
from xlapy.frontend.primitives.basic import is_float


@custom_jvp_call_p.def_jvp
def _custom_jvp_rule(primals, tangents, *, graph, num_consts, rule, name):
    if any(t is not None for t in tangents[:num_consts]):
        raise XlapyError(f"the custom_jvp function {name} closes over a value that is being "
                         "differentiated; pass it as an argument instead")
    args = list(primals[num_consts:])
    ts = [t if t is not None else _zero_tangent(a) for a, t in zip(args, tangents[num_consts:])]
    outs, t_out = rule(args, ts)
    return outs, [t if is_float(a.dtype) else None for t, a in zip(t_out, graph.out_avals)]


@custom_vjp_call_p.def_jvp
def _custom_vjp_rule(primals, tangents, **params):
    raise XlapyError(f"can't apply forward-mode differentiation (jvp, jacfwd, hessian) to the "
                     f"custom_vjp function {params['name']}, as in JAX; define it with "
                     "custom_jvp to use forward mode")


@checkpoint_p.def_jvp
def _checkpoint_rule(primals, tangents, *, graph, num_consts, prevent_cse, policy):
    return jvp_call(lambda *v: eval_graph(graph, list(v[:num_consts]), list(v[num_consts:])),
                    list(primals), list(tangents))


linear(optimization_barrier_p)
