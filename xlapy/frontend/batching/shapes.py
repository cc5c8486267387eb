"""Batching rules of the data-movement and reduction primitives (primitives/shapes.py):
reshape, transpose, broadcast_in_dim, reductions, argmax/argmin, dot_general, slice, pad,
concatenate, rev. iota has no operands, so it is never batched.

The algebra, with b the batch axis of the operand and phys(a) the batched value's axis
holding logical axis a:
  reduce(x, axes)        reduce over phys(axes); the batch axis moves left past the reduced
                         axes that were before it
  argmax(x, axis)        the same with one axis
  transpose / reshape / broadcast_in_dim
                         batch axis first, the parameters shifted by one
  slice / rev / pad      the batch axis untouched (full range, not reversed, not padded); a
                         batched padding value becomes a select between the padded operand
                         and the broadcast value
  dot_general            both batched: a new leading batch dimension pair; one batched: its
                         batch axis is one more free dimension (a bigger matrix product);
                         matrix @ batched vector is computed as vectors @ matrix^T so the
                         batch axis comes out first
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.primitives import basic, shapes
from xlapy.frontend.batching.trace import (NOT_MAPPED, batch_size, bdim_to_front, moveaxis,
                                           phys, shape_of)

# ---- reshape / transpose / broadcast_in_dim --------------------------------------------------


@shapes.reshape_p.def_batch
def _reshape(frame, vals, dims, new_sizes):
    x = moveaxis(vals[0], dims[0], 0)
    return shapes.reshape(x, (shape_of(x)[0],) + tuple(new_sizes)), 0


@shapes.transpose_p.def_batch
def _transpose(frame, vals, dims, permutation):
    (x,), (b,) = vals, dims
    perm = (b,) + tuple(phys(p, b) for p in permutation)
    return shapes.transpose(x, perm), 0


@basic.broadcast_in_dim_p.def_batch
def _broadcast_in_dim(frame, vals, dims, shape, broadcast_dimensions):
    x = moveaxis(vals[0], dims[0], 0)
    n = shape_of(x)[0]
    return basic.broadcast_in_dim(x, (n,) + tuple(shape),
                                  (0,) + tuple(d + 1 for d in broadcast_dimensions)), 0


# ---- reductions ------------------------------------------------------------------------------

def _reduction_rule(prim):
    def rule(frame, vals, dims, axes):
        (x,), (b,) = vals, dims
        paxes = tuple(sorted(phys(a, b) for a in axes))
        out_dim = b - sum(1 for a in paxes if a < b)
        return bind(prim, x, axes=paxes), out_dim
    return rule


for _p in (shapes.reduce_sum_p, shapes.reduce_max_p, shapes.reduce_min_p, shapes.reduce_prod_p,
           shapes.reduce_and_p, shapes.reduce_or_p):
    _p.def_batch(_reduction_rule(_p))


def _arg_rule(prim):
    def rule(frame, vals, dims, axis, index_dtype):
        (x,), (b,) = vals, dims
        pa = phys(axis, b)
        return bind(prim, x, axis=pa, index_dtype=index_dtype), b - (pa < b)
    return rule


shapes.argmax_p.def_batch(_arg_rule(shapes.argmax_p))
shapes.argmin_p.def_batch(_arg_rule(shapes.argmin_p))

# ---- dot_general -----------------------------------------------------------------------------


@shapes.dot_general_p.def_batch
def _dot_general(frame, vals, dims, dimension_numbers, preferred_element_type, **extra):
    (x, y), (bx, by) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    pet = preferred_element_type
    # (extra: precision, when given; it applies per operand, so the swap below swaps it)

    def shift(ds, b):
        return tuple(phys(d, b) for d in ds)

    if bx is not NOT_MAPPED and by is not NOT_MAPPED:
        # a new batch dimension pair, first among the batch dims: the result's axis 0
        dn = ((shift(lc, bx), shift(rc, by)), ((bx,) + shift(lb, bx), (by,) + shift(rb, by)))
        return bind(shapes.dot_general_p, x, y, dimension_numbers=dn,
                    preferred_element_type=pet, **extra), 0
    if bx is not NOT_MAPPED:
        # one more free dim of the lhs: result dims are [batch, lhs free, rhs free]
        lc2, lb2 = shift(lc, bx), shift(lb, bx)
        free = [d for d in range(len(shape_of(x))) if d not in lc2 and d not in lb2]
        dn = ((lc2, tuple(rc)), (lb2, tuple(rb)))
        return bind(shapes.dot_general_p, x, y, dimension_numbers=dn,
                    preferred_element_type=pet, **extra), len(lb) + free.index(bx)
    rc2, rb2 = shift(rc, by), shift(rb, by)
    yfree = [d for d in range(len(shape_of(y))) if d not in rc2 and d not in rb2]
    if yfree == [by]:
        # the batch axis is the rhs's only free dim (matrix @ batched vectors): swap the
        # operands so it comes out right after the batch dims, where the lhs free dims were
        dn = ((rc2, tuple(lc)), (rb2, tuple(lb)))
        swapped = {k: tuple(reversed(v)) for k, v in extra.items()}
        return bind(shapes.dot_general_p, y, x, dimension_numbers=dn,
                    preferred_element_type=pet, **swapped), len(lb)
    nx = len(shape_of(x))
    nlfree = nx - len(lc) - len(lb)
    dn = ((tuple(lc), rc2), (tuple(lb), rb2))
    return bind(shapes.dot_general_p, x, y, dimension_numbers=dn,
                preferred_element_type=pet, **extra), len(lb) + nlfree + yfree.index(by)


# ---- slice / pad / concatenate / rev ---------------------------------------------------------


@shapes.slice_p.def_batch
def _slice(frame, vals, dims, starts, limits, strides):
    (x,), (b,) = vals, dims
    n = shape_of(x)[b]
    ins = lambda t, v: tuple(t[:b]) + (v,) + tuple(t[b:])
    return bind(shapes.slice_p, x, starts=ins(starts, 0), limits=ins(limits, n),
                strides=ins(strides, 1)), b


@shapes.pad_p.def_batch
def _pad(frame, vals, dims, config):
    (x, v), (bx, bv) = vals, dims
    n = batch_size(vals, dims)
    if bv is NOT_MAPPED:
        cfg = tuple(config[:bx]) + ((0, 0, 0),) + tuple(config[bx:])
        return bind(shapes.pad_p, x, v, config=cfg), bx
    # a batched padding value: pad with zero, then select the value where padding went
    x = bdim_to_front(x, bx, n)
    cfg = ((0, 0, 0),) + tuple(config)
    zero = basic.full((), 0, basic.aval_of(x).dtype)
    padded = shapes.pad(x, zero, cfg)
    out_shape = shape_of(padded)
    mask = shapes.pad(basic.full(shape_of(x), True, bool), basic.full((), False, bool), cfg)
    value = basic.broadcast_in_dim(moveaxis(v, bv, 0), out_shape, (0,))
    return basic.select(mask, padded, value), 0


@shapes.concatenate_p.def_batch
def _concatenate(frame, vals, dims, dimension):
    n = batch_size(vals, dims)
    xs = [bdim_to_front(v, d, n) for v, d in zip(vals, dims)]
    return bind(shapes.concatenate_p, *xs, dimension=dimension + 1), 0


@shapes.rev_p.def_batch
def _rev(frame, vals, dims, dimensions):
    (x,), (b,) = vals, dims
    return bind(shapes.rev_p, x, dimensions=tuple(phys(d, b) for d in dimensions)), b

