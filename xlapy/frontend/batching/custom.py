"""Batching rules of custom_derivatives.py and checkpoint.py (as JAX batches custom_jvp /
custom_vjp: the batched call is the same kind of call over batched functions).

Every rule moves the batch axes of the batched operands first (unbatched ones stay
unbatched) and binds the primitive again, with its graph re-traced under a BatchTrace of
the same frame and every output batched along axis 0:

  checkpoint            a checkpoint of the batched graph (still recomputed in reverse mode)
  custom_jvp_call       the batched graph; the rule batched over primals and tangents (a
                        tangent is batched where its primal is)
  custom_vjp_call       the batched graph; fwd batched (outputs and residual leaves along
                        axis 0), bwd batched over the residuals and cotangents (its zero
                        cotangents materialized)
  optimization_barrier  the values pass through with their batch dims
"""

from __future__ import annotations

import functools

from xlapy.frontend import pytree
from xlapy.frontend.batching.trace import NOT_MAPPED, apply_batched, bdim_to_front, moveaxis
from xlapy.frontend.checkpoint import checkpoint_p, optimization_barrier
from xlapy.frontend.checkpoint import optimization_barrier_p
from xlapy.frontend.core import ShapedArray, bind, get_aval
from xlapy.frontend.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from xlapy.frontend.graph import eval_graph, make_graph
from xlapy.frontend.primitives.basic import full, is_float
from xlapy.frontend.primitives.shapes import reduce_sum


def _front(vals, dims):
    return [v if d is NOT_MAPPED else moveaxis(v, d, 0) for v, d in zip(vals, dims)]


def _in_dims(dims):
    return [NOT_MAPPED if d is NOT_MAPPED else 0 for d in dims]


def _batched(frame, fn, vals, dims) -> list:
    """fn run on the batch (inputs with batch axes first where dims say), every output
    batched along axis 0."""
    outs, odims = apply_batched(frame, fn, vals, dims)
    return [bdim_to_front(o, d, frame.size) for o, d in zip(outs, odims)]


def _graph_fn(graph, num_consts):
    return lambda *v: eval_graph(graph, list(v[:num_consts]), list(v[num_consts:]))


def _rebind(prim, fn, ops, **params):
    """Bind prim over fn's graph: operands (fn's captured values, ops)."""
    graph, consts, _ = make_graph(fn, [get_aval(o) for o in ops])
    out = bind(prim, *consts, *ops, graph=graph, num_consts=len(consts), **params)
    return out, [0] * len(out)


def _checkpoint_rule(frame, vals, dims, *, graph, num_consts, prevent_cse, policy):
    ops, d0 = _front(vals, dims), _in_dims(dims)
    fn = lambda *o: _batched(frame, _graph_fn(graph, num_consts), list(o), d0)
    return _rebind(checkpoint_p, fn, ops, prevent_cse=prevent_cse, policy=policy)


def _custom_jvp_rule(frame, vals, dims, *, graph, num_consts, rule, name):
    ops, d0 = _front(vals, dims), _in_dims(dims)
    fn = lambda *o: _batched(frame, _graph_fn(graph, num_consts), list(o), d0)
    return _rebind(custom_jvp_call_p, fn, ops, rule=functools.partial(
        _batched_jvp_rule, frame, rule, num_consts, d0), name=name)


def _batched_jvp_rule(frame, rule, old_consts, d0, primals, tangents):
    # the new call's operands are (its own captured values, the old call's consts, args):
    # the user's rule takes the args; their tangents are batched where they are
    n = len(primals)
    args_d = d0[old_consts:]
    k = n - len(args_d)  # the leading operands that are not the rule's arguments
    args, targs = list(primals[k:]), list(tangents[k:])

    def run(*v):
        p_out, t_out = rule(list(v[:len(args)]), list(v[len(args):]))
        # (integer outputs' float0 tangents: zeros of the output's dtype, dropped later)
        t_out = [t if is_float(get_aval(p).dtype) else full(get_aval(p).shape, 0,
                                                            get_aval(p).dtype)
                 for p, t in zip(p_out, t_out)]
        return list(p_out) + t_out
    outs = _batched(frame, run, args + targs, args_d + args_d)
    m = len(outs) // 2
    return outs[:m], outs[m:]


def _custom_vjp_rule(frame, vals, dims, *, graph, num_consts, fwd, bwd, name):
    ops, d0 = _front(vals, dims), _in_dims(dims)
    fn = lambda *o: _batched(frame, _graph_fn(graph, num_consts), list(o), d0)
    arg_avals = [_unbatched_aval(v, d) for v, d in zip(vals, dims)][num_consts:]
    return _rebind(custom_vjp_call_p, fn, ops,
                   fwd=functools.partial(_batched_fwd, frame, fwd, d0[num_consts:]),
                   bwd=functools.partial(_batched_bwd, frame, bwd, num_consts, arg_avals,
                                         d0[num_consts:]),
                   name=name)


def _unbatched_aval(v, d):
    a = get_aval(v)
    if d is NOT_MAPPED:
        return a
    return ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype)


def _batched_fwd(frame, fwd, args_d, flat_primals):
    args = list(flat_primals[len(flat_primals) - len(args_d):])
    res_tree = []

    def run(*v):
        outs, res = fwd(list(v))
        leaves, tree = pytree.flatten(res)
        res_tree.append(tree)
        return list(outs) + leaves
    outs = _batched(frame, run, args, args_d)
    n_res = res_tree[0].num_leaves
    n_out = len(outs) - n_res
    return outs[:n_out], (res_tree[0], outs[n_out:])


def _batched_bwd(frame, bwd, old_consts, arg_avals, args_d, residuals, flat_cts):
    # cotangents for the new call's arguments: the old call's consts (none), then its args
    # (summed over the batch for an argument that is the same for every member)
    res_tree, res_leaves = residuals
    nr = len(res_leaves)

    def run(*v):
        grads = bwd(pytree.unflatten(res_tree, list(v[:nr])), list(v[nr:]))
        return [full(a.shape, 0, a.dtype) if g is None else g
                for g, a in zip(grads, arg_avals)]
    grads = _batched(frame, run, list(res_leaves) + list(flat_cts), [0] * (nr + len(flat_cts)))
    grads = [g if d is not NOT_MAPPED else reduce_sum(g, (0,)) for g, d in zip(grads, args_d)]
    return [None] * old_consts + grads


def _barrier_rule(frame, vals, dims):
    return optimization_barrier(list(vals)), list(dims)


checkpoint_p.def_batch(_checkpoint_rule)
custom_jvp_call_p.def_batch(_custom_jvp_rule)
custom_vjp_call_p.def_batch(_custom_vjp_rule)
optimization_barrier_p.def_batch(_barrier_rule)
