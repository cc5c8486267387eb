"""Batching rules of while, cond and scan (primitives/control.py).

Their bodies are graphs; a rule re-traces a body under a BatchTrace of the same frame
(`_run`), so every primitive inside is batched by its own rule and collectives inside see
the vmap's axis name. Which loop carries are batched is a fixpoint, as in JAX: a carry is
batched when its initial value is, or when the body makes it batched given the others
(start from the batched inputs, re-trace until nothing new turns batched); batched carries
keep their batch axis first, unbatched ones stay unbatched (no copies per member).

  while   predicate unbatched: one while over the batched body. Predicate batched (members
          stop at different trip counts): every carry is batched, the loop runs while any
          member's predicate holds, and a member whose predicate is false keeps its carry
          (a select per carry), as JAX does.
  scan    batched xs get their batch axis second (axis 0 is the scanned one), so each step
          reads [n, ...] slices; batched ys and saved carries come out [length, n, ...].
  cond    index unbatched: one cond over the batched branches (their outputs batched when
          any branch's is). Index batched: every branch runs on the whole batch and each
          member selects its branch's results (select per output; an int index out of
          range selects the last branch, as HLO's conditional runs it).
"""

from __future__ import annotations

from xlapy.errors import XlapyError
from xlapy.frontend.core import ShapedArray, bind
from xlapy.frontend.graph import eval_graph, make_graph
from xlapy.frontend.primitives import basic
from xlapy.frontend.primitives import control as C
from xlapy.frontend.primitives.collectives import graph_axis_owner
from xlapy.frontend.primitives.shapes import reduce_or
from xlapy.frontend.batching.trace import (NOT_MAPPED, apply_batched, bdim_to_front, moveaxis,
                                           shape_of)


# a loop or cond whose body uses a collective over a vmap axis goes to that vmap's rule
# even when no operand is batched (see primitives/collectives.py)
for _p in (C.while_p, C.cond_p, C.scan_p):
    _p.axis_trace = graph_axis_owner


def _run(graph, frame, vals, batched):
    """Evaluate graph (inputs: constvars then invars) on the batch: `vals` hold batched
    inputs with their batch axis first. Returns (outputs, their batch dims)."""
    nc = len(graph.constvars)
    dims = [0 if b else NOT_MAPPED for b in batched]
    return apply_batched(frame, lambda *t: eval_graph(graph, list(t[:nc]), list(t[nc:])),
                         vals, dims)


def _avals(graph, batched, n):
    avals = [v.aval for v in graph.constvars + graph.invars]
    return [ShapedArray((n,) + a.shape, a.dtype, a.weak_type) if b else a
            for a, b in zip(avals, batched)]


def _which_batched(graph, frame, batched) -> list[bool]:
    """Which outputs of graph are batched when the inputs flagged in `batched` are."""
    found: list[bool] = []

    def probe(*vals):
        outs, dims = _run(graph, frame, vals, batched)
        found[:] = [d is not NOT_MAPPED for d in dims]
        return outs
    make_graph(probe, _avals(graph, batched, frame.size))
    return found


def _force(vals, dims, want, n):
    """Outputs with the batch axis first where `want` (broadcast if unmapped), else as is."""
    out = []
    for v, d, w in zip(vals, dims, want):
        if w:
            out.append(bdim_to_front(v, d, n))
        elif d is not NOT_MAPPED:
            raise XlapyError("internal error: a carry the fixpoint left unbatched came "
                                 "out of the body batched")
        else:
            out.append(v)
    return out


def _front(vals, dims):
    return [moveaxis(v, d, 0) if d is not NOT_MAPPED else v for v, d in zip(vals, dims)]


def _carry_fixpoint(graph, frame, const_b, carry_b, rest_b=()):
    nk = len(carry_b)
    carry_b = list(carry_b)
    while True:
        out_b = _which_batched(graph, frame, list(const_b) + carry_b + list(rest_b))[:nk]
        new = [a or b for a, b in zip(carry_b, out_b)]
        if new == carry_b:
            return carry_b
        carry_b = new


def _select_members(pred, new, old):
    """Per member (axis 0): new where pred, else old."""
    return basic.select(basic.broadcast_in_dim(pred, shape_of(new), (0,)), new, old)


# ---- while ----------------------------------------------------------------------------------


@C.while_p.def_batch
def _while(frame, vals, dims, cond_graph, body_graph, cond_nconsts, body_nconsts):
    n = frame.size
    n0, n1 = cond_nconsts, cond_nconsts + body_nconsts
    cc, bc, init = _front(vals[:n0], dims[:n0]), _front(vals[n0:n1], dims[n0:n1]), vals[n1:]
    cc_b = [d is not NOT_MAPPED for d in dims[:n0]]
    bc_b = [d is not NOT_MAPPED for d in dims[n0:n1]]
    k_b = _carry_fixpoint(body_graph, frame, bc_b, [d is not NOT_MAPPED for d in dims[n1:]])
    pred_b = _which_batched(cond_graph, frame, cc_b + k_b)[0]
    if pred_b:
        k_b = [True] * len(k_b)
    init = [bdim_to_front(v, d, n) if b else v for v, d, b in zip(init, dims[n1:], k_b)]

    def pred(carry):
        (p,), (pd,) = _run(cond_graph, frame, cc + list(carry), cc_b + k_b)
        return p, pd

    def cond_fn(*carry):
        p, pd = pred(carry)
        return p if pd is NOT_MAPPED else reduce_or(p, (pd,))

    def body_fn(*carry):
        outs, odims = _run(body_graph, frame, bc + list(carry), bc_b + k_b)
        new = _force(outs, odims, k_b, n)
        if pred_b:  # members whose predicate is false keep their carry
            p = bdim_to_front(*pred(carry), n)
            new = [_select_members(p, a, c) for a, c in zip(new, carry)]
        return new

    outs = C.while_flat(cond_fn, body_fn, init)
    return outs, [0 if b else NOT_MAPPED for b in k_b]


# ---- scan -----------------------------------------------------------------------------------


@C.scan_p.def_batch
def _scan(frame, vals, dims, body, num_consts, num_carry, length, reverse, save_carries):
    n, nc, nk = frame.size, num_consts, num_carry
    consts = _front(vals[:nc], dims[:nc])
    c_b = [d is not NOT_MAPPED for d in dims[:nc]]
    x_dims = dims[nc + nk:]
    x_b = [d is not NOT_MAPPED for d in x_dims]
    xs = [moveaxis(v, d, 1) if d is not NOT_MAPPED else v
          for v, d in zip(vals[nc + nk:], x_dims)]
    k_b = _carry_fixpoint(body, frame, c_b, [d is not NOT_MAPPED for d in dims[nc:nc + nk]],
                          x_b)
    init = [bdim_to_front(v, d, n) if b else v
            for v, d, b in zip(vals[nc:nc + nk], dims[nc:nc + nk], k_b)]
    ys_b: list[bool] = []

    def step(*v):
        outs, odims = _run(body, frame, consts + list(v), c_b + k_b + x_b)
        ys_b[:] = [d is not NOT_MAPPED for d in odims[nk:]]
        return _force(outs[:nk], odims[:nk], k_b, n) + _front(outs[nk:], odims[nk:])

    avals = [basic.aval_of(c) for c in init] + [
        ShapedArray(basic.aval_of(x).shape[1:], basic.aval_of(x).dtype) for x in xs]
    graph, gconsts, _ = make_graph(step, avals)
    outs = bind(C.scan_p, *gconsts, *init, *xs, body=graph, num_consts=len(gconsts),
                num_carry=nk, length=length, reverse=reverse, save_carries=save_carries)
    out_dims = ([0 if b else NOT_MAPPED for b in k_b] + [1 if b else NOT_MAPPED for b in ys_b]
                + ([1 if b else NOT_MAPPED for b in k_b] if save_carries else []))
    return outs, out_dims


# ---- cond -----------------------------------------------------------------------------------


@C.cond_p.def_batch
def _cond(frame, vals, dims, branches, const_counts):
    n = frame.size
    index, bi = vals[0], dims[0]
    nconsts = sum(const_counts)
    args, adims = _front(vals[1:], dims[1:]), dims[1:]
    a_b = [d is not NOT_MAPPED for d in adims]
    starts = [sum(const_counts[:k]) for k in range(len(branches))]

    def branch_inputs(k, ops, ops_b):
        s, c = starts[k], const_counts[k]
        return list(args[s:s + c]) + list(ops), a_b[s:s + c] + list(ops_b)

    ops, ops_b = args[nconsts:], a_b[nconsts:]
    if bi is NOT_MAPPED:
        out_b = [False] * len(branches[0].outputs)
        for k, g in enumerate(branches):
            _, flags = branch_inputs(k, ops, ops_b)
            out_b = [a or b for a, b in zip(out_b, _which_batched(g, frame, flags))]

        def make(k):
            def fn(*o):
                outs, odims = _run(branches[k], frame, *branch_inputs(k, o, ops_b))
                return _force(outs, odims, out_b, n)
            return fn
        outs = C.cond_flat(index, [make(k) for k in range(len(branches))], list(ops))
        return outs, [0 if b else NOT_MAPPED for b in out_b]
    # a batched index: run every branch on the whole batch, select per member
    results = []
    for k, g in enumerate(branches):
        outs, odims = _run(g, frame, *branch_inputs(k, ops, ops_b))
        results.append([bdim_to_front(o, d, n) for o, d in zip(outs, odims)])
    idx = bdim_to_front(index, bi, n)
    if basic.aval_of(idx).dtype == bool:
        picked = [_select_members(idx, t, f) for f, t in zip(results[0], results[1])]
    else:
        picked = results[-1]
        for k in reversed(range(len(branches) - 1)):
            is_k = basic.eq(idx, basic.full((n,), k, basic.aval_of(idx).dtype))
            picked = [_select_members(is_k, r, p) for r, p in zip(results[k], picked)]
    return picked, [0] * len(picked)
