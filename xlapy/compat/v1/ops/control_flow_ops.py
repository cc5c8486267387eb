"""Control flow as functional ops: While (tf.while_loop, map_fn, scan, dynamic_rnn) and its
gradient.

While  inputs  [max_iter, carry..., xs..., captures...]
       body    (i, carry..., x_i..., captures...) -> (carry'..., ys...)
       cond    (i, carry..., captures...) -> bool scalar, or None (run max_iter times)
       outputs [n (int32: iterations run), final carry..., stacked ys...]
  A generalized scan: the loop runs while i < max_iter (when max_iter >= 0) and cond
  holds; each iteration reads row i of every sliced input x and appends one row to every
  stacked output y ([max_iter, ...]; rows past n stay zero). Executor: a Python loop over
  the body's NumPy steps. XLA: one HLO while loop (lax.while_loop) whose body is the
  traced body function, stacked outputs as dynamic-update-slices into buffers, so a whole
  recurrent training step stays one cluster. Stacked outputs and sliced inputs need the
  number of rows at compile time: max_iter is a compile-time-constant input.

WhileGrad runs the body's gradient backwards from i = n-1 to 0: the gradient function is
built once, symbolically, inside the body's FuncGraph (tf.gradients of the body outputs
with respect to its inputs). The forward values it needs are read, not recomputed: each
one becomes an extra stacked output of the forward While (TF 2's accumulators), so random
ops in the body keep their forward values. Gradients with respect to sliced inputs come
out stacked; those with respect to captures (an RNN's weights) are summed.

If, IfGrad, tf.cond and tf.case are in cond_ops.py (same helpers).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.errors import (InvalidArgumentError, InvalidTypeError)
from xlapy.compat.v1.framework import Operation, Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make_op
from xlapy.compat.v1.ops.functional import (FuncGraph, Function, executor_runner,
                                            output_avals, placeholder_in, trace)
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape
from xlapy.errors import LoweringError

# ---- helpers -------------------------------------------------------------------------------


def _in_graph(fg: FuncGraph, value, dtype=None) -> Tensor:
    """`value` (a function's result) as a tensor of fg, capturing outer tensors."""
    if isinstance(value, Operation):
        raise InvalidTypeError(f"function '{fg.name}' returned the operation {value.name}; "
                               "return tensors (control-only branches are not supported)")
    t = convert_to_tensor(value, dtype=dtype)
    return fg.capture(t) if t.graph is not fg else t


def _align_captures(fgs: list) -> list:
    """The union of the functions' captured outer tensors; every function gets a
    placeholder for each, so all take the same capture list."""
    caps = []
    for fg in fgs:
        for t in fg.captured:
            if t not in caps:
                caps.append(t)
    for fg in fgs:
        for t in caps:
            fg.capture(t)
    return caps


def _static_int(t: Tensor):
    v = constant_value(t)
    return None if v is None or int(v) < 0 else int(v)


def _accumulators(fg: FuncGraph, grads: list, direct: set, new_ops: set) -> list:
    """The forward tensors of fg the gradient ops read (stopping at `direct` tensors, which
    are fed as they are): each becomes a value the forward run records, so nothing of the
    body is recomputed and random values are the forward ones. Constants are recomputed.
    Compiled, a recorded value is a stacked loop output, written row by row in place."""
    acc: list = []
    seen: set = set()
    stack = []

    def reach(t):
        if t is None or t in direct or t in acc:
            return
        if t.op in new_ops:
            stack.append(t.op)
        elif t.op.type != "Const":
            acc.append(t)

    for g in grads:
        reach(g)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        for t in op.inputs:
            reach(t)
        stack.extend(c for c in op.control_inputs if c in new_ops)
    return acc


def _grad_of_function(fg: FuncGraph, ys: list, xs: list, g_shapes: list, direct: list):
    """Symbolic gradients of ys with respect to xs inside fg. Returns (g placeholders,
    grads (zeros where no path), forward tensors to accumulate)."""
    from xlapy.compat.v1.gradients import gradients
    from xlapy.compat.v1.ops.array_ops import zeros_like
    mark = len(fg._ops)
    with fg.as_default(), fg.name_scope(None):
        g_phs = [placeholder_in(fg, y.dtype, s, "grad_in") for y, s in zip(ys, g_shapes)]
        grads = gradients(ys, xs, grad_ys=g_phs) if ys else [None] * len(xs)
        grads = [zeros_like(x) if g is None else g for g, x in zip(grads, xs)]
    new_ops = set(fg._ops[mark:])
    acc = _accumulators(fg, grads, set(direct) | set(g_phs), new_ops)
    return g_phs, grads, acc


# ---- While -----------------------------------------------------------------------------------

def _parts(ins, nc, nx):
    """(carry, sliced inputs, captures) of a While's inputs after max_iter."""
    return list(ins[:nc]), list(ins[nc:nc + nx]), list(ins[nc + nx:])


def _while_infer(op):
    body = op.get_attr("body")
    nc = op.get_attr("n_carry")
    n = op.get_attr("static_iters")
    specs = [(dtypes.int32, TensorShape([]))]
    specs += [(t.dtype, t.shape) for t in body.inputs[1:1 + nc]]
    specs += [(y.dtype, TensorShape([n]).concatenate(y.shape)) for y in body.outputs[nc:]]
    return specs


def _hook_only(m, *args, **kw):
    """The kernel of ops calling functions: the executor runs them through their
    "executor" hook (it needs the session), never through this."""
    raise AssertionError("control-flow ops run through their executor hook or lowering")


register_op("While", infer=_while_infer, attrs=("cond", "body", "n_carry", "n_xs"),
            const_inputs=(0,), stateful=True,
            lowering=lambda m, *a, **k: _while_lower(m, *a, **k))(_hook_only)


def _stack_rows(rows: list, n_rows: int, like: Tensor) -> np.ndarray:
    if rows:
        first = np.asarray(rows[0])
        out = np.zeros((n_rows,) + first.shape, first.dtype)
        if len(rows):
            out[:len(rows)] = np.stack([np.asarray(r) for r in rows])
        return out
    shape = like.shape.as_list() if like.shape.is_fully_defined() else None
    if shape is None and n_rows:
        raise InvalidArgumentError(f"cannot stack the outputs of a loop that ran no "
                                   f"iteration: the shape of {like.name} is not known")
    return np.zeros([n_rows] + (shape or [0]), like.dtype.np)


def _while_executor(session, op):
    body, cond = op.get_attr("body"), op.get_attr("cond")
    nc, nx = op.get_attr("n_carry"), op.get_attr("n_xs")

    def run(max_iter, *ins):
        carry, xs, caps = _parts(ins, nc, nx)
        body_r = executor_runner(session, body)
        cond_r = executor_runner(session, cond) if cond is not None else None
        ny = len(body.outputs) - nc
        limit = int(max_iter)
        limit = None if limit < 0 else limit
        for x in xs:
            if limit is not None and len(x) < limit:
                raise InvalidArgumentError(f"{op.name}: a sliced input has {len(x)} rows but "
                                           f"the loop runs {limit} iterations")
        ys: list = [[] for _ in range(ny)]
        i = 0
        while limit is None or i < limit:
            ii = np.asarray(i, np.int32)
            if cond_r is not None and not bool(cond_r(ii, *carry, *caps)[0]):
                break
            out = body_r(ii, *carry, *[x[i] for x in xs], *caps)
            carry = out[:nc]
            for k in range(ny):
                ys[k].append(out[nc + k])
            i += 1
        rows = i if limit is None else limit
        stacked = [_stack_rows(ys[k], rows, body.outputs[nc + k]) for k in range(ny)]
        return [np.asarray(i, np.int32), *carry, *stacked]
    return run


def _concrete_int(v):
    from xlapy.frontend.core import Tracer
    if isinstance(v, Tracer):
        return None
    v = int(np.asarray(v))
    return None if v < 0 else v


def _single(res):
    """A lowering returns the value itself for an op with one output, else a tuple."""
    res = tuple(res)
    return res[0] if len(res) == 1 else res


def _zeros(m, aval):
    return m.zeros(aval.shape, aval.dtype)


def _while_lower(m, max_iter, *ins, cond=None, body=None, n_carry=0, n_xs=0):
    from xlapy import lax
    nc, nx = n_carry, n_xs
    carry, xs, caps = _parts(ins, nc, nx)
    ny = len(body.outputs) - nc
    limit = _concrete_int(max_iter)
    if limit is None and (ny or nx):
        raise LoweringError(
            f"the loop '{body.name}' stacks outputs or slices inputs (map_fn, scan, "
            "dynamic_rnn, or a while_loop whose gradient is taken): XLA needs its "
            "maximum_iterations as a compile-time constant")
    bufs = []
    if ny:
        probe = [np.zeros((), np.int32), *carry,
                 *[lax.dynamic_index_in_dim(x, 0, 0, keepdims=False) for x in xs], *caps]
        bufs = [_zeros(m, type(a)((limit,) + a.shape, a.dtype))
                for a in output_avals(body, probe)[nc:]]

    def cond_fun(c):
        i, cs = c[0], list(c[1:1 + nc])
        ok = None if limit is None else m.less(i, np.int32(limit))
        if cond is not None:
            p = trace(cond, [i, *cs, *caps], m)[0]
            ok = p if ok is None else m.logical_and(ok, p)
        return m.asarray(ok)

    def body_fun(c):
        i, cs, bs = c[0], list(c[1:1 + nc]), list(c[1 + nc:])
        x_i = [lax.dynamic_index_in_dim(x, i, 0, keepdims=False) for x in xs]
        out = trace(body, [i, *cs, *x_i, *caps], m)
        new = [m.astype(m.asarray(o), c0.dtype) for o, c0 in zip(out[:nc], cs)]
        bs = [lax.dynamic_update_index_in_dim(b, m.asarray(y, b.dtype), i, 0)
              for b, y in zip(bs, out[nc:])]
        return (m.add(i, np.int32(1)), *new, *bs)

    res = lax.while_loop(cond_fun, body_fun, (np.zeros((), np.int32), *carry, *bufs))
    return _single(res)


def _while_can_lower(op) -> bool:
    c = op.get_attr("cond")
    return op.get_attr("body").can_lower() and (c is None or c.can_lower())


get_op_def("While").extra.update(can_lower=_while_can_lower, executor=_while_executor)


@register_gradient("While")
def _while_grad(op, *out_grads):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    body = op.get_attr("body")
    fg = body.graph
    nc, nx = op.get_attr("n_carry"), op.get_attr("n_xs")
    n_user = op.get_attr("n_user_ys")
    i_ph = body.inputs[0]
    carry_ph, x_ph, cap_ph = _parts(body.inputs[1:], nc, nx)
    carry_in, xs_in, caps_in = _parts(op.inputs[1:], nc, nx)
    wanted = getattr(op, "_grad_wanted", None) or [True] * len(op.inputs)
    fc = [k for k in range(nc) if carry_ph[k].dtype.is_floating]
    fy = [k for k in range(n_user) if body.outputs[nc + k].dtype.is_floating]
    fx = [k for k in range(nx) if x_ph[k].dtype.is_floating and wanted[1 + nc + k]]
    fcap = [k for k in range(len(cap_ph)) if cap_ph[k].dtype.is_floating and
            wanted[1 + nc + nx + k]]
    if not fc and not fx and not fcap:
        return [None] * len(op.inputs)
    ys = [body.outputs[k] for k in fc] + [body.outputs[nc + k] for k in fy]
    xs = [carry_ph[k] for k in fc] + [x_ph[k] for k in fx] + [cap_ph[k] for k in fcap]
    g_shapes = [carry_ph[k].shape for k in fc] + [body.outputs[nc + k].shape for k in fy]
    direct = [i_ph, *x_ph, *cap_ph]
    g_phs, grads, acc = _grad_of_function(fg, ys, xs, g_shapes, direct)

    # the forward values the gradient reads become stacked outputs of the forward loop
    stacks = []
    for t in acc:
        idx = next((j for j, o in enumerate(body.outputs) if o is t and j >= nc + n_user), None)
        if idx is None:
            body.outputs.append(t)
            idx = len(body.outputs) - 1
            n = op.get_attr("static_iters")
            out = Tensor(op, len(op.outputs), t.dtype, TensorShape([n]).concatenate(t.shape))
            op.outputs.append(out)
        stacks.append(op.outputs[1 + idx])
    grad_fn = Function(fg, [i_ph, *g_phs, *acc, *x_ph, *cap_ph], grads)

    g_carry = [out_grads[1 + k] if out_grads[1 + k] is not None
               else zeros_like(op.outputs[1 + k]) for k in fc]
    g_ys = [out_grads[1 + nc + k] if out_grads[1 + nc + k] is not None
            else zeros_like(op.outputs[1 + nc + k]) for k in fy]
    gop = make_op("WhileGrad", [op.outputs[0], *g_carry, *g_ys, *stacks, *xs_in, *caps_in],
                  {"grad": grad_fn, "n_gc": len(fc), "n_gy": len(fy), "n_acc": len(acc),
                   "n_xs": nx, "fx": tuple(fx), "fcap": tuple(fcap), "forward": op},
                  name="WhileGrad")
    result: list = [None] * len(op.inputs)
    outs = iter(gop.outputs)
    for k in fc:
        result[1 + k] = next(outs)
    for k in fx:
        result[1 + nc + k] = next(outs)
    for k in fcap:
        result[1 + nc + nx + k] = next(outs)
    return result


def _while_grad_infer(op):
    fwd = op.get_attr("forward")
    nc, nx = fwd.get_attr("n_carry"), fwd.get_attr("n_xs")
    carry_in, xs_in, caps_in = _parts(fwd.inputs[1:], nc, nx)
    body = fwd.get_attr("body")
    fc = [k for k in range(nc) if body.inputs[1 + k].dtype.is_floating]
    return ([(carry_in[k].dtype, carry_in[k].shape) for k in fc]
            + [(xs_in[k].dtype, xs_in[k].shape) for k in op.get_attr("fx")]
            + [(caps_in[k].dtype, caps_in[k].shape) for k in op.get_attr("fcap")])


def _while_grad_split(op, ins):
    a, b, c = op["n_gc"], op["n_gy"], op["n_acc"]
    nx = op["n_xs"]
    gc, gy, st = list(ins[:a]), list(ins[a:a + b]), list(ins[a + b:a + b + c])
    xs = list(ins[a + b + c:a + b + c + nx])
    caps = list(ins[a + b + c + nx:])
    return gc, gy, st, xs, caps


def _while_grad_executor(session, op):
    attrs = {k: op.get_attr(k) for k in ("n_gc", "n_gy", "n_acc", "n_xs", "fx", "fcap")}
    grad_fn = op.get_attr("grad")

    def run(n, *ins):
        gc, gy, st, xs, caps = _while_grad_split(attrs, ins)
        r = executor_runner(session, grad_fn)
        a, nfx = attrs["n_gc"], len(attrs["fx"])
        g_xs = [np.zeros_like(xs[k]) for k in attrs["fx"]]
        g_caps = [np.zeros_like(caps[k]) for k in attrs["fcap"]]
        for i in range(int(n) - 1, -1, -1):
            out = r(np.asarray(i, np.int32), *gc, *[g[i] for g in gy], *[s[i] for s in st],
                    *[x[i] for x in xs], *caps)
            gc = out[:a]
            for j in range(nfx):
                g_xs[j][i] = out[a + j]
            for j in range(len(g_caps)):
                g_caps[j] = g_caps[j] + out[a + nfx + j]
        return [*gc, *g_xs, *g_caps]
    return run


def _while_grad_lower(m, n, *ins, grad=None, n_gc=0, n_gy=0, n_acc=0, n_xs=0, fx=(),
                      fcap=(), forward=None):
    from xlapy import lax
    attrs = {"n_gc": n_gc, "n_gy": n_gy, "n_acc": n_acc, "n_xs": n_xs}
    gc, gy, st, xs, caps = _while_grad_split(attrs, ins)
    gx0 = [m.zeros_like(xs[k]) for k in fx]
    gcap0 = [m.zeros_like(caps[k]) for k in fcap]
    a, nfx = n_gc, len(fx)

    def row(v, i):
        return lax.dynamic_index_in_dim(v, i, 0, keepdims=False)

    def body_fun(c):
        i = c[0]
        g = list(c[1:1 + a])
        bx = list(c[1 + a:1 + a + nfx])
        bc = list(c[1 + a + nfx:])
        out = trace(grad, [i, *g, *[row(v, i) for v in gy], *[row(s, i) for s in st],
                           *[row(x, i) for x in xs], *caps], m)
        g = [m.astype(m.asarray(o), g0.dtype) for o, g0 in zip(out[:a], g)]
        bx = [lax.dynamic_update_index_in_dim(b, m.asarray(o, b.dtype), i, 0)
              for b, o in zip(bx, out[a:a + nfx])]
        bc = [m.add(b, o) for b, o in zip(bc, out[a + nfx:])]
        return (m.subtract(i, np.int32(1)), *g, *bx, *bc)

    start = m.subtract(m.astype(m.asarray(n), np.int32), np.int32(1))
    res = lax.while_loop(lambda c: m.greater_equal(c[0], np.int32(0)), body_fun,
                         (start, *[m.asarray(g) for g in gc], *gx0, *gcap0))
    return _single(res[1:])


register_op("WhileGrad", infer=_while_grad_infer, stateful=True,
            attrs=("grad", "n_gc", "n_gy", "n_acc", "n_xs", "fx", "fcap", "forward"),
            lowering=_while_grad_lower)(_hook_only)
get_op_def("WhileGrad").extra.update(
    can_lower=lambda op: op.get_attr("grad").can_lower() and _while_can_lower(
        op.get_attr("forward")),
    executor=_while_grad_executor)


def build_while(carry: list, xs: list, max_iter, body_fn, cond_fn=None, invariants=None,
                names=None, name="while"):
    """The While op for body_fn(i, carry, x_rows) -> (new carry, ys) and cond_fn(i, carry)
    -> bool tensor (None: run max_iter times). Returns (n, final carry, stacked ys)."""
    from xlapy.compat.v1.ops.tensor_array_ops import _Deferred
    outer = get_default_graph()
    carry = [c if isinstance(c, _Deferred) else convert_to_tensor(c) for c in carry]
    xs = [convert_to_tensor(x) for x in xs]
    invariants = [c.shape for c in carry] if invariants is None else \
        [as_shape(s) for s in invariants]
    names = names or [c.name for c in carry]
    for c, s, nm in zip(carry, invariants, names):
        if not s.is_compatible_with(c.shape):
            raise InvalidArgumentError(f"The shape invariant specified for {nm} is not "
                                       f"compatible with the initial shape of the loop "
                                       f"variable. It enters the loop with shape "
                                       f"{c.shape}, but the specified shape invariant is {s}.")
    max_iter = convert_to_tensor(-1 if max_iter is None else max_iter, dtype=dtypes.int32)
    with outer.name_scope(name) as scope:
        body_fg = FuncGraph(scope + "body", outer)
        with body_fg.as_default():
            i = placeholder_in(body_fg, dtypes.int32, [], "i")
            cph = [placeholder_in(body_fg, c.dtype, s, "loop_var")
                   for c, s in zip(carry, invariants)]
            xph = [placeholder_in(body_fg, x.dtype, x.shape[1:] if x.shape.ndims else None,
                                  "x") for x in xs]
            new_c, ys = body_fn(i, cph, xph)
            if len(new_c) != len(carry):
                raise InvalidArgumentError(f"the loop body returned {len(new_c)} loop "
                                           f"variables, expected {len(carry)}")
            new_c = [_in_graph(body_fg, v, None if isinstance(v, Tensor) or hasattr(
                v, "_to_tensor") else c.dtype) for v, c in zip(new_c, carry)]
            ys = [_in_graph(body_fg, y) for y in ys]
        for v, c, s, nm in zip(new_c, carry, invariants, names):
            if v.dtype != c.dtype:
                raise InvalidTypeError(f"Loop variable {nm} enters the loop with type "
                                       f"{c.dtype.name}, but has type {v.dtype.name} after "
                                       "one iteration")
            if not s.is_compatible_with(v.shape) or (
                    s.ndims is not None and v.shape.ndims is not None and any(
                        a is not None and b is None for a, b in zip(s.dims, v.shape.dims))):
                raise InvalidArgumentError(
                    f"Input tensor '{nm}' enters the loop with shape {c.shape}, but has shape "
                    f"{v.shape} after one iteration. To allow the shape to vary across "
                    "iterations, use the `shape_invariants` argument of tf.while_loop to "
                    "specify a less-specific shape.")
        fgs = [body_fg]
        cond_fg = None
        if cond_fn is not None:
            cond_fg = FuncGraph(scope + "cond", outer)
            with cond_fg.as_default():
                ci = placeholder_in(cond_fg, dtypes.int32, [], "i")
                ccph = [placeholder_in(cond_fg, c.dtype, s, "loop_var")
                        for c, s in zip(carry, invariants)]
                pred = _in_graph(cond_fg, cond_fn(ci, ccph))
            if pred.dtype != dtypes.bool or (pred.shape.ndims not in (None, 0)):
                raise InvalidArgumentError(f"the loop condition must return a boolean scalar, "
                                           f"got {pred.dtype.name} of shape {pred.shape}")
            fgs.append(cond_fg)
        # (a TensorArray entering unwritten: its array is made now that the body told
        # its element shape)
        carry = [c.resolve() if isinstance(c, _Deferred) else c for c in carry]
        caps = _align_captures(fgs)
        body = Function(body_fg, [i, *cph, *xph, *[body_fg.captures[t] for t in caps]],
                        [*new_c, *ys])
        cond = None if cond_fg is None else Function(
            cond_fg, [ci, *ccph, *[cond_fg.captures[t] for t in caps]], [pred])
        op = make_op("While", [max_iter, *carry, *xs, *caps],
                     {"cond": cond, "body": body, "n_carry": len(carry), "n_xs": len(xs),
                      "n_user_ys": len(ys), "static_iters": _static_int(max_iter)},
                     name="While")
    nc = len(carry)
    return op.outputs[0], op.outputs[1:1 + nc], op.outputs[1 + nc:1 + nc + len(ys)]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """tf.while_loop: repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`."""
    if not callable(cond) or not callable(body):
        raise InvalidTypeError("cond and body of tf.while_loop must be callable")
    from xlapy.compat.v1.ops import tensor_array_ops as tas
    single = not isinstance(loop_vars, (list, tuple, dict))
    structure = loop_vars
    leaves = nest.flatten(loop_vars)
    flat = [v if isinstance(v, tas._Deferred) else convert_to_tensor(v)
            for v in tas.loop_carried(leaves)]
    if not flat:
        raise InvalidArgumentError("No loop variables provided")
    inv = None
    if shape_invariants is not None:
        nest.assert_same_structure(structure, shape_invariants, check_types=False)
        inv = nest.flatten(shape_invariants)

    def args_of(c):
        packed = nest.pack_sequence_as(structure, tas.rewrap(leaves, c))
        return (packed,) if single else tuple(packed) if not isinstance(packed, dict) \
            else (packed,)

    def body_fn(i, c, _x):
        out = body(*args_of(c))
        if single and isinstance(out, (list, tuple)) and len(out) == 1:
            out = out[0]
        elif not single and not nest.is_sequence(out):
            out = [out]
        try:
            nest.assert_same_structure(structure, out, check_types=False)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"the body of tf.while_loop must return the structure "
                                       f"of loop_vars: {e}") from None
        out_leaves = nest.flatten(out)
        for k, (a, b) in enumerate(zip(leaves, out_leaves)):
            if isinstance(a, tas.TensorArray) != isinstance(b, tas.TensorArray):
                raise InvalidArgumentError(
                    f"the body of tf.while_loop must return a TensorArray where loop_vars "
                    f"has one (loop variable {k}: {a!r} became {b!r})")
        return tas.loop_carried(out_leaves), []

    def cond_fn(i, c):
        return cond(*args_of(c))

    _, final, _ = build_while(flat, [], maximum_iterations, body_fn, cond_fn, inv,
                              name=name or "while")
    if not back_prop:
        from xlapy.compat.v1.ops.array_ops import stop_gradient
        final = [stop_gradient(t) for t in final]
    out = nest.pack_sequence_as(structure, tas.rewrap(leaves, final, known_shape=True))
    if not return_same_structure and isinstance(out, (list, tuple)) and len(flat) == 1 and \
            not hasattr(out, "_fields"):
        return out[0]
    return out
