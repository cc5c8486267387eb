"""all_to_all over a named axis (as jax.lax.all_to_all), with its lowering, VJP and vmap rules.

Member j's result gathers block j of every member's x:
    untiled   x.shape[split_axis] is the axis size n; the result drops split_axis and has a
              new axis of size n at concat_axis: out_j[.., i @ concat_axis, ..] = x_i[.., j @
              split_axis, ..]
    tiled     split_axis is cut into n blocks (it must divide); block j of member i is the
              i-th block along concat_axis of member j's result
Over a pmap axis it lowers to HLO's one-dimension all-to-all on a leading axis of blocks
(transposes and reshapes around it). It is linear; its transpose swaps the two axes.
"""

from __future__ import annotations

from xlapy.errors import XlapyError
from xlapy.frontend.core import ShapedArray
from xlapy.frontend.primitives import collectives as K


def _group_size(axis_name) -> int:
    n = 1
    for name in axis_name:
        n *= K.axis_size(name)
    return n


def out_shape(shape, n, split_axis, concat_axis, tiled, where="all_to_all"):
    shape = list(shape)
    nd = len(shape)
    if not 0 <= split_axis < nd or not 0 <= concat_axis < nd:
        raise XlapyError(f"{where}: split_axis {split_axis} and concat_axis {concat_axis} "
                         f"must be axes of the operand of shape {tuple(shape)}")
    if tiled:
        if shape[split_axis] % n:
            raise XlapyError(f"{where}: the size of split_axis ({shape[split_axis]}) has to "
                             f"be divisible by the size of the named axis ({n})")
        shape[split_axis] //= n
        shape[concat_axis] *= n
        return shape
    if shape[split_axis] != n:
        raise XlapyError(f"{where}: the size of split_axis ({shape[split_axis]}) must equal "
                         f"the size of the named axis ({n}) (or pass tiled=True)")
    del shape[split_axis]
    shape.insert(concat_axis, n)
    return shape


all_to_all_p = K._collective("all_to_all")


@all_to_all_p.def_abstract_eval
def _aval(a, *, axis_name, split_axis, concat_axis, tiled):
    n = _group_size(axis_name)
    return ShapedArray(out_shape(a.shape, n, split_axis, concat_axis, tiled), a.dtype)


def _move(b, x, src, dst):
    perm = [d for d in range(x.shape.rank) if d != src]
    perm.insert(dst, src)
    return x if perm == list(range(x.shape.rank)) else b.transpose(x, perm)


@all_to_all_p.def_lowering
def _lowering(ctx, x, *, axis_name, split_axis, concat_axis, tiled):
    n = K._pmap_size(axis_name)
    b = ctx.b
    dims = list(x.shape.dims)
    if tiled:  # the split axis as (n blocks, block)
        dims[split_axis:split_axis + 1] = [n, dims[split_axis] // n]
        x = b.reshape(x, dims)
    x = _move(b, x, split_axis, 0)             # block j at index j of a leading axis
    x = b.op("all-to-all", x, dimensions=(0,), replica_groups=K._ALL)  # [i] from member i
    if not tiled:
        return _move(b, x, 0, concat_axis)
    x = _move(b, x, 0, concat_axis)            # [.., i, C, ..]: merged member-major
    dims = list(x.shape.dims)
    dims[concat_axis:concat_axis + 2] = [dims[concat_axis] * dims[concat_axis + 1]]
    return b.reshape(x, dims)


all_to_all_p.def_vjp(lambda ct, x, *, out, axis_name, split_axis, concat_axis, tiled: (
    all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                      concat_axis=split_axis, tiled=tiled),))

__all__ = ["all_to_all_p", "out_shape"]
