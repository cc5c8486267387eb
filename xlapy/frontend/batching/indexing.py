"""Batching rules of gather, the scatters, dynamic_slice and dynamic_update_slice
(primitives/indexing.py, dynamic_slice.py). Batch axes go first, then:

  gather       operand batched only: the batch axis is one more sliced (offset) dim taken
               whole (slice size n, output axis 0). indices batched only: one more index
               batch dim (output axis 0). Both: an operand_batching_dims /
               start_indices_batching_dims pair (XLA's batched gather), output axis 0.
  scatter*     indices unbatched: the batch axis is one more window dim of the operand and
               the updates (both batched, an unmapped one broadcast). indices batched: an
               operand_batching_dims / scatter_indices_batching_dims pair.
  dynamic_slice with unbatched starts: a start of 0 and a slice of the whole batch axis;
               with batched starts it becomes a gather of one window per member (as JAX
               does), which clamps its starts exactly as dynamic_slice does.
  dynamic_update_slice with unbatched starts: a start of 0 on the batch axis; with batched
               starts a scatter of one window per member, its starts clamped first (a
               scatter would drop an out-of-range window where dynamic_update_slice clamps).
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend.core import bind
from xlapy.frontend.primitives import basic, indexing
from xlapy.frontend.primitives import dynamic_slice as ds
from xlapy.frontend.primitives.indexing import GatherDimensionNumbers as GDN
from xlapy.frontend.primitives.indexing import ScatterDimensionNumbers as SDN
from xlapy.frontend.primitives.shapes import concatenate, reshape
from xlapy.frontend.batching.trace import NOT_MAPPED, batch_size, bdim_to_front, shape_of


def _up(ds_) -> tuple:
    return tuple(d + 1 for d in ds_)


# ---- gather -------------------------------------------------------------------------------


@indexing.gather_p.def_batch
def _gather(frame, vals, dims, dimension_numbers, slice_sizes):
    (x, idx), (bx, bi) = vals, dims
    dn = dimension_numbers
    n = batch_size(vals, dims)
    if bi is NOT_MAPPED:
        x = bdim_to_front(x, bx, n)
        new = GDN((0,) + _up(dn.offset_dims), _up(dn.collapsed_slice_dims),
                  _up(dn.start_index_map), _up(dn.operand_batching_dims),
                  dn.start_indices_batching_dims)
        sizes = (n,) + tuple(slice_sizes)
    elif bx is NOT_MAPPED:
        idx = bdim_to_front(idx, bi, n)
        new = GDN(_up(dn.offset_dims), dn.collapsed_slice_dims, dn.start_index_map,
                  dn.operand_batching_dims, _up(dn.start_indices_batching_dims))
        sizes = tuple(slice_sizes)
    else:
        x, idx = bdim_to_front(x, bx, n), bdim_to_front(idx, bi, n)
        new = GDN(_up(dn.offset_dims), _up(dn.collapsed_slice_dims), _up(dn.start_index_map),
                  (0,) + _up(dn.operand_batching_dims),
                  (0,) + _up(dn.start_indices_batching_dims))
        sizes = (1,) + tuple(slice_sizes)
    return bind(indexing.gather_p, x, idx, dimension_numbers=new, slice_sizes=sizes), 0


# ---- scatters -----------------------------------------------------------------------------


def _scatter_rule(prim):
    def rule(frame, vals, dims, dimension_numbers):
        (x, idx, u), (bx, bi, bu) = vals, dims
        dn = dimension_numbers
        n = batch_size(vals, dims)
        x, u = bdim_to_front(x, bx, n), bdim_to_front(u, bu, n)
        if bi is NOT_MAPPED:
            new = SDN((0,) + _up(dn.update_window_dims), _up(dn.inserted_window_dims),
                      _up(dn.scatter_dims_to_operand_dims), _up(dn.operand_batching_dims),
                      dn.scatter_indices_batching_dims)
        else:
            idx = bdim_to_front(idx, bi, n)
            new = SDN(_up(dn.update_window_dims), _up(dn.inserted_window_dims),
                      _up(dn.scatter_dims_to_operand_dims),
                      (0,) + _up(dn.operand_batching_dims),
                      (0,) + _up(dn.scatter_indices_batching_dims))
        return bind(prim, x, idx, u, dimension_numbers=new), 0
    return rule


for _p in (indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p,
           indexing.scatter_min_p, indexing.scatter_max_p):
    _p.def_batch(_scatter_rule(_p))

# ---- dynamic_slice / dynamic_update_slice ---------------------------------------------------


def _index_vectors(starts, sdims, n):
    """The starts as one int array [n, k]: row i holds member i's start vector."""
    cols = [reshape(bdim_to_front(s, d, n), (n, 1)) for s, d in zip(starts, sdims)]
    return concatenate(cols, 1)


def _start_dtype(starts):
    return basic.aval_of(starts[0]).dtype if starts else np.dtype(np.int32)


@ds.dynamic_slice_p.def_batch
def _dynamic_slice(frame, vals, dims, slice_sizes):
    x, starts = vals[0], vals[1:]
    bx, sdims = dims[0], dims[1:]
    n = batch_size(vals, dims)
    if all(d is NOT_MAPPED for d in sdims):
        zero = np.zeros((), _start_dtype(starts))
        starts = list(starts[:bx]) + [zero] + list(starts[bx:])
        sizes = tuple(slice_sizes[:bx]) + (n,) + tuple(slice_sizes[bx:])
        return bind(ds.dynamic_slice_p, x, *starts, slice_sizes=sizes), bx
    k = len(starts)
    idx = _index_vectors(starts, sdims, n)
    window = tuple(range(1, k + 1))
    if bx is NOT_MAPPED:
        dn, sizes = GDN(window, (), tuple(range(k))), tuple(slice_sizes)
    else:
        x = bdim_to_front(x, bx, n)
        dn, sizes = GDN(window, (), window, (0,), (0,)), (1,) + tuple(slice_sizes)
    return bind(indexing.gather_p, x, idx, dimension_numbers=dn, slice_sizes=sizes), 0


@ds.dynamic_update_slice_p.def_batch
def _dynamic_update_slice(frame, vals, dims):
    x, u, starts = vals[0], vals[1], vals[2:]
    bx, bu, sdims = dims[0], dims[1], dims[2:]
    n = batch_size(vals, dims)
    x, u = bdim_to_front(x, bx, n), bdim_to_front(u, bu, n)
    if all(d is NOT_MAPPED for d in sdims):
        zero = np.zeros((), _start_dtype(starts))
        return bind(ds.dynamic_update_slice_p, x, u, zero, *starts), 0
    # clamp each start to [0, dim - update size] as dynamic_update_slice does
    xs, us = shape_of(x)[1:], shape_of(u)[1:]
    dt = _start_dtype(starts)
    clamped, cdims = [], []
    for s, d, dim, size in zip(starts, sdims, xs, us):
        hi = np.asarray(dim - size, dt)
        s = basic.min_(basic.max_(s, basic.full_like(s, 0)), basic.full(shape_of(s), hi, dt))
        clamped.append(s)
        cdims.append(d)
    k = len(starts)
    window = tuple(range(1, k + 1))
    idx = _index_vectors(clamped, cdims, n)
    dn = SDN(window, (), window, (0,), (0,))
    return bind(indexing.scatter_p, x, idx, u, dimension_numbers=dn), 0
