"""Interpreter rules for control flow and calls: while, conditional, call, fusion, map, sort,
topk, custom-call.

  while        state = init; while condition(state): state = body(state).  More than
               ev.max_loop_iterations iterations raise EvaluationError.
  conditional  a pred selects true_computation (operand 1) or false_computation (operand 2);
               an s32 index selects branch_computations[i] with operand 1 + i, and an index
               out of range selects the LAST branch (as XLA does).
  call/fusion  evaluate to_apply / calls on the operands.
  map          to_apply is a scalar computation applied elementwise.  When every instruction
               of it is elementwise (and constants are scalars) it is called once on whole
               arrays; otherwise it is evaluated element by element.
  sort         operands (all of one shape) are permuted together along dimensions={d} so the
               comparator to_apply(lhs0, rhs0, lhs1, rhs1, ...) -> pred ("lhs goes first")
               holds.  The result is always the stable sort (a valid result for
               is_stable=false too).  Fast path: a comparator that is just LT/GT of one
               operand's two parameters becomes np.argsort(kind="stable") on a key (TOTALORDER
               keys by bit pattern; FLOAT only when there is no NaN).  General path: a
               bottom-up merge sort whose merges are computed for all elements at once by
               binary search: an element of the left run lands at its index plus the number
               of right-run elements that go before it (comparator(b, a)), an element of the
               right run at its index plus the number of left-run elements that do not go
               after it (!comparator(b, a)); each binary-search step is one vectorized
               comparator call, so a sort costs O(log^2 n) calls on arrays of the operand
               size.  A comparator that is not a strict weak order still yields a permutation.
  topk         the k largest (largest=true) or smallest elements along the last dimension,
               in order, with their s32 indices: a stable sort by the TOTALORDER key (NaN
               is above +Inf, +0.0 above -0.0), ties keep the lower index first, as XLA does.
  custom-call  no target is supported: EvaluationError naming the target.
"""

from __future__ import annotations

import importlib

import numpy as np

from xlapy.hlo.evaluator.elementwise import operand_arrays
from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.numerics import (compute_dtype, is_float, sint_of,
                                                  totalorder_key, uint_of)
from xlapy.errors import EvaluationError
from xlapy.hlo.ir import Computation
from xlapy.hlo.opcodes import ELEMENTWISE


def _computation(instr, name: str) -> Computation:
    comp = instr.attrs.get(name)
    if not isinstance(comp, Computation):
        raise EvaluationError(f"{instr.where()}{instr.opcode} needs {name}=<computation>: {instr}")
    return comp


# ---- calling scalar computations on arrays ---------------------------------------------------

def is_elementwise_computation(comp: Computation) -> bool:
    """True if calling `comp` on arrays computes it independently per element."""
    for i in comp.instructions:
        op = i.opcode
        if op == "constant":
            if not (i.shape.is_array and i.shape.rank == 0):
                return False
        elif op == "bitcast-convert":
            if i.shape.dtype.itemsize != i.operands[0].shape.dtype.itemsize:
                return False
        elif op in ("call", "fusion"):
            if not all(is_elementwise_computation(c) for c in i.called_computations()):
                return False
        elif not (op in ELEMENTWISE or op in ("parameter", "tuple", "get-tuple-element")):
            return False
    return True


def call_elementwise(ev, comp: Computation, args: list, dims: tuple) -> np.ndarray:
    """The scalar computation `comp` applied elementwise to arrays `args` of shape `dims`."""
    if is_elementwise_computation(comp):
        out = np.asarray(ev.call(comp, list(args)))
        return np.array(np.broadcast_to(out, dims), order="C")
    results = [np.asarray(ev.call(comp, [np.asarray(a[idx]) for a in args]))
               for idx in np.ndindex(*dims)]
    if not results:
        return np.zeros(dims, dtype=comp.root.shape.dtype)
    return np.array(results).reshape(dims)


# ---- loops, branches, calls ------------------------------------------------------------------

@eval_rule("while")
def _while(ev, instr, operands):
    cond, body = _computation(instr, "condition"), _computation(instr, "body")
    state = operands[0]
    iterations = 0
    while bool(np.asarray(ev.call(cond, [state]))):
        iterations += 1
        if iterations > ev.max_loop_iterations:
            raise EvaluationError(
                f"{instr.where()}while loop ran more than {ev.max_loop_iterations} iterations "
                f"(raise Evaluator.max_loop_iterations if that is intended): {instr}")
        state = ev.call(body, [state])
    return state


@eval_rule("conditional")
def _conditional(ev, instr, operands):
    selector = np.asarray(operands[0])
    if "branch_computations" in instr.attrs:
        branches = list(instr.attrs["branch_computations"])
        index = int(selector)
        if not 0 <= index < len(branches):
            index = len(branches) - 1  # out-of-range indices run the last branch
    else:
        branches = [_computation(instr, "true_computation"),
                    _computation(instr, "false_computation")]
        index = 0 if bool(selector) else 1
    if len(operands) != len(branches) + 1:
        raise EvaluationError(f"{instr.where()}conditional with {len(branches)} branches needs "
                              f"{len(branches) + 1} operands, got {len(operands)}: {instr}")
    return ev.call(branches[index], [operands[1 + index]])


@eval_rule("call")
def _call(ev, instr, operands):
    return ev.call(_computation(instr, "to_apply"), list(operands))


@eval_rule("fusion")
def _fusion(ev, instr, operands):
    return ev.call(_computation(instr, "calls"), list(operands))


@eval_rule("map")
def _map(ev, instr, operands):
    comp = _computation(instr, "to_apply")
    args = operand_arrays(instr, operands)
    dims = instr.shape.dims
    if any(a.shape != dims for a in args):
        raise EvaluationError(f"{instr.where()}map operands must all have the shape "
                              f"{list(dims)} of the result: {instr}")
    return call_elementwise(ev, comp, args, dims).astype(instr.shape.dtype)


# custom-call targets xlapy itself creates (e.g. the cpu pipeline's "__xlapy$gemm_update"),
# so the interpreter can check optimized modules: target -> rule(ev, instr, operands)
XLAPY_CALLS: dict = {}
# target prefix -> the module registering those targets, imported by the first such call:
# JAX's LAPACK calls (ctypes, hlo/lapack_calls.py's plans) are not imported by every
# compiler's constant folding
LAZY_CALLS = (("lapack_", "xlapy.hlo.evaluator.lapack"),)


def xlapy_call(target: str):
    def register(fn):
        XLAPY_CALLS[target] = fn
        return fn
    return register


@eval_rule("custom-call")
def _custom_call(ev, instr, operands):
    target = instr.attrs.get("custom_call_target", "")
    rule = XLAPY_CALLS.get(target)
    if rule is None:
        module = next((m for prefix, m in LAZY_CALLS if target.startswith(prefix)), None)
        if module is not None:
            importlib.import_module(module)  # (it registers its targets)
            rule = XLAPY_CALLS.get(target)
    if rule is not None:
        return rule(ev, instr, operands)
    raise EvaluationError(
        f"{instr.where()}unsupported custom-call target '{target}': the interpreter has no "
        f"implementation of it (rewrite the program without it, or use a module dumped "
        f"before the target was introduced): {instr}")


# ---- sort ------------------------------------------------------------------------------------

@eval_rule("sort")
def _sort(ev, instr, operands):
    comp = _computation(instr, "to_apply")
    xs = operand_arrays(instr, operands)
    dims = instr.attrs.get("dimensions", ())
    shape = xs[0].shape if xs else ()
    if not xs or len(dims) != 1 or not 0 <= dims[0] < len(shape) or any(
            x.shape != shape for x in xs):
        raise EvaluationError(f"{instr.where()}sort needs operands of one shape and "
                              f"dimensions={{d}} with d below their rank: {instr}")
    if comp.num_parameters != 2 * len(xs):
        raise EvaluationError(f"{instr.where()}sort of {len(xs)} operands needs a comparator "
                              f"with {2 * len(xs)} parameters, {comp.name} has "
                              f"{comp.num_parameters}: {instr}")
    d = dims[0]
    n = shape[d]
    batch = int(np.prod([s for i, s in enumerate(shape) if i != d]))
    rows = [np.moveaxis(x, d, -1).reshape(batch, n) for x in xs]
    if n > 1 and batch > 0:
        order = _argsort_fast(comp, rows)
        if order is None:
            order = _argsort_merge(ev, comp, rows)
        rows = [np.take_along_axis(r, order, axis=1) for r in rows]
    moved = np.moveaxis(xs[0], d, -1).shape
    out = [np.array(np.moveaxis(r.reshape(moved), -1, d), order="C") for r in rows]
    return tuple(out) if instr.shape.is_tuple else out[0]


def _argsort_fast(comp: Computation, rows: list) -> np.ndarray | None:
    """Stable argsort when the comparator is LT/GT of one operand's parameter pair."""
    root = comp.root
    direction = root.attrs.get("direction")
    if root.opcode != "compare" or direction not in ("LT", "GT"):
        return None
    a, b = root.operands
    if a.opcode != "parameter" or b.opcode != "parameter":
        return None
    pa, pb = a.parameter_number, b.parameter_number
    if pa // 2 != pb // 2 or pa == pb:
        return None
    x = rows[pa // 2]
    ascending = (direction == "LT") == (pa % 2 == 0)
    ctype = root.attrs.get("type")
    if is_float(x.dtype):
        if ctype == "TOTALORDER":
            key = totalorder_key(x)
        elif ctype in (None, "FLOAT") and not np.isnan(x.astype(compute_dtype(x.dtype))).any():
            key = x.astype(compute_dtype(x.dtype))
            return np.argsort(key if ascending else -key, axis=1, kind="stable")
        else:
            return None
    elif x.dtype == np.bool_:
        key = x
    elif ctype in ("SIGNED", "UNSIGNED") or ctype is None:
        signed = ctype == "SIGNED" or (ctype is None and x.dtype.kind == "i")
        key = x.view(sint_of(x.dtype) if signed else uint_of(x.dtype))
    else:
        return None
    return np.argsort(key if ascending else np.invert(key), axis=1, kind="stable")


def _argsort_merge(ev, comp: Computation, rows: list) -> np.ndarray:
    """Stable argsort of rows (batch, n) under the comparator: bottom-up merge sort with
    vectorized binary-search merges (see the module docstring)."""
    batch, n = rows[0].shape
    cur = [r.copy() for r in rows]  # the operands in the current order
    perm = np.broadcast_to(np.arange(n), (batch, n)).copy()
    pos = np.arange(n)

    def goes_first(lhs_index, rhs_index):
        args = []
        for c in cur:
            args.append(np.take_along_axis(c, lhs_index, axis=1))
            args.append(np.take_along_axis(c, rhs_index, axis=1))
        return call_elementwise(ev, comp, args, (batch, n)).astype(bool)

    width = 1
    while width < n:
        start = (pos // (2 * width)) * (2 * width)
        in_left = pos - start < width
        other_start = np.where(in_left, start + width, start)
        other_len = np.where(in_left, np.clip(n - start - width, 0, width), width)
        own_offset = np.where(in_left, pos - start, pos - start - width)
        lo = np.zeros((batch, n), dtype=np.int64)
        hi = np.broadcast_to(other_len, (batch, n)).copy()
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            other = np.minimum(other_start + mid, n - 1)
            mine = np.broadcast_to(pos, (batch, n))
            # left elements count right ones with cmp(b, a); right elements count left ones
            # with !cmp(b, a): in both cases the comparator's lhs is the right-run element.
            lhs = np.where(in_left, other, mine)
            rhs = np.where(in_left, mine, other)
            c = goes_first(lhs, rhs)
            before = np.where(in_left, c, ~c)  # does the other run's element go first?
            lo = np.where(active & before, mid + 1, lo)
            hi = np.where(active & ~before, mid, hi)
        new_pos = start + own_offset + lo
        order = np.argsort(new_pos, axis=1, kind="stable")  # inverse permutation of new_pos
        perm = np.take_along_axis(perm, order, axis=1)
        cur = [np.take_along_axis(c, order, axis=1) for c in cur]
        width *= 2
    return perm


@eval_rule("topk")
def _topk(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    k = instr.attrs.get("k")
    if x.ndim == 0 or not isinstance(k, int) or not 0 <= k <= x.shape[-1]:
        raise EvaluationError(f"{instr.where()}topk needs k between 0 and the last dimension "
                              f"of operand shape {list(x.shape)}, got k={k}: {instr}")
    if is_float(x.dtype):
        key = totalorder_key(x)
    else:
        key = x.view(np.uint8) if x.dtype == np.bool_ else x
    if instr.attrs.get("largest", True):
        key = np.invert(key)  # reverses the order of signed and unsigned integers alike
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    index_dtype = instr.shape.tuple_shapes[1].dtype if instr.shape.is_tuple else np.int32
    return np.take_along_axis(x, order, axis=-1), order.astype(index_dtype)
