"""custom_jvp and custom_vjp: functions with user-defined derivatives (as jax.custom_jvp /
jax.custom_vjp).

    @custom_jvp                            @custom_vjp
    def f(x, y): ...                       def g(x): ...
    @f.defjvp                              def g_fwd(x): return g(x), residuals
    def f_jvp(primals, tangents):          def g_bwd(residuals, ct): return (ct_x,)
        return f(*primals), t_out          g.defvjp(g_fwd, g_bwd)
    f.defjvps(df_dx, df_dy)  # or: one (t, ans, *primals) -> contribution per argument

Semantics (JAX's): outside any transformation the function simply runs. Under a trace the
call becomes one primitive (custom_jvp_call / custom_vjp_call) whose operands are the
values the function closed over (captured when its graph was traced) followed by the
flattened arguments, and whose parameters hold the traced graph and the rules:

  * jit (lowering) and eager evaluation run the function's own graph;
  * forward mode (jvp) of custom_jvp uses the rule (its primal output too); forward mode
    of custom_vjp is an error, as in JAX;
  * reverse mode of custom_vjp runs fwd in the forward pass, keeps its residuals on the
    tape and calls bwd with them; bwd's None entries are zero cotangents;
  * reverse mode of custom_jvp transposes the rule: the rule's tangent output is linear in
    the tangents, so its VJP with respect to the tangents (taken by the tape, at zero) is
    the transposed Jacobian. The rule runs again in the backward pass.

The primitive keeps its rules when it is traced into a graph (a scan body, a cond branch),
so re-evaluating the graph under grad still uses them. nondiff_argnums: those arguments
are static Python values (not traced, hashable or not), passed first to the rules as in
JAX. A custom function must not close over a value being differentiated (JAX refuses it
for custom_vjp; pass the value as an argument): xlapy raises an XlapyError for both.
Differentiable arguments and outputs are the inexact ones, floating point and complex (as
in JAX and the tape): a complex argument gets complex zero tangents and its cotangent.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import (ShapedArray, Tracer, active_traces, bind, get_aval,
                                 primitive)
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.graph import eval_graph, make_graph
from xlapy.frontend.lowering import lower_graph
from xlapy.frontend.primitives.basic import full, is_inexact
from xlapy.frontend.primitives.control import differentiated

# ---- shared machinery ---------------------------------------------------------------------------


def _resolve(fun, args, kwargs):
    """Keyword arguments bound to positions (JAX resolves them the same way)."""
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise XlapyError(f"{getattr(fun, '__name__', 'function')}: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise XlapyError(f"{fun.__name__}: keyword-only arguments are not supported by "
                         "custom_jvp / custom_vjp (as in JAX); pass them positionally")
    return tuple(ba.args)


class _Call:
    """One call of a custom function: its static and traced arguments, flattened."""

    def __init__(self, fun, nondiff_argnums, args, kwargs):
        self.fun = fun
        args = _resolve(fun, args, kwargs)
        n = len(args)
        self.nondiff = tuple(sorted({i % n for i in nondiff_argnums if -n <= i < n}))
        self.args = args
        self.static = [args[i] for i in self.nondiff]
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff)
        flat, self.in_tree = pytree.flatten(diff)
        self.flat = [x if isinstance(x, Tracer) else canonicalize_value(np.asarray(x))
                     for x in flat]
        self.avals = [get_aval(x) for x in self.flat]
        self.out_tree = None

    def release(self):
        """Forget the traced arguments (the rules, kept in a graph, need only the static
        ones and the avals)."""
        self.args = tuple(a if i in self.nondiff else None for i, a in enumerate(self.args))
        self.flat = None

    def full_args(self, flat_diff) -> list:
        diff = list(pytree.unflatten(self.in_tree, flat_diff))
        out, k = [], 0
        for i in range(len(self.args)):
            if i in self.nondiff:
                out.append(self.args[i])
            else:
                out.append(diff[k])
                k += 1
        return out

    def diff_tree(self, flat_diff) -> tuple:
        return pytree.unflatten(self.in_tree, flat_diff)

    def trace(self):
        """The graph of the function on the arguments' avals, and its captured values."""
        def flat_fun(*vals):
            out = self.fun(*self.full_args(list(vals)))
            leaves, self.out_tree = pytree.flatten(out)
            return leaves
        graph, consts, _ = make_graph(flat_fun, self.avals)
        for c in consts:
            if _differentiated(c):
                raise XlapyError(
                    f"the custom_jvp/custom_vjp function {_name(self.fun)} closes over a value "
                    "that is being differentiated; pass it as an argument instead (JAX "
                    "requires the same)")
        return graph, consts


def _differentiated(v) -> bool:
    """Whether v is (or wraps) a tracer of an active differentiation (tape or JVP)."""
    return differentiated(v, jvp=True, through_vmap=False)


def _name(fun) -> str:
    return getattr(fun, "__name__", repr(fun))


def _avals_str(avals) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _lower_inline(ctx, *operands, graph, num_consts, **_):
    return lower_graph(ctx, graph, list(operands[:num_consts]), list(operands[num_consts:]))


def _eval(*operands, graph, num_consts, **_):
    return [np.asarray(o) for o in eval_graph(graph, list(operands[:num_consts]),
                                              list(operands[num_consts:]))]


def _define(p):
    p.def_impl(_eval)
    p.def_abstract_eval(lambda *avals, graph, **_: list(graph.out_avals))
    p.def_lowering(_lower_inline)
    return p


custom_jvp_call_p = _define(primitive("custom_jvp_call", multiple_results=True))
custom_vjp_call_p = _define(primitive("custom_vjp_call", multiple_results=True))


def _zero_tangent(x):
    a = get_aval(x)
    if is_inexact(a.dtype):
        return full(a.shape, 0, a.dtype)
    from xlapy.frontend.forward import float0
    return np.zeros(a.shape, float0)


# ---- custom_jvp ---------------------------------------------------------------------------------

class custom_jvp:
    """A function with a custom JVP rule (see the module docstring)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out); tangents of
        integer arguments are float0 zeros. Returns jvp (usable as a decorator)."""
        if symbolic_zeros:
            raise XlapyError("custom_jvp.defjvp: symbolic_zeros=True is not supported; "
                             "tangents arrive as zeros")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One function per argument, jvp_i(t_i, primal_out, *primals) -> the contribution
        of argument i's tangent (None: that argument does not contribute)."""
        if self.nondiff_argnums:
            raise XlapyError("custom_jvp.defjvps does not support nondiff_argnums (as in "
                             "JAX); use defjvp")

        def rule(primals, tangents):
            ans = self(*primals)
            t = None
            for fn, ti, p in zip(jvps, tangents, primals):
                if fn is None or not is_inexact(get_aval(p).dtype):
                    continue
                c = fn(ti, ans, *primals)
                t = c if t is None else pytree.tree_map(lambda a, b: a + b, t, c)
            if t is None:
                t = pytree.tree_map(_zero_tangent, ans)
            return ans, t
        self.jvp = rule
        return rule

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise XlapyError(f"no JVP defined for the custom_jvp function {_name(self.fun)}: "
                             "use defjvp or defjvps")
        if not active_traces():
            return self.fun(*args, **kwargs)  # no transformation: the function itself
        call = _Call(self.fun, self.nondiff_argnums, args, kwargs)
        graph, consts = call.trace()
        rule = functools.partial(_run_jvp_rule, self, call, graph)
        outs = bind(custom_jvp_call_p, *consts, *call.flat, graph=graph,
                    num_consts=len(consts), rule=rule, name=_name(self.fun))
        call.release()
        return pytree.unflatten(call.out_tree, outs)


def _run_jvp_rule(cj, call, graph, primals, tangents):
    """The user's rule on flat primals and (materialized) tangents -> flat (outs, tangents),
    checked against the function's outputs."""
    res = cj.jvp(*call.static, call.diff_tree(primals), call.diff_tree(tangents))
    name = _name(cj.fun)
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise XlapyError(f"the custom JVP rule of {name} must return a pair (primal_out, "
                         f"tangent_out), got {type(res).__name__}")
    p_leaves, p_tree = pytree.flatten(res[0])
    t_leaves, t_tree = pytree.flatten(res[1])
    if p_tree != t_tree:
        raise XlapyError(f"the custom JVP rule of {name} must produce primal and tangent "
                         f"outputs with equal structures, got {p_tree} and {t_tree}")
    if p_tree != call.out_tree:
        raise XlapyError(f"the custom JVP rule of {name} must produce a primal output with "
                         f"the structure of the function's output {call.out_tree}, got {p_tree}")
    # (eager rules compute on NumPy arrays, whose promotion may widen a float: values of
    # the right shape are cast to the function's output dtypes)
    want = graph.out_avals
    p_leaves = [_cast_to(p, a, name, "primal output") for p, a in zip(p_leaves, want)]
    t_leaves = [_cast_to(t, a, name, "tangent") if is_inexact(a.dtype) else t
                for t, a in zip(t_leaves, want)]
    return p_leaves, t_leaves


def _cast_to(x, aval, name, what):
    from xlapy.frontend.primitives.basic import convert
    x = x if isinstance(x, Tracer) else canonicalize_value(np.asarray(x))
    a = get_aval(x)
    # widths may differ (NumPy's promotion), kinds may not: a complex value cast to a real
    # output would drop its imaginary part
    same_kind = (is_inexact(a.dtype) and is_inexact(aval.dtype)
                 and (np.dtype(a.dtype).kind == "c") == (np.dtype(aval.dtype).kind == "c"))
    if a.shape != aval.shape or (a.dtype != aval.dtype and not same_kind):
        raise XlapyError(f"the custom JVP rule of {name} returned a {what} {a} where the "
                         f"function's output is {aval}; they must have one shape and dtype")
    return convert(x, aval.dtype)


def _custom_jvp_vjp(cts, *operands, out, graph, num_consts, rule, name):
    # the rule's tangent output is linear in the tangents: its VJP at zero tangents is
    # the transposed Jacobian
    from xlapy.frontend.autodiff import vjp
    args = list(operands[num_consts:])
    fidx = [j for j, a in enumerate(args) if is_inexact(get_aval(a).dtype)]
    fo = [j for j, a in enumerate(graph.out_avals) if is_inexact(a.dtype)]
    if not fidx or not fo:
        return (None,) * len(operands)

    def tangent_out(*ts):
        full_t = [_zero_tangent(a) for a in args]
        for j, t in zip(fidx, ts):
            full_t[j] = t
        _, t_out = rule(args, full_t)
        return [t_out[j] for j in fo]

    _, fn = vjp(tangent_out, *[_zero_tangent(args[j]) for j in fidx])
    grads = fn([cts[j] for j in fo])
    result = [None] * len(operands)
    for j, g in zip(fidx, grads):
        result[num_consts + j] = g
    return tuple(result)


custom_jvp_call_p.def_vjp(_custom_jvp_vjp)


# ---- custom_vjp ---------------------------------------------------------------------------------

class custom_vjp:
    """A function with a custom VJP (see the module docstring)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False):
        """fwd(*args) -> (output, residuals); bwd(*nondiff_args, residuals, ct) -> a tuple
        with one cotangent per (non-static) argument, None for zero."""
        if symbolic_zeros:
            raise XlapyError("custom_vjp.defvjp: symbolic_zeros=True is not supported")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise XlapyError(f"no VJP defined for the custom_vjp function {_name(self.fun)}: "
                             "use defvjp")
        if not active_traces():
            return self.fun(*args, **kwargs)
        call = _Call(self.fun, self.nondiff_argnums, args, kwargs)
        graph, consts = call.trace()
        outs = bind(custom_vjp_call_p, *consts, *call.flat, graph=graph,
                    num_consts=len(consts), fwd=functools.partial(_run_fwd, self, call, graph),
                    bwd=functools.partial(_run_bwd, self, call), name=_name(self.fun))
        call.release()
        return pytree.unflatten(call.out_tree, outs)


def _run_fwd(cv, call, graph, flat_primals):
    res = cv.fwd(*call.full_args(flat_primals))
    name = _name(cv.fun)
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise XlapyError(f"the custom VJP fwd rule of {name} must return a pair (output, "
                         f"residuals), got {type(res).__name__}")
    leaves, tree = pytree.flatten(res[0])
    if tree != call.out_tree:
        raise XlapyError(f"the custom VJP fwd rule of {name} must return an output with the "
                         f"structure of the function's output {call.out_tree}, got {tree}")
    got = [get_aval(x) for x in leaves]
    if [(a.shape, a.dtype) for a in got] != [(a.shape, a.dtype) for a in graph.out_avals]:
        raise XlapyError(f"the custom VJP fwd rule of {name} returned {_avals_str(got)} but "
                         f"the function returns {_avals_str(graph.out_avals)}")
    return leaves, res[1]


def _run_bwd(cv, call, residuals, flat_cts):
    ct = pytree.unflatten(call.out_tree, flat_cts)
    g = cv.bwd(*call.static, residuals, ct)
    name = _name(cv.fun)
    diff = call.diff_tree([None] * call.in_tree.num_leaves)  # the arguments' structure
    if not isinstance(g, (tuple, list)) or len(g) != len(diff):
        raise XlapyError(f"the custom VJP bwd rule of {name} must return a tuple with one "
                         f"cotangent per argument of the primal function ({len(diff)}), got "
                         f"{pytree.flatten(g)[1] if g is not None else None}")
    flat = []
    for k, (gi, arg) in enumerate(zip(g, call.diff_tree(call.avals))):
        arg_leaves, arg_tree = pytree.flatten(arg, is_leaf=lambda x: isinstance(x, ShapedArray))
        if gi is None:
            flat.extend([None] * len(arg_leaves))
            continue
        gl = arg_tree.flatten_up_to(gi) if arg_tree.num_leaves else []
        for leaf, aa in zip(gl, arg_leaves):
            if leaf is None or not is_inexact(aa.dtype):
                flat.append(None)
                continue
            la = get_aval(leaf)
            if la.shape != aa.shape:
                raise XlapyError(f"the custom VJP bwd rule of {name} returned a cotangent of "
                                 f"shape {list(la.shape)} for argument {k} of shape "
                                 f"{list(aa.shape)}")
            flat.append(leaf)
    return flat


def _custom_vjp_tape_rule(primals, *, graph, num_consts, fwd, bwd, name):
    outs, residuals = fwd(list(primals[num_consts:]))
    return outs, dict(num_consts=num_consts, bwd=bwd, residuals=residuals, graph=graph)


def _custom_vjp_vjp(cts, *operands, out, num_consts, bwd, residuals, graph):
    from xlapy.frontend.primitives.basic import convert
    cts = [c if c is not None else full(a.shape, 0, a.dtype)
           for c, a in zip(cts, graph.out_avals)]
    grads = bwd(residuals, cts)
    args = operands[num_consts:]
    grads = [None if g is None else convert(g, get_aval(a).dtype) for g, a in zip(grads, args)]
    return (None,) * num_consts + tuple(grads)


custom_vjp_call_p.def_tape_rule(_custom_vjp_tape_rule)
custom_vjp_call_p.def_vjp(_custom_vjp_vjp)
