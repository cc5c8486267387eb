"""Control-flow primitives: while, cond (and switch) and scan, with their four rules.

Each primitive carries traced sub-graphs (xlapy.frontend.graph.Graph) as parameters. The
values a sub-graph captured (its `constvars`: NumPy arrays, or tracers of an outer trace
such as a jit argument used inside a loop body) are explicit leading operands, so every
trace (jit, grad) sees them as ordinary inputs.

    while  operands (cond_consts..., body_consts..., carry...) -> carry...
           params cond_graph, body_graph, cond_nconsts, body_nconsts
    cond   operands (index, consts of branch 0..., consts of branch 1..., ..., operands...)
           -> outputs of the selected branch. params branches (a tuple of Graphs),
           const_counts. A bool index picks branches[1] when true (branches = (false_fn,
           true_fn), as in JAX); an int32 index picks branches[index] and must already be in
           range (xlapy.lax.switch clamps it; HLO runs the last branch for out-of-range).
    scan   operands (consts..., carry..., xs...) -> (carry..., ys..., [saved carries...])
           params body (carry..., x_t...) -> (carry..., y_t...), num_consts, num_carry,
           length, reverse, save_carries. Iteration t (t = length-1 .. 0 when reverse) reads
           xs[t] and writes ys[t]; with save_carries the carry *entering* iteration t is
           stored at saved[t] as extra outputs (the residuals of reverse mode).

Rules. impl: a Python loop evaluating the graphs eagerly with eval_graph. abstract_eval:
the graphs' output avals. Lowering: HLO `while` over one tuple state (for scan: (counter,
consts, carry, xs, ys buffers[, saved]) with xs read by dynamic-slice and ys written by
dynamic-update-slice), HLO `conditional` (pred or s32 index) whose branches all take one
tuple of every operand.

Differentiation (reverse mode; VJP rules are written with xlapy operations, so they run
eagerly, get traced by an enclosing jit, and can be differentiated again):
  * while: not supported (the trip count is unknown) -> XlapyError.
  * cond: a cond with the same index over the branches' VJPs. Each VJP branch is traced
    from `vjp(lambda ops: eval_graph(branch, ...), ops)(cts)`; residuals are the operands.
    Every VJP branch returns cotangents for all float operands (zeros for the consts of
    the other branches), so the branches agree on their outputs.
  * scan: a reverse scan over the body's VJP. Its carry is (cotangent of the carry,
    accumulated cotangents of the consts, which are loop-invariant operands); its xs are
    (xs, carries entering each iteration, cotangents of ys[, of the saved carries]); its
    ys are the cotangents of xs. Its forward scan (the tape rule) saves the carries
    entering each iteration and the results of the body's products (scan_residuals.py),
    which the backward body records on its tape with those values instead of computing
    them again; cotangents are computed only for the consts and xs that carry a gradient.
    Without the tape rule's parameters, the carries come from the outputs save_carries
    adds, or are recomputed by a forward scan that outputs them.
Only floating-point values carry cotangents; integer/bool operands get None.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, Tracer, active_traces, bind, primitive
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.graph import eval_graph, make_graph
from xlapy.frontend.lowering import lower_graph, shape_of
from xlapy.frontend.primitives.basic import add, aval_of, convert, full, is_float
from xlapy.frontend.primitives.scan_residuals import with_residuals
from xlapy.hlo.shapes import PRED, Shape

# ---- helpers --------------------------------------------------------------------------------


def _avals_str(avals) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _check_avals(what: str, expected, got) -> None:
    expected, got = list(expected), list(got)
    if len(expected) != len(got) or any(
            e.shape != g.shape or e.dtype != g.dtype for e, g in zip(expected, got)):
        raise ShapeError(f"{what}: expected {_avals_str(expected)}, got {_avals_str(got)}")


def differentiated(v, *, jvp: bool, through_vmap: bool) -> bool:
    """Whether v is (or wraps, through primals) a tracer of an active differentiation: a
    tape tracer that carries a gradient or (jvp) a JVP tracer with a tangent; through_vmap:
    also looking at the values a vmap BatchTracer batches."""
    # (function-level: autodiff and forward sit above the primitives, which they import)
    from xlapy.frontend.autodiff import TapeTracer
    from xlapy.frontend.forward import JVPTracer
    while isinstance(v, Tracer):
        if isinstance(v, TapeTracer):
            if v.needs_grad:
                return True
            v = v.primal
        elif jvp and isinstance(v, JVPTracer):
            if v.tangent is not None:
                return True
            v = v.primal
        elif through_vmap and hasattr(v, "bdim"):
            v = v.val
        else:
            return False
    return False


def needs_grad(v) -> bool:
    """Whether v is (or wraps) a tape tracer that carries a gradient."""
    return differentiated(v, jvp=False, through_vmap=True)


def _tuple_param(sb, avals):
    p = sb.parameter(Shape.tuple([shape_of(a) for a in avals]), "p")
    return [sb.get_tuple_element(p, i) for i in range(len(avals))]


def _lower_into(ctx, name, avals, body):
    """A sub-computation taking one tuple of `avals`; body(sub_ctx, elements) -> root."""
    sb = ctx.b.subcomputation(name)
    elems = _tuple_param(sb, avals)
    return sb.build(body(ctx.sub(sb), elems))


def _zeros(aval):
    return full(aval.shape, 0, aval.dtype)


def _cast_like(x, aval):
    return convert(x, aval.dtype)


# ---- while ------------------------------------------------------------------------------------

while_p = primitive("while", multiple_results=True)


@while_p.def_impl
def _while_impl(*args, cond_graph, body_graph, cond_nconsts, body_nconsts):
    cc = list(args[:cond_nconsts])
    bc = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(np.asarray(eval_graph(cond_graph, cc, carry)[0])):
        carry = [np.asarray(c) for c in eval_graph(body_graph, bc, carry)]
    return carry


@while_p.def_abstract_eval
def _while_aval(*avals, cond_graph, body_graph, cond_nconsts, body_nconsts):
    carry = avals[cond_nconsts + body_nconsts:]
    _check_avals("while: body output carry", carry, body_graph.out_avals)
    return list(carry)


@while_p.def_lowering
def _while_lower(ctx, *args, cond_graph, body_graph, cond_nconsts, body_nconsts):
    b = ctx.b
    n0, n1 = cond_nconsts, cond_nconsts + body_nconsts
    state_avals = ([v.aval for v in cond_graph.constvars] + [v.aval for v in body_graph.constvars]
                   + [v.aval for v in body_graph.invars])

    def cond_body(sctx, e):
        return lower_graph(sctx, cond_graph, e[:n0], e[n1:])[0]

    def body_body(sctx, e):
        outs = lower_graph(sctx, body_graph, e[n0:n1], e[n1:])
        return sctx.b.tuple(e[:n1] + outs)

    cond_c = _lower_into(ctx, "while_cond", state_avals, cond_body)
    body_c = _lower_into(ctx, "while_body", state_avals, body_body)
    w = b.while_loop(cond_c, body_c, b.tuple(list(args)))
    return [b.get_tuple_element(w, i) for i in range(n1, len(args))]


@while_p.def_vjp
def _while_vjp(ct, *args, out, **params):
    raise XlapyError("reverse-mode differentiation of while_loop is not supported: the trip "
                     "count is not known; use fori_loop with static bounds or scan")


def while_flat(cond_fn, body_fn, init: list) -> list:
    """Bind while_p. cond_fn(*carry) -> bool scalar; body_fn(*carry) -> list of carry values
    (already checked by the caller to match init's avals)."""
    init = [canonicalize_value(x) for x in init]
    avals = [aval_of(x) for x in init]
    cg, cc, _ = make_graph(lambda *c: [cond_fn(*c)], avals)
    bg, bc, _ = make_graph(lambda *c: list(body_fn(*c)), avals)
    return bind(while_p, *cc, *bc, *init, cond_graph=cg, body_graph=bg,
                cond_nconsts=len(cc), body_nconsts=len(bc))


# ---- cond / switch ------------------------------------------------------------------------------

cond_p = primitive("cond", multiple_results=True)


def _branch_index(index, n: int) -> int:
    i = np.asarray(index)
    if i.dtype == np.bool_:
        return int(bool(i))
    i = int(i)
    return i if 0 <= i < n else n - 1  # as HLO conditional: out of range runs the last branch


@cond_p.def_impl
def _cond_impl(index, *args, branches, const_counts):
    i = _branch_index(index, len(branches))
    nconsts = sum(const_counts)
    start = sum(const_counts[:i])
    outs = eval_graph(branches[i], list(args[start:start + const_counts[i]]),
                      list(args[nconsts:]))
    return [np.asarray(o) for o in outs]


@cond_p.def_abstract_eval
def _cond_aval(index, *avals, branches, const_counts):
    if index.shape != () or not (index.dtype == np.bool_ or index.dtype == np.int32):
        raise ShapeError(f"cond: the branch index must be a bool or int32 scalar, got {index}")
    if index.dtype == np.bool_ and len(branches) != 2:
        raise ShapeError(f"cond: a bool index selects between 2 branches, got {len(branches)}")
    for k, g in enumerate(branches[1:], 1):
        _check_avals(f"cond: outputs of branch {k} vs branch 0", branches[0].out_avals,
                     g.out_avals)
    return list(branches[0].out_avals)


@cond_p.def_lowering
def _cond_lower(ctx, index, *args, branches, const_counts):
    b = ctx.b
    nconsts = sum(const_counts)
    arg_avals = []
    for g in branches:
        arg_avals += [v.aval for v in g.constvars]
    arg_avals += [v.aval for v in branches[0].invars]
    comps = []
    for k, g in enumerate(branches):
        start = sum(const_counts[:k])

        def body(sctx, e, g=g, start=start, n=const_counts[k]):
            return sctx.b.tuple(lower_graph(sctx, g, e[start:start + n], e[nconsts:]))
        comps.append(_lower_into(ctx, f"cond_branch{k}", arg_avals, body))
    operand = b.tuple(list(args))
    if index.shape.element_type is PRED:
        r = b.conditional(index, [comps[1], comps[0]], [operand, operand])
    else:
        r = b.conditional(index, comps, [operand] * len(comps))
    return [b.get_tuple_element(r, i) for i in range(len(branches[0].outputs))]


@cond_p.def_vjp
def _cond_vjp(cts, index, *args, out, branches, const_counts):
    from xlapy.frontend.autodiff import vjp
    nconsts = sum(const_counts)
    fidx = [j for j, a in enumerate(args) if is_float(aval_of(a).dtype)]
    oidx = [j for j, a in enumerate(branches[0].out_avals) if is_float(a.dtype)]
    if not fidx:
        return (None,) * (1 + len(args))
    arg_avals = [aval_of(a) for a in args]

    def make(k):
        g, start, n = branches[k], sum(const_counts[:k]), const_counts[k]

        def branch(*vals):
            ops, ct = list(vals[:len(args)]), list(vals[len(args):])

            def f(fvals):
                full_ops = list(ops)
                for j, v in zip(fidx, fvals):
                    full_ops[j] = v
                outs = eval_graph(g, full_ops[start:start + n], full_ops[nconsts:])
                return [outs[j] for j in oidx]
            _, fn = vjp(f, [ops[j] for j in fidx])
            (grads,) = fn(ct)
            return [_cast_like(x, arg_avals[j]) for x, j in zip(grads, fidx)]
        return branch

    ct_f = [_cast_like(cts[j], branches[0].out_avals[j]) for j in oidx]
    grads = cond_flat(index, [make(k) for k in range(len(branches))], list(args) + ct_f)
    result = [None] * len(args)
    for j, gj in zip(fidx, grads):
        result[j] = gj
    return (None, *result)


def cond_flat(index, branch_fns, operands: list) -> list:
    """Bind cond_p: branch_fns[k](*operands) -> list of outputs (the same avals for every
    branch; the caller checks). `index` is a bool scalar (2 branches) or an int32 scalar
    already in range."""
    operands = [canonicalize_value(x) for x in operands]
    avals = [aval_of(x) for x in operands]
    graphs, consts = [], []
    for fn in branch_fns:
        g, c, _ = make_graph(lambda *a, fn=fn: list(fn(*a)), avals)
        graphs.append(g)
        consts.append(c)
    flat_consts = [c for cs in consts for c in cs]
    return bind(cond_p, index, *flat_consts, *operands, branches=tuple(graphs),
                const_counts=tuple(len(c) for c in consts))


# ---- scan ---------------------------------------------------------------------------------------

scan_p = primitive("scan", multiple_results=True)


def _scan_split(args, num_consts, num_carry):
    return (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
            list(args[num_consts + num_carry:]))


@scan_p.def_impl
def _scan_impl(*args, body, num_consts, num_carry, length, reverse, save_carries):
    consts, carry, xs = _scan_split(args, num_consts, num_carry)
    xs = [np.asarray(x) for x in xs]
    y_avals = body.out_avals[num_carry:]
    ys = [np.zeros((length,) + a.shape, a.dtype) for a in y_avals]
    saved = [np.zeros((length,) + aval_of(c).shape, aval_of(c).dtype) for c in carry] \
        if save_carries else []
    for t in (reversed(range(length)) if reverse else range(length)):
        for buf, c in zip(saved, carry):
            buf[t] = c
        outs = eval_graph(body, consts, carry + [x[t] for x in xs])
        carry = [np.asarray(o) for o in outs[:num_carry]]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[t] = y
    return [np.asarray(c) for c in carry] + ys + saved


@scan_p.def_abstract_eval
def _scan_aval(*avals, body, num_consts, num_carry, length, reverse, save_carries):
    consts, carry, xs = _scan_split(avals, num_consts, num_carry)
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise ShapeError(f"scan: every xs operand needs a leading axis of length {length}, "
                             f"got {x}")
    _check_avals("scan: body inputs", [v.aval for v in body.constvars + body.invars],
                 consts + carry + [ShapedArray(x.shape[1:], x.dtype) for x in xs])
    _check_avals("scan: body output carry", carry, body.out_avals[:num_carry])
    ys = [ShapedArray((length,) + a.shape, a.dtype) for a in body.out_avals[num_carry:]]
    saved = [ShapedArray((length,) + a.shape, a.dtype) for a in carry] if save_carries else []
    return list(carry) + ys + saved


@scan_p.def_lowering
def _scan_lower(ctx, *args, body, num_consts, num_carry, length, reverse, save_carries):
    b = ctx.b
    consts, carry, xs = _scan_split(args, num_consts, num_carry)
    nc, nk, nx = num_consts, num_carry, len(xs)
    c_avals = [v.aval for v in body.constvars]
    k_avals = body.out_avals[:nk]
    x_avals = [v.aval for v in body.invars[nk:]]
    y_avals = body.out_avals[nk:]
    buf_avals = [ShapedArray((length,) + a.shape, a.dtype)
                 for a in y_avals + (k_avals if save_carries else [])]

    def empty(aval):
        return b.broadcast(b.constant(np.zeros((), aval.dtype)), aval.shape)

    if length == 0:  # no iteration: the carry passes through, the stacked outputs are empty
        return list(carry) + [empty(a) for a in buf_avals]

    s32 = np.int32
    state_avals = ([ShapedArray((), s32)] + c_avals + k_avals
                   + [ShapedArray((length,) + a.shape, a.dtype) for a in x_avals] + buf_avals)

    def cond_body(sctx, e):
        sb = sctx.b
        return sb.compare(e[0], sb.constant(np.asarray(length, s32)), "LT")

    def loop_body(sctx, e):
        sb = sctx.b
        i = e[0]
        ce, ke = e[1:1 + nc], e[1 + nc:1 + nc + nk]
        xe, bufs = e[1 + nc + nk:1 + nc + nk + nx], e[1 + nc + nk + nx:]
        idx = sb.subtract(sb.constant(np.asarray(length - 1, s32)), i) if reverse else i
        zero = sb.constant(np.asarray(0, s32))
        x_t = []
        for x, a in zip(xe, x_avals):
            sl = sb.dynamic_slice(x, [idx] + [zero] * len(a.shape), (1,) + a.shape)
            x_t.append(sb.reshape(sl, a.shape))
        outs = lower_graph(sctx, body, ce, ke + x_t)
        writes = outs[nk:] + (ke if save_carries else [])
        new_bufs = []
        for buf, v, a in zip(bufs, writes, buf_avals):
            upd = sb.reshape(v, (1,) + a.shape[1:])
            new_bufs.append(sb.dynamic_update_slice(buf, upd, [idx] + [zero] * (a.ndim - 1)))
        one = sb.constant(np.asarray(1, s32))
        return sb.tuple([sb.add(i, one)] + ce + outs[:nk] + xe + new_bufs)

    cond_c = _lower_into(ctx, "scan_cond", state_avals, cond_body)
    body_c = _lower_into(ctx, "scan_body", state_avals, loop_body)
    init = b.tuple([b.constant(np.asarray(0, s32))] + consts + carry + xs
                   + [empty(a) for a in buf_avals])
    w = b.while_loop(cond_c, body_c, init)
    first_buf = 1 + nc + nk + nx
    return ([b.get_tuple_element(w, 1 + nc + j) for j in range(nk)]
            + [b.get_tuple_element(w, first_buf + j) for j in range(len(buf_avals))])


def scan_flat(body_fn, init: list, xs: list, length: int, reverse: bool = False):
    """Bind scan_p. body_fn(carry_list, x_list) -> (carry_list, y_list) with the carry's
    avals unchanged (the caller checks). Returns (final carry list, stacked ys list)."""
    init, xs = [canonicalize_value(x) for x in init], [canonicalize_value(x) for x in xs]
    nk = len(init)
    avals = [aval_of(c) for c in init] + [ShapedArray(aval_of(x).shape[1:], aval_of(x).dtype)
                                          for x in xs]

    def flat_body(*vals):
        c, y = body_fn(list(vals[:nk]), list(vals[nk:]))
        return list(c) + list(y)

    graph, consts, _ = make_graph(flat_body, avals)
    save = any(needs_grad(v) for v in list(consts) + list(init) + list(xs))
    outs = bind(scan_p, *consts, *init, *xs, body=graph, num_consts=len(consts), num_carry=nk,
                length=int(length), reverse=bool(reverse), save_carries=save)
    ny = len(graph.outputs) - nk
    return list(outs[:nk]), list(outs[nk:nk + ny])


@scan_p.def_tape_rule
def _scan_tape_rule(primals, *, body, num_consts, num_carry, length, reverse, save_carries,
                    differentiated=None):
    """Reverse mode's forward scan: the body with its products kept (scan_residuals.py) and
    the entering carries saved; the tape records the scan's own outputs, and its VJP gets
    the carries and the kept products as parameters."""
    graph, kept = with_residuals(body, num_consts, num_carry)
    params = dict(body=body, num_consts=num_consts, num_carry=num_carry, length=length,
                  reverse=reverse, save_carries=save_carries)
    outs = bind(scan_p, *primals, **dict(params, body=graph, save_carries=True))
    nk, ny, nys = num_carry, len(body.outputs) - num_carry, len(graph.outputs) - num_carry
    carries = list(outs[nk + nys:])
    public = list(outs[:nk + ny]) + (carries if save_carries else [])
    kept = tuple((k, outs[p]) for k, p in kept)
    return public, dict(params, carries=carries, kept=kept, differentiated=differentiated)


_scan_tape_rule.wants_differentiated = True


@scan_p.def_vjp
def _scan_vjp(cts, *args, out, body, num_consts, num_carry, length, reverse, save_carries,
              carries=None, kept=(), differentiated=None):
    from xlapy.frontend.autodiff import TapeTrace, vjp
    from xlapy.frontend.checkpoint import _eval
    consts, init, xs = _scan_split(args, num_consts, num_carry)
    nk, ny = num_carry, len(body.outputs) - num_carry
    k_avals, y_avals = body.out_avals[:nk], body.out_avals[nk:]
    c_avals = [aval_of(c) for c in consts]
    x_avals = [v.aval for v in body.invars[nk:]]
    fc = [j for j, a in enumerate(c_avals) if is_float(a.dtype)]
    fk = [j for j, a in enumerate(k_avals) if is_float(a.dtype)]
    fx = [j for j, a in enumerate(x_avals) if is_float(a.dtype)]
    fy = [j for j, a in enumerate(y_avals) if is_float(a.dtype)]
    if differentiated is not None:  # no cotangents for the consts and xs that carry none
        fc = [j for j in fc if differentiated[j]]
        fx = [j for j in fx if differentiated[num_consts + nk + j]]

    ct_saved = [_cast_like(cts[nk + ny + j], k_avals[j]) for j in fk] if save_carries else []
    if carries is not None:
        saved = list(carries)
    elif save_carries:
        saved = list(out[nk + ny:])
    else:  # recompute the carries entering each iteration
        def fwd(c, x):
            outs = eval_graph(body, consts, c + x)
            return outs[:nk], c
        _, saved = scan_flat(fwd, list(init), list(xs), length, reverse)
    ct_carry = [_cast_like(cts[j], k_avals[j]) for j in fk]
    ct_ys = [_cast_like(cts[nk + j], y_avals[j]) for j in fy]
    nfk, nx, ns = len(fk), len(xs), len(ct_saved)
    kept_at = [k for k, _ in kept]

    def on_kept(e, ins, value):  # a kept product: on the tape with its forward value
        trace = [t for t in active_traces() if isinstance(t, TapeTrace)][-1]
        return trace.record(e.prim, ins, value, e.params)

    def bwd(carry, x):
        ct_c, ct_k = carry[:nfk], carry[nfk:]
        x_t, c_t = x[:nx], x[nx:nx + nk]
        at = nx + nk + len(fy)
        ct_y, ct_s, r_t = x[nx + nk:at], x[at:at + ns], x[at + ns:]
        values = dict(zip(kept_at, r_t))

        def f(kv, cv, xv):
            k, c, xx = list(consts), list(c_t), list(x_t)
            for j, v in zip(fc, kv):
                k[j] = v
            for j, v in zip(fk, cv):
                c[j] = v
            for j, v in zip(fx, xv):
                xx[j] = v
            outs = _eval(body, k + c + xx, len(k), values, on_kept)
            return [outs[j] for j in fk], [outs[nk + j] for j in fy]

        _, fn = vjp(f, [consts[j] for j in fc], [c_t[j] for j in fk], [x_t[j] for j in fx])
        g_k, g_c, g_x = fn((list(ct_c), list(ct_y)))
        g_c = [_cast_like(g, k_avals[j]) for g, j in zip(g_c, fk)]
        if ct_s:
            g_c = [add(g, s) for g, s in zip(g_c, ct_s)]
        new_k = [add(a, _cast_like(g, c_avals[j])) for a, g, j in zip(ct_k, g_k, fc)]
        return g_c + new_k, [_cast_like(g, x_avals[j]) for g, j in zip(g_x, fx)]

    init_ct = ct_carry + [_zeros(c_avals[j]) for j in fc]
    final, ct_xs = scan_flat(bwd, init_ct, list(xs) + list(saved) + ct_ys + ct_saved
                             + [v for _, v in kept], length, not reverse)
    result = [None] * len(args)
    for n, j in enumerate(fk):
        result[num_consts + j] = final[n]
    for n, j in enumerate(fc):
        result[j] = final[nfk + n]
    for n, j in enumerate(fx):
        result[num_consts + nk + j] = ct_xs[n]
    return tuple(result)
