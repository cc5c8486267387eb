"""tf.cond and tf.case as the functional If op, and its gradient.

If     inputs [pred, captures...]; then/else Functions over the captures (each branch's
       FuncGraph captures what it uses; both get a placeholder for every capture); outputs
       the branch outputs, then the intermediates the gradient reads from each branch
       (the untaken branch's are zeros when compiled and None in the executor).
       Executor: only the taken branch runs. XLA: an HLO conditional (lax.cond).
IfGrad differentiates the taken branch (tf.gradients inside its FuncGraph), reading the
branch's forward values recorded by the If (stateful ones, such as random values, keep
their forward values).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, register_gradient, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.ops.control_flow_ops import (_align_captures, _grad_of_function,
                                                  _hook_only, _in_graph, _single, _zeros)
from xlapy.compat.v1.ops.functional import (FuncGraph, Function, executor_runner,
                                            output_avals, trace)
from xlapy.compat.v1.tensor_shape import TensorShape


def _merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def _if_infer(op):
    t, e = op.get_attr("then_fn"), op.get_attr("else_fn")
    n = op.get_attr("n_out")
    specs = [(a.dtype, _merge_shapes(a.shape, b.shape))
             for a, b in zip(t.outputs[:n], e.outputs[:n])]
    for branch, k in op.get_attr("inter"):
        x = (t if branch == 0 else e).outputs[k]
        specs.append((x.dtype, x.shape))
    return specs


def _if_executor(session, op):
    fns = (op.get_attr("then_fn"), op.get_attr("else_fn"))
    n = op.get_attr("n_out")

    def run(pred, *caps):
        b = 0 if bool(pred) else 1
        out = executor_runner(session, fns[b])(*caps)
        res = list(out[:n])
        for branch, k in op.get_attr("inter"):
            if branch == b:
                res.append(out[k])
            else:
                x = fns[branch].outputs[k]
                res.append(np.zeros(x.shape.as_list(), x.dtype.np)
                           if x.shape.is_fully_defined() else None)
        return res
    return run


def _if_lower(m, pred, *caps, then_fn=None, else_fn=None, n_out=0, inter=()):
    from xlapy import lax
    fns = (then_fn, else_fn)
    avals = [output_avals(f, caps) for f in fns]

    def branch(b):
        def f(*c):
            out = trace(fns[b], list(c), m)
            res = [m.asarray(o) for o in out[:n_out]]
            for br, k in inter:
                res.append(m.asarray(out[k]) if br == b else _zeros(m, avals[br][k]))
            return tuple(res)
        return f
    return _single(lax.cond(m.asarray(pred), branch(0), branch(1), *caps))


register_op("If", infer=_if_infer, attrs=("then_fn", "else_fn", "n_out", "inter"),
            stateful=True, lowering=_if_lower)(_hook_only)
get_op_def("If").extra.update(
    can_lower=lambda op: op.get_attr("then_fn").can_lower() and
    op.get_attr("else_fn").can_lower(),
    executor=_if_executor)


@register_gradient("If")
def _if_grad(op, *out_grads):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    n = op.get_attr("n_out")
    caps = list(op.inputs[1:])
    wanted = getattr(op, "_grad_wanted", None) or [True] * len(op.inputs)
    fo = [k for k in range(n) if op.outputs[k].dtype.is_floating]
    fcap = [j for j, c in enumerate(caps) if c.dtype.is_floating and wanted[1 + j]]
    if not fo or not fcap:
        return [None] * len(op.inputs)
    g_outs = [out_grads[k] if out_grads[k] is not None else zeros_like(op.outputs[k])
              for k in fo]
    inter = list(op.get_attr("inter"))
    grad_fns, acc_outs = [], []
    for b, fn in enumerate((op.get_attr("then_fn"), op.get_attr("else_fn"))):
        ys = [fn.outputs[k] for k in fo]
        xs = [fn.inputs[j] for j in fcap]
        g_phs, grads, acc = _grad_of_function(fn.graph, ys, xs,
                                              [op.outputs[k].shape for k in fo], fn.inputs)
        outs = []
        for t in acc:
            k = next((q for q, o in enumerate(fn.outputs) if o is t and q >= n), None)
            if k is None:
                fn.outputs.append(t)
                k = len(fn.outputs) - 1
            if (b, k) not in inter:
                inter.append((b, k))
                op.outputs.append(Tensor(op, len(op.outputs), t.dtype, t.shape))
            outs.append(op.outputs[n + inter.index((b, k))])
        op._set_attr("inter", tuple(inter))
        grad_fns.append(Function(fn.graph, [*g_phs, *acc, *fn.inputs], grads))
        acc_outs.append(outs)
    gop = make_op("IfGrad", [op.inputs[0], *g_outs, *acc_outs[0], *acc_outs[1], *caps],
                  {"then_grad": grad_fns[0], "else_grad": grad_fns[1], "n_g": len(fo),
                   "n_then": len(acc_outs[0]), "fcap": tuple(fcap), "forward": op},
                  name="IfGrad")
    result: list = [None] * len(op.inputs)
    for j, g in zip(fcap, gop.outputs):
        result[1 + j] = g
    return result


def _if_grad_infer(op):
    caps = op.get_attr("forward").inputs[1:]
    return [(caps[j].dtype, caps[j].shape) for j in op.get_attr("fcap")]


def _if_grad_split(ins, n_g, n_then, n_else):
    g = list(ins[:n_g])
    ta = list(ins[n_g:n_g + n_then])
    ea = list(ins[n_g + n_then:n_g + n_then + n_else])
    caps = list(ins[n_g + n_then + n_else:])
    return g, ta, ea, caps


def _if_grad_executor(session, op):
    fns = (op.get_attr("then_grad"), op.get_attr("else_grad"))
    n_g, n_then = op.get_attr("n_g"), op.get_attr("n_then")
    n_else = len(fns[1].inputs) - n_g - len(op.get_attr("forward").inputs[1:])

    def run(pred, *ins):
        g, ta, ea, caps = _if_grad_split(ins, n_g, n_then, n_else)
        b = 0 if bool(pred) else 1
        return executor_runner(session, fns[b])(*g, *(ta if b == 0 else ea), *caps)
    return run


def _if_grad_lower(m, pred, *ins, then_grad=None, else_grad=None, n_g=0, n_then=0, fcap=(),
                   forward=None):
    from xlapy import lax
    n_caps = len(forward.inputs) - 1
    n_else = len(ins) - n_g - n_then - n_caps
    g, ta, ea, caps = _if_grad_split(ins, n_g, n_then, n_else)
    k1, k2 = len(g), len(g) + len(ta)
    k3 = k2 + len(ea)

    def branch(fn, lo, hi):
        def f(*a):
            a = list(a)
            return tuple(m.asarray(o) for o in trace(fn, a[:k1] + a[lo:hi] + a[k3:], m))
        return f
    return _single(lax.cond(m.asarray(pred), branch(then_grad, k1, k2),
                            branch(else_grad, k2, k3), *g, *ta, *ea, *caps))


register_op("IfGrad", infer=_if_grad_infer, stateful=True,
            attrs=("then_grad", "else_grad", "n_g", "n_then", "fcap", "forward"),
            lowering=_if_grad_lower)(_hook_only)
get_op_def("IfGrad").extra.update(
    can_lower=lambda op: op.get_attr("then_grad").can_lower() and
    op.get_attr("else_grad").can_lower() and get_op_def("If").extra["can_lower"](
        op.get_attr("forward")),
    executor=_if_grad_executor)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """tf.cond: true_fn() if pred else false_fn(); only the taken branch runs."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or false_fn is None:
        raise InvalidTypeError("cond(): true_fn and false_fn arguments are both required")
    if not callable(true_fn) or not callable(false_fn):
        raise InvalidTypeError("true_fn and false_fn must be callable")
    if isinstance(pred, (bool, np.bool_)):
        raise InvalidTypeError("pred must not be a Python bool")
    outer = get_default_graph()
    pred = convert_to_tensor(pred)
    if pred.dtype != dtypes.bool or pred.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"pred of tf.cond must be a boolean scalar, got "
                                   f"{pred.dtype.name} of shape {pred.shape}")
    with outer.name_scope(name or "cond") as scope:
        results, fgs = [], []
        for label, fn in (("true", true_fn), ("false", false_fn)):
            fg = FuncGraph(scope + label, outer)
            with fg.as_default():
                out = fn()
            results.append(out)
            fgs.append(fg)
        try:
            nest.assert_same_structure(results[0], results[1], check_types=False)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"true_fn and false_fn must return the same nested "
                                       f"structure: {e}") from None
        flats = []
        for fg, out in zip(fgs, results):
            with fg.as_default():
                flats.append([_in_graph(fg, v) for v in nest.flatten(out)])
        for a, b in zip(*flats):
            if a.dtype != b.dtype:
                raise InvalidTypeError(f"Outputs of true_fn and false_fn must have the same "
                                       f"type: {a.dtype.name}, {b.dtype.name}")
        caps = _align_captures(fgs)
        fns = [Function(fg, [fg.captures[t] for t in caps], flat)
               for fg, flat in zip(fgs, flats)]
        op = make_op("If", [pred, *caps], {"then_fn": fns[0], "else_fn": fns[1],
                                           "n_out": len(flats[0]), "inter": ()}, name="If")
    outs = op.outputs[:len(flats[0])]
    packed = nest.pack_sequence_as(results[0], outs)
    if not strict and isinstance(packed, list) and len(packed) == 1:
        return packed[0]
    return packed


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """tf.case: the fn of the first true predicate (nested conds), else default."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    if not pairs:
        if default is None:
            raise InvalidArgumentError("tf.case needs at least one (pred, fn) pair or a "
                                       "default")
        return default()
    for p, f in pairs:
        if not callable(f):
            raise InvalidTypeError(f"fn for pred {p} must be callable")
    if default is None:
        pairs, last = pairs[:-1], pairs[-1][1]
    else:
        last = default

    def build(k):
        if k == len(pairs):
            return last()
        p, f = pairs[k]
        return cond(p, f, lambda: build(k + 1), strict=strict)
    with get_default_graph().name_scope(name):
        return build(0)
