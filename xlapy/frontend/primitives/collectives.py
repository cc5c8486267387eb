"""Collective primitives over a named axis: psum, pmax, pmin, all_gather, axis_index.

A named axis is made by `vmap(f, axis_name=...)` (the members of the batch are the
participants). Each collective's `axis_name` param is a tuple of names; binding one finds
the innermost active trace that owns each name (its `frame.name`), and that trace
processes it even when no operand is one of its tracers (psum(1, 'i') is the axis size).
A name nobody owns is an UnboundAxisError (a NameError, as JAX raises).

Semantics over the members of the axis (per element):
    psum(*xs)   the sum over the members        pmax / pmin   the maximum / minimum
    all_gather(x, axis, tiled)   every member's x stacked along `axis` (concatenated when
                tiled), the same result for every member
    axis_index()    the member's position along the axis (int32)
The vmap rules are in xlapy/frontend/batching/collectives.py. Over a pmap axis
(frontend/pmap.py) they lower to HLO collectives (all-reduce, all-gather, replica-id) over
every replica; over a vmap axis a collective only runs inside the vmap naming it.
A loop or cond body using a collective makes the control-flow primitive itself go to the
axis's vmap (graph_axis_owner), whose rule evaluates the collective while re-tracing the
body, so no collective is left in a graph that reaches the lowering.
"""

from __future__ import annotations

import threading

import numpy as np

from xlapy.errors import LoweringError, XlapyError
from xlapy.frontend.core import ShapedArray, active_traces, primitive
from xlapy.frontend.graph import Graph
from xlapy.hlo.attributes import ReplicaGroups
from xlapy.hlo.shapes import S32, Shape


class UnboundAxisError(XlapyError, NameError):
    """A collective named an axis that no enclosing vmap defines."""


def _owner(name):
    for t in reversed(active_traces()):
        frame = getattr(t, "frame", None)
        if frame is not None and frame.name == name:
            return t
    return None


def axis_owner(params):
    """The innermost trace owning one of params['axis_name'] (every name must be bound)."""
    best = None
    for name in params["axis_name"]:
        t = _owner(name)
        if t is None:
            bound = [t.frame.name for t in active_traces()
                     if getattr(getattr(t, "frame", None), "name", None) is not None]
            raise UnboundAxisError(
                f"unbound axis name: {name!r}. Collectives refer to an axis named by an "
                f"enclosing vmap(..., axis_name=...); the axis names bound here are "
                f"{bound}")
        if best is None or t.level > best.level:
            best = t
    return best


def graph_axis_names(graph) -> frozenset:
    """The axis names the collectives in `graph` (and in the graphs of its control flow)
    refer to (cached on the graph)."""
    cached = getattr(graph, "_axis_names", None)
    if cached is not None:
        return cached
    names: set = set()
    for e in graph.eqns:
        if e.prim.axis_trace is not None and "axis_name" in e.params:
            names.update(e.params["axis_name"])
        for v in e.params.values():
            for g in (v if isinstance(v, tuple) else (v,)):
                if isinstance(g, Graph):
                    names |= graph_axis_names(g)
    graph._axis_names = frozenset(names)
    return graph._axis_names


def graph_axis_owner(params):
    """For a control-flow primitive: the innermost trace owning an axis name its graphs'
    collectives use, or None. Its batching rule then re-traces the graphs under that axis
    even when every operand is unbatched (psum(1, 'i') in a loop body is the axis size)."""
    names: set = set()
    for v in params.values():
        for g in (v if isinstance(v, tuple) else (v,)):
            if isinstance(g, Graph):
                names |= graph_axis_names(g)
    best = None
    for name in names:
        t = _owner(name)
        if t is not None and (best is None or t.level > best.level):
            best = t
    return best


def axis_size(name) -> int:
    t = axis_owner({"axis_name": (name,)})
    return t.frame.size


def _no_eager(*args, **params):
    raise XlapyError("internal error: a collective ran outside the vmap owning its axis")


class _Lowering(threading.local):
    """The pmap axes (name, size) whose program this thread is lowering (frontend/pmap.py):
    only their collectives become HLO collectives."""

    def __init__(self):
        self.axes: list[tuple] = []


LOWERING = _Lowering()


def _pmap_size(axis_name) -> int:
    """The device count of the pmap axis `axis_name` names while its program is lowered;
    a LoweringError for any other axis (a vmap's collectives never reach the lowering)."""
    sizes = [next((n for a, n in reversed(LOWERING.axes) if a == name), None)
             for name in axis_name]
    if len(axis_name) == 1 and sizes[0] is not None:
        return sizes[0]
    raise LoweringError(
        f"a collective over axis {axis_name} reached the HLO lowering: collectives lower "
        "only over one pmap axis; over a vmap axis they run only inside that vmap (a loop "
        "or cond body whose operands are all unbatched keeps them unevaluated; pass a "
        "batched operand into it)")


_ALL = ReplicaGroups(())  # every replica (pmap's devices are the replicas)


def _reducing(opcode):
    def lower(ctx, *xs, axis_name):
        _pmap_size(axis_name)
        outs = []
        for x in xs:
            comp = ctx.b.scalar_computation(opcode, x.shape.element_type)
            outs.append(ctx.b.op("all-reduce", x, replica_groups=_ALL, to_apply=comp))
        return outs
    return lower


def _axis_index_lowering(ctx, *, axis_name):
    _pmap_size(axis_name)
    return ctx.b.convert(ctx.b.op("replica-id"), S32)


def _all_gather_lowering(ctx, x, *, axis_name, axis, tiled):
    n = _pmap_size(axis_name)
    dims = list(x.shape.dims)
    if not tiled:
        dims.insert(axis, 1)
        x = ctx.b.reshape(x, dims)
    dims[axis] *= n
    return ctx.b.all_gather([x], Shape.array(x.shape.element_type, dims), axis,
                            replica_groups=_ALL)


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    _pmap_size(axis_name)
    return ctx.b.op("collective-permute", x, source_target_pairs=ReplicaGroups(perm))


def _psum_scatter_lowering(ctx, x, *, axis_name, scatter_dimension, tiled):
    n = _pmap_size(axis_name)
    dims = list(x.shape.dims)
    dims[scatter_dimension] //= n
    comp = ctx.b.scalar_computation("add", x.shape.element_type)
    out = ctx.b.reduce_scatter([x], Shape.array(x.shape.element_type, dims),
                               scatter_dimension, comp, replica_groups=_ALL)
    if not tiled:  # the scattered dimension (now 1) is removed
        del dims[scatter_dimension]
        out = ctx.b.reshape(out, dims)
    return out


def _collective(name, multiple_results=False):
    p = primitive(name, multiple_results=multiple_results)
    p.axis_trace = axis_owner
    p.def_impl(_no_eager)
    return p


psum_p = _collective("psum", multiple_results=True)
pmax_p = _collective("pmax", multiple_results=True)
pmin_p = _collective("pmin", multiple_results=True)
for _p, _op in ((psum_p, "add"), (pmax_p, "maximum"), (pmin_p, "minimum")):
    _p.def_abstract_eval(lambda *avals, axis_name: list(avals))
    _p.def_lowering(_reducing(_op))

axis_index_p = _collective("axis_index")
axis_index_p.def_abstract_eval(lambda *, axis_name: ShapedArray((), np.int32))
axis_index_p.def_lowering(_axis_index_lowering)

all_gather_p = _collective("all_gather")
all_gather_p.def_lowering(_all_gather_lowering)


@all_gather_p.def_abstract_eval
def _all_gather_aval(a, *, axis_name, axis, tiled):
    n = 1
    for name in axis_name:
        n *= axis_size(name)
    if not 0 <= axis <= a.ndim - (1 if tiled else 0):
        raise XlapyError(f"all_gather: axis {axis} is out of range for {a}")
    shape = list(a.shape)
    if tiled:
        shape[axis] *= n
    else:
        shape.insert(axis, n)
    return ShapedArray(shape, a.dtype)


# ppermute(x, perm): member t gets member s's x for each (s, t) in perm; zeros where no
# member sends (a permutation of part of the members)
ppermute_p = _collective("ppermute")
ppermute_p.def_abstract_eval(lambda a, *, axis_name, perm: a)
ppermute_p.def_lowering(_ppermute_lowering)
ppermute_p.def_vjp(lambda ct, x, *, out, axis_name, perm: (
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm)),))

# psum_scatter(x): the sum over the members, split along scatter_dimension into one block
# per member (member i gets block i; untiled, the dimension has the axis size and is removed)
psum_scatter_p = _collective("psum_scatter")


@psum_scatter_p.def_abstract_eval
def _psum_scatter_aval(a, *, axis_name, scatter_dimension, tiled):
    n = 1
    for name in axis_name:
        n *= axis_size(name)
    d = scatter_dimension
    if not 0 <= d < a.ndim:
        raise XlapyError(f"psum_scatter: scatter_dimension {d} is out of range for {a}")
    shape = list(a.shape)
    if tiled and shape[d] % n:
        raise XlapyError(f"psum_scatter: dimension {d} of {a} is not divisible by the axis "
                         f"size {n}")
    if not tiled and shape[d] != n:
        raise XlapyError(f"psum_scatter: dimension {d} of {a} must equal the axis size {n} "
                         "(or pass tiled=True)")
    if tiled:
        shape[d] //= n
    else:
        del shape[d]
    return ShapedArray(shape, a.dtype)


psum_scatter_p.def_lowering(_psum_scatter_lowering)
psum_scatter_p.def_vjp(lambda ct, x, *, out, axis_name, scatter_dimension, tiled: (
    all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled),))

__all__ = ["psum_scatter_p", "psum_p", "pmax_p", "pmin_p", "axis_index_p", "all_gather_p",
           "ppermute_p",
           "UnboundAxisError", "axis_size"]


# ---- VJPs (JAX's transposes, written with the collectives themselves) -------------------------

# psum is linear and its own transpose: every member's cotangent reaches every member
psum_p.def_vjp(lambda cts, *xs, out, axis_name:
               tuple(psum_p.bind(*cts, axis_name=axis_name)))


@all_gather_p.def_vjp
def _all_gather_vjp(ct, x, *, out, axis_name, axis, tiled):
    # member i's x went to slot i of every member's result: it gets the sum of those slots
    from xlapy.frontend.primitives.basic import aval_of, mul
    from xlapy.frontend.primitives.dynamic_slice import dynamic_slice
    from xlapy.frontend.primitives.shapes import reshape
    shape = aval_of(x).shape
    total = psum_p.bind(ct, axis_name=axis_name)[0]
    me = axis_index_p.bind(axis_name=axis_name)
    if tiled:
        me = mul(me, np.int32(shape[axis]))
    sizes = list(shape)
    if not tiled:
        sizes.insert(axis, 1)
    starts = [me if d == axis else np.int32(0) for d in range(len(sizes))]
    return (reshape(dynamic_slice(total, starts, sizes), shape),)
