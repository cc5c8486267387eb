"""Batching rules of the collectives (primitives/collectives.py).

The trace processing a collective is either the vmap owning (one of) its axis names, or
an inner vmap it passes through:
  owner       psum / pmax / pmin reduce over the batch axis (an unbatched operand: psum
              multiplies by the axis size, pmax / pmin return it); all_gather moves the
              batch axis to `axis` (merged into it when tiled); axis_index is an iota over
              the batch. The result is the same for every member: unbatched. Names left in
              the tuple are handed on to their own owners.
  pass-through  the collective is elementwise across this vmap's members: it is applied
              to the batched values as they are (all_gather and axis_index adjust for the
              batch axis).
ppermute's owner moves rows: member t gets row s for each (s, t), zeros where none is sent.
psum_scatter's owner sums over the members and hands member i block i (own axis only).
Multiple names ('i', 'j'): axis_index is i * size(j) + j, major to minor in the order given.
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend.core import ShapedArray
from xlapy.frontend.primitives import basic
from xlapy.frontend.primitives import all_to_all as A
from xlapy.frontend.primitives import collectives as K
from xlapy.frontend.primitives.shapes import (concatenate, iota, reduce_max, reduce_min,
                                              reduce_sum, reshape, slice_)
from xlapy.frontend.batching.trace import NOT_MAPPED, bdim_to_front, moveaxis, shape_of


def _reduce_member(kind, x, d, n):
    if kind == "psum":
        if basic.aval_of(x).dtype == np.bool_:
            x = basic.convert(x, np.int32)
        if d is NOT_MAPPED:
            return basic.mul(x, basic.full(shape_of(x), n, basic.aval_of(x).dtype))
        return reduce_sum(x, (d,))
    if d is NOT_MAPPED:
        return x
    return (reduce_max if kind == "pmax" else reduce_min)(x, (d,))


def _reduction_rule(prim, kind):
    def rule(frame, vals, dims, axis_name):
        if frame.name not in axis_name:
            return prim.bind(*vals, axis_name=axis_name), list(dims)
        outs = [_reduce_member(kind, x, d, frame.size) for x, d in zip(vals, dims)]
        rest = tuple(a for a in axis_name if a != frame.name)
        if rest:
            outs = prim.bind(*outs, axis_name=rest)
        return outs, [NOT_MAPPED] * len(outs)
    return rule


K.psum_p.def_batch(_reduction_rule(K.psum_p, "psum"))
K.pmax_p.def_batch(_reduction_rule(K.pmax_p, "pmax"))
K.pmin_p.def_batch(_reduction_rule(K.pmin_p, "pmin"))


@K.axis_index_p.def_batch
def _axis_index(frame, vals, dims, axis_name):
    # only an owner gets here (axis_index has no operands to pass through); the index over
    # several names is sum_k index_k * (product of the sizes of the names after k)
    n = frame.size
    total = None
    for k, name in enumerate(axis_name):
        weight = 1
        for later in axis_name[k + 1:]:
            weight *= K.axis_size(later)
        if name == frame.name:
            v = iota(np.int32, (n,), 0)
        else:
            v = basic.broadcast_in_dim(K.axis_index_p.bind(axis_name=(name,)), (n,), ())
        if weight != 1:
            v = basic.mul(v, basic.full((n,), weight, np.int32))
        total = v if total is None else basic.add(total, v)
    return total, 0


@K.all_gather_p.def_batch
def _all_gather(frame, vals, dims, axis_name, axis, tiled):
    (x,), (d,) = vals, dims
    if frame.name not in axis_name:
        x = moveaxis(x, d, 0)
        return K.all_gather_p.bind(x, axis_name=axis_name, axis=axis + 1, tiled=tiled), 0
    if len(axis_name) > 1:
        raise K.XlapyError("all_gather over several axis names at once is not supported; "
                           "gather over one name at a time")
    x = bdim_to_front(x, d, frame.size)              # [n, ...]: member i's x at index i
    x = moveaxis(x, 0, axis)
    if tiled:
        s = list(shape_of(x))
        s[axis:axis + 2] = [s[axis] * s[axis + 1]]
        x = reshape(x, s)
    return x, NOT_MAPPED


@K.ppermute_p.def_batch
def _ppermute(frame, vals, dims, axis_name, perm):
    (x,), (d,) = vals, dims
    if frame.name not in axis_name:
        return K.ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(axis_name) > 1:
        raise K.XlapyError("ppermute over several axis names at once is not supported")
    if any(i >= frame.size for p in perm for i in p):
        raise K.XlapyError(f"ppermute: perm {list(perm)} names members beyond the axis "
                           f"size {frame.size}")
    x = bdim_to_front(x, d, frame.size)              # [n, ...]: member i's x at index i
    shape = list(shape_of(x))
    src = {t: s for s, t in perm}
    one = [1] + shape[1:]
    rows = []
    for t in range(frame.size):
        if t in src:
            s = src[t]
            rows.append(slice_(x, [s] + [0] * (len(shape) - 1), [s + 1] + shape[1:]))
        else:
            rows.append(basic.full(one, 0, basic.aval_of(x).dtype))
    return concatenate(rows, 0), 0


@K.psum_scatter_p.def_batch
def _psum_scatter(frame, vals, dims, axis_name, scatter_dimension, tiled):
    (x,), (d,) = vals, dims
    if frame.name not in axis_name or len(axis_name) > 1:
        raise K.XlapyError("psum_scatter inside a vmap over another axis, or over several "
                           "axis names, is not supported")
    n, sd = frame.size, scatter_dimension
    member = [s for i, s in enumerate(shape_of(x)) if i != d]
    K.psum_scatter_p.abstract_eval(ShapedArray(member, basic.aval_of(x).dtype),
                                   axis_name=axis_name, scatter_dimension=sd, tiled=tiled)
    total = _reduce_member("psum", x, d, n)         # the sum over the members, unbatched
    shape = list(shape_of(total))
    if tiled:                                       # split dimension sd into n blocks
        total = reshape(total, shape[:sd] + [n, shape[sd] // n] + shape[sd + 1:])
    return moveaxis(total, sd, 0), 0                # member i gets block i


@A.all_to_all_p.def_batch
def _all_to_all(frame, vals, dims, axis_name, split_axis, concat_axis, tiled):
    (x,), (d,) = vals, dims
    if frame.name not in axis_name:   # pass-through: the batch axis rides in front
        x = moveaxis(x, d, 0)
        return A.all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + 1,
                                   concat_axis=concat_axis + 1, tiled=tiled), 0
    if len(axis_name) > 1:
        raise K.XlapyError("all_to_all over several axis names at once is not supported")
    n = frame.size
    x = bdim_to_front(x, d, frame.size)              # [n_i, ...]: member i's x at index i
    A.out_shape(list(shape_of(x))[1:], n, split_axis, concat_axis, tiled)  # checks
    s = split_axis + 1
    if tiled:                                        # split axis as (n_j blocks, block)
        shape = list(shape_of(x))
        x = reshape(x, shape[:s] + [n, shape[s] // n] + shape[s + 1:])
    x = moveaxis(x, s, 0)                            # [n_j, n_i, ...]: member j's blocks
    x = moveaxis(x, 1, 1 + concat_axis)              # member i's block at concat_axis
    if tiled:
        shape = list(shape_of(x))
        c = 1 + concat_axis
        x = reshape(x, shape[:c] + [shape[c] * shape[c + 1]] + shape[c + 2:])
    return x, 0
