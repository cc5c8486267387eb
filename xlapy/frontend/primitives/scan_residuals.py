"""Which intermediates of a scan body reverse mode keeps instead of recomputing.

The VJP of a scan is a reverse scan that evaluates the body's VJP at each iteration, from
the carry entering it (saved by the forward scan). Evaluated from the carry alone, every
product of the body would be computed twice, once forward and once again backward (a
recurrent cell's gate products: a third of the backward loop's gemm work). As JAX's scan
partial evaluation keeps the forward's values that the backward needs, the forward scan
stacks the results of the body's products (dot_general equations whose operands vary over
the iterations) as extra outputs, and the backward evaluation records them on its tape
with those outputs instead of computing them (the VJP of a product needs its operands,
not its result, so nothing recomputes it; elementwise work is recomputed, as it is cheap).

    with_residuals(body, num_consts, num_carry) -> (graph, [(eqn index, output position)])

`graph` is the body with the kept values appended to its outputs (as more ys); a value that
is already an output is not appended twice (a scan differentiated twice keeps its
residuals once).
"""

from __future__ import annotations

from xlapy.frontend.graph import Graph, Literal, Var
from xlapy.frontend.primitives.basic import is_float

KEPT = ("dot_general",)


def with_residuals(body: Graph, num_consts: int, num_carry: int):
    invariant = {v.id for v in body.constvars}
    positions = {o.id: p for p, o in enumerate(body.outputs) if isinstance(o, Var)}
    outputs, avals, kept = list(body.outputs), list(body.out_avals), []
    for k, e in enumerate(body.eqns):
        if all(isinstance(x, Literal) or x.id in invariant for x in e.inputs):
            invariant.update(v.id for v in e.outputs)  # the same at every iteration
            continue
        if e.prim.name not in KEPT or len(e.outputs) != 1:
            continue
        v = e.outputs[0]
        if not is_float(v.aval.dtype):
            continue
        p = positions.get(v.id)
        if p is None or p < num_carry:  # a carry is not stacked: keep it as a new y
            p = len(outputs)
            positions[v.id] = p
            outputs.append(v)
            avals.append(v.aval)
        kept.append((k, p))
    if not kept:
        return body, []
    return Graph(body.invars, body.constvars, body.eqns, outputs, avals), kept
