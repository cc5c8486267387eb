"""tf.map_fn, tf.scan, tf.foldl, tf.foldr: loops over the first dimension of `elems`.

Each is one While op (control_flow_ops.build_while) that slices its elements row by row
and stacks its per-step results, so compiled it is one HLO while loop and its gradient is
the While gradient (TF built these from TensorArrays inside a while loop; the semantics
are the same). `elems` and the results may be nested structures of tensors.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.ops.array_ops import concat, expand_dims, shape
from xlapy.compat.v1.ops.control_flow_ops import build_while


def _length(flat: list, what: str):
    """The common first dimension of the elems (a Python int when static)."""
    if not flat:
        raise InvalidArgumentError(f"{what}: elems must be a tensor or a non-empty structure "
                                   "of tensors")
    static = None
    for t in flat:
        if t.shape.ndims == 0:
            raise InvalidArgumentError(f"{what}: elements in elems must be 1+ dimensional")
        d = t.shape.dims[0] if t.shape.dims else None
        if d is not None:
            if static is not None and d != static:
                raise InvalidArgumentError(f"{what}: all elems must have the same first "
                                           f"dimension, got {static} and {d}")
            static = d
    return static if static is not None else shape(flat[0])[0]


def _reverse0(t):
    from xlapy.compat.v1.ops.manip_ops import reverse
    return reverse(t, [0])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None):
    """fn applied to each row of elems; the results stacked (structure: dtype's, else
    elems')."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    n = _length(flat, "map_fn")
    out_struct = dtype if dtype is not None else elems

    def body(i, carry, rows):
        out = fn(nest.pack_sequence_as(elems, rows))
        outs = nest.flatten(out)
        want = nest.flatten(out_struct)
        if len(outs) != len(want):
            raise InvalidArgumentError(f"map_fn: fn returned {len(outs)} tensors, but the "
                                       f"output structure (dtype or elems) has {len(want)}")
        if dtype is not None:
            outs = [convert_to_tensor(o, dtype=dtypes.as_dtype(d)) for o, d in zip(outs, want)]
        return [], outs

    with get_default_graph().name_scope(name or "map"):
        _, _, ys = build_while([], flat, n, body, name="while")
    if not back_prop:
        from xlapy.compat.v1.ops.array_ops import stop_gradient
        ys = [stop_gradient(y) for y in ys]
    return nest.pack_sequence_as(out_struct, ys)


def _scan_like(fn, elems, initializer, reverse, stacked, what, name):
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if reverse:
        flat = [_reverse0(t) for t in flat]
    if initializer is None:
        init_struct = elems
        init = [t[0] for t in flat]
        rest = [t[1:] for t in flat]
    else:
        init_struct = initializer
        init = [convert_to_tensor(v) for v in nest.flatten(initializer)]
        rest = flat
    n = _length(rest, what) if rest else None
    if not rest:
        raise InvalidArgumentError(f"{what}: elems must not be empty")

    def body(i, carry, rows):
        acc = nest.pack_sequence_as(init_struct, carry)
        out = fn(acc, nest.pack_sequence_as(elems, rows))
        try:
            nest.assert_same_structure(init_struct, out, check_types=False)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{what}: fn must return the accumulator's structure: "
                                       f"{e}") from None
        outs = nest.flatten(out)
        return outs, (outs if stacked else [])

    with get_default_graph().name_scope(name or what):
        _, final, ys = build_while(init, rest, n, body, name="while")
    if not stacked:
        return nest.pack_sequence_as(init_struct, final)
    if initializer is None:
        ys = [concat([expand_dims(a, 0), y], 0) for a, y in zip(init, ys)]
    if reverse:
        ys = [_reverse0(y) for y in ys]
    return nest.pack_sequence_as(init_struct, ys)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """acc = fn(acc, row) over the rows of elems; returns every acc, stacked."""
    return _scan_like(fn, elems, initializer, reverse, True, "scan", name)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """acc = fn(acc, row) over the rows of elems, first to last; returns the last acc."""
    return _scan_like(fn, elems, initializer, False, False, "foldl", name)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """acc = fn(acc, row) over the rows of elems, last to first; returns the last acc."""
    return _scan_like(fn, elems, initializer, True, False, "foldr", name)

