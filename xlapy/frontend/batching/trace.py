"""The batching trace behind vmap: BatchTracer, BatchTrace and the helpers rules share.

A BatchTracer stands for a stack of `frame.size` values of its aval: `val` holds them all
with the stacking (batch) axis at `bdim`, or `bdim` is None (NOT_MAPPED) when every member
of the stack is the same value (a constant, or an outer value lifted in). Applying a
primitive to BatchTracers calls the primitive's batching rule,

    rule(frame, vals, dims, **params) -> (out, out_dim)      (lists for multiple results)

where `vals` are the underlying values (batched ones carry their batch axis at dims[i]),
and at least one dim is not None. The rule computes the whole batch with ordinary
primitives (one dot_general with a batch dimension, a reduction over shifted axes, ...),
never a loop over the members, and says where the batch axis of its result is (None: the
result is the same for every member). Rules bind primitives on the unwrapped values, so
an enclosing trace (jit's graph, grad's tape, an outer vmap) sees the batched program.

`frame` is the BatchFrame of the vmap being traced: its size and axis name (rules of
control flow re-trace their bodies under a BatchTrace of the same frame, and the
collectives psum / axis_index need the name).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import ShapedArray, Trace, Tracer, TracerError, bind, get_aval

NOT_MAPPED = None


@dataclass(frozen=True)
class BatchFrame:
    size: int
    name: object = None     # the axis name collectives refer to (any hashable), or None


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace: "BatchTrace", val, bdim):
        a = get_aval(val)
        if bdim is not NOT_MAPPED:
            a = ShapedArray(a.shape[:bdim] + a.shape[bdim + 1:], a.dtype, a.weak_type)
        super().__init__(trace, a, val.origin if isinstance(val, Tracer) else None)
        self.val = val
        self.bdim = bdim

    def _concrete_error(self, what: str):
        where = f" The value depends on {self.origin}." if self.origin else ""
        return TracerError(
            f"a batched array {self.aval} was used where a concrete value is needed ({what}) "
            f"inside vmap: each member of the batch may have a different value.{where} Use "
            "xlapy.numpy.where or xlapy.lax.cond / while_loop / fori_loop instead of Python "
            "control flow on batched values.")


class BatchTrace(Trace):
    def __init__(self, frame: BatchFrame):
        super().__init__()
        self.frame = frame

    def lift(self, value):
        return BatchTracer(self, value, NOT_MAPPED)

    def unwrap(self, x):
        """(value, batch dim) of x for this trace (values of other traces are unmapped)."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        return x, NOT_MAPPED

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for a in args:
            v, d = self.unwrap(a)
            vals.append(v)
            dims.append(d)
        if all(d is NOT_MAPPED for d in dims) and prim.axis_trace is None:
            return bind(prim, *vals, **params)
        if prim.batch is None:
            raise XlapyError(f"vmap of the primitive '{prim.name}' is not implemented (it has "
                             "no batching rule)")
        out, out_dim = prim.batch(self.frame, vals, dims, **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


# ---- helpers for rules ------------------------------------------------------------------------

def shape_of(x) -> tuple:
    return get_aval(x).shape


def moveaxis(x, src: int, dst: int):
    """x with its axis `src` moved to position `dst` (a transpose; none when src == dst)."""
    from xlapy.frontend.primitives.shapes import transpose
    nd = len(shape_of(x))
    if src == dst:
        return x
    perm = [d for d in range(nd) if d != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def bdim_to_front(x, bdim, size: int):
    """x with its batch axis first; an unmapped x is broadcast to `size` copies."""
    if bdim is NOT_MAPPED:
        return broadcast_batch(x, size, 0)
    return moveaxis(x, bdim, 0)


def move_bdim(x, bdim, dst: int, size: int):
    """x with its batch axis at `dst` (broadcast there when unmapped)."""
    if bdim is NOT_MAPPED:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, bdim, dst)


def broadcast_batch(x, size: int, dst: int):
    """An unmapped x as `size` copies stacked along a new axis at `dst`."""
    from xlapy.frontend.primitives.basic import broadcast_in_dim
    a = get_aval(x)
    shape = a.shape[:dst] + (size,) + a.shape[dst:]
    dims = tuple(d if d < dst else d + 1 for d in range(a.ndim))
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    return broadcast_in_dim(x, shape, dims)


def phys(axis: int, bdim) -> int:
    """The axis of the batched value holding logical axis `axis` (batch axis at bdim)."""
    if bdim is NOT_MAPPED:
        return axis
    return axis + 1 if axis >= bdim else axis


def batch_size(vals, dims) -> int:
    for v, d in zip(vals, dims):
        if d is not NOT_MAPPED:
            return shape_of(v)[d]
    raise XlapyError("internal error: a batching rule was called with no batched operand")


def apply_batched(frame: BatchFrame, fn, vals, dims):
    """Run fn(*tracers) in a fresh BatchTrace of `frame` (batched inputs as its tracers) and
    return its flat outputs as (values, dims). Used by rules that re-trace a sub-graph."""
    with BatchTrace(frame) as trace:
        tracers = [BatchTracer(trace, v, d) if d is not NOT_MAPPED else v
                   for v, d in zip(vals, dims)]
        outs = fn(*tracers)
        res = [trace.unwrap(o) for o in outs]
    return [r[0] for r in res], [r[1] for r in res]


def leading_batch_rule(prim):
    """The batching rule of a primitive whose operands take any number of leading batch
    dimensions and whose results carry them first too (the linear-algebra custom calls:
    Cholesky, triangular solve, eigh, ...): batch axes first (unmapped operands broadcast),
    one application, results batched along axis 0. Register it with
    `p.def_batch(leading_batch_rule(p))`."""
    def rule(frame, vals, dims, **params):
        ops = [bdim_to_front(v, d, frame.size) for v, d in zip(vals, dims)]
        out = bind(prim, *ops, **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0
    return rule
