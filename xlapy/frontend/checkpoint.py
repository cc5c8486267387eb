"""checkpoint (remat): recompute a function's intermediates in the backward pass instead of
keeping them (as jax.checkpoint / jax.remat).

    f = checkpoint(f, prevent_cse=True, policy=None, static_argnums=())

Under a trace, a call of f becomes one checkpoint primitive whose operands are the values
f closed over followed by its flattened arguments, and whose parameter is f's graph.
Evaluated, jitted (lowered inline) or differentiated forward (jvp), it is just the graph.
In reverse mode the tape keeps only the operands and outputs (and what the policy saves):
the VJP evaluates the graph again under a new tape and differentiates that. With
prevent_cse (the default), the recomputation reads its operands through an
optimization_barrier, so under jit XLA's CSE cannot merge it with the forward pass.

Policies (checkpoint_policies, a subset of JAX's): nothing_saveable (the default: recompute
everything), everything_saveable (keep everything: no recomputation), dots_saveable /
checkpoint_dots (keep the results of dot_general), dots_with_no_batch_dims_saveable /
checkpoint_dots_with_no_batch_dims (of dot_generals without batch dimensions). A policy is
policy(prim, *avals, **params) -> bool, so a user function works too. Saved values are
recorded on the backward pass's tape with their saved outputs (their inputs are still
recomputed, as the VJP of a dot needs them).
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import active_traces, bind, get_aval, primitive
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.graph import Literal, make_graph
from xlapy.frontend.lowering import lower_graph
from xlapy.frontend.primitives.basic import is_float

# ---- optimization_barrier -----------------------------------------------------------------------

optimization_barrier_p = primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.def_impl(lambda *xs: [np.asarray(x) for x in xs])
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))


@optimization_barrier_p.def_lowering
def _barrier_lower(ctx, *xs):
    b = ctx.b
    t = b.optimization_barrier(b.tuple(list(xs)))
    return [b.get_tuple_element(t, i) for i in range(len(xs))]


optimization_barrier_p.def_vjp(lambda cts, *xs, out: tuple(cts))       # the identity


def optimization_barrier(xs: list) -> list:
    """The values unchanged; under jit XLA may not move computations across the barrier
    or merge them with computations on the original values."""
    return list(bind(optimization_barrier_p, *xs)) if xs else []


# ---- policies ---------------------------------------------------------------------------------


def _no_batch(prim, *avals, **params) -> bool:
    return prim.name == "dot_general" and not params["dimension_numbers"][1][0]


class checkpoint_policies:
    """Which intermediates a checkpointed function keeps for the backward pass."""

    everything_saveable = staticmethod(lambda prim, *avals, **params: True)
    nothing_saveable = staticmethod(lambda prim, *avals, **params: False)
    dots_saveable = staticmethod(lambda prim, *avals, **params: prim.name == "dot_general")
    checkpoint_dots = dots_saveable
    dots_with_no_batch_dims_saveable = staticmethod(_no_batch)
    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


# ---- the primitive ----------------------------------------------------------------------------

checkpoint_p = primitive("checkpoint", multiple_results=True)


@checkpoint_p.def_impl
def _impl(*operands, graph, num_consts, prevent_cse, policy):
    return [np.asarray(o) for o in _eval(graph, operands, num_consts)]


checkpoint_p.def_abstract_eval(lambda *avals, graph, **_: list(graph.out_avals))


@checkpoint_p.def_lowering
def _lower(ctx, *operands, graph, num_consts, prevent_cse, policy):
    return lower_graph(ctx, graph, list(operands[:num_consts]), list(operands[num_consts:]))


def _eval(graph, operands, num_consts, saved=None, on_saved=None, collect=None):
    """Evaluate the graph with bind. saved: eqn index -> outputs to use instead of
    computing them (on_saved(eqn, inputs, outs) -> outputs); collect(index, eqn, outs)
    sees every computed equation."""
    env = {}
    for v, x in zip(graph.constvars + graph.invars, operands):
        env[v.id] = x

    def read(a):
        return a.value if isinstance(a, Literal) else env[a.id]

    for k, e in enumerate(graph.eqns):
        ins = [read(x) for x in e.inputs]
        if saved is not None and k in saved:
            out = on_saved(e, ins, saved[k])
        else:
            out = bind(e.prim, *ins, **e.params)
            if collect is not None:
                collect(k, e, out)
        for v, o in zip(e.outputs, out if e.prim.multiple_results else [out]):
            env[v.id] = o
    return [read(o) for o in graph.outputs]


@checkpoint_p.def_tape_rule
def _tape_rule(primals, *, graph, num_consts, prevent_cse, policy):
    params = dict(graph=graph, num_consts=num_consts, prevent_cse=prevent_cse, policy=policy)
    if policy is None:
        return bind(checkpoint_p, *primals, **params), dict(params, saved=None)
    saved = {}

    def collect(k, e, out):
        if policy(e.prim, *[x.aval for x in e.inputs], **e.params):
            saved[k] = out
    outs = _eval(graph, primals, num_consts, collect=collect)
    return outs, dict(params, saved=saved)


@checkpoint_p.def_vjp
def _vjp(cts, *operands, out, graph, num_consts, prevent_cse, policy, saved):
    from xlapy.frontend.autodiff import TapeTrace, vjp
    ops = optimization_barrier(list(operands)) if prevent_cse else list(operands)
    fidx = [j for j, o in enumerate(ops) if is_float(get_aval(o).dtype)]
    fo = [j for j, a in enumerate(graph.out_avals) if is_float(a.dtype)]

    def on_saved(e, ins, outs):  # a saved equation: recorded with its kept outputs
        trace = active_traces()[-1]
        if not isinstance(trace, TapeTrace):
            raise XlapyError("internal error: checkpoint's recomputation is not on a tape")
        return trace.record(e.prim, ins, outs, e.params)

    def recompute(*fvals):
        full = list(ops)
        for j, v in zip(fidx, fvals):
            full[j] = v
        outs = _eval(graph, full, num_consts, saved, on_saved)
        return [outs[j] for j in fo]

    _, fn = vjp(recompute, *[ops[j] for j in fidx])
    grads = fn([cts[j] for j in fo])
    result = [None] * len(operands)
    for j, g in zip(fidx, grads):
        result[j] = g
    return tuple(result)


# ---- the API ----------------------------------------------------------------------------------

def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """fun, recomputed in the backward pass instead of storing its intermediates (see the
    module docstring). Usable as @checkpoint or @checkpoint(policy=...)."""
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if policy is checkpoint_policies.nothing_saveable:
        policy = None
    if policy is not None and not callable(policy):
        raise XlapyError(f"checkpoint: policy must be a function (prim, *avals, **params) -> "
                         f"bool such as xlapy.checkpoint_policies.dots_saveable, got {policy!r}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        if not active_traces() or policy is checkpoint_policies.everything_saveable:
            return fun(*args, **kwargs)  # nothing to recompute
        n = len(args)
        nums = {i % n for i in static if -n <= i < n}
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        flat, in_tree = pytree.flatten((dyn, kwargs))
        flat = [canonicalize_value(np.asarray(x)) if not hasattr(x, "aval") else x
                for x in flat]
        out_tree = []

        def flat_fun(*vals):
            d, kw = pytree.unflatten(in_tree, list(vals))
            it = iter(d)
            full = [args[i] if i in nums else next(it) for i in range(n)]
            leaves, tree = pytree.flatten(fun(*full, **kw))
            out_tree.append(tree)
            return leaves

        graph, consts, _ = make_graph(flat_fun, [get_aval(x) for x in flat])
        outs = bind(checkpoint_p, *consts, *flat, graph=graph, num_consts=len(consts),
                    prevent_cse=bool(prevent_cse), policy=policy)
        return pytree.unflatten(out_tree[0], outs)

    return remat_fun


remat = checkpoint
