"""Small TF 1.15 array functions: tf.histogram_fixed_width_bins, tf.batch_scatter_update and
tf.guarantee_const (tf.floor_div is math_ops' FloorDiv).

histogram_fixed_width_bins is TF's composition: floor(nbins * (v - lo) / (hi - lo)) clipped
to [0, nbins - 1], int32 whatever `dtype` says (TF 1.15 ignores it too), in the shape of
`values`. batch_scatter_update writes updates[b..., j, ...] into ref[b..., indices[b..., j],
...] (a scatter in each batch of the leading indices.rank - 1 dimensions): as TF's, one
scatter with indices built from ranges over those dimensions; here a TensorScatterUpdate
of the variable's value assigned back to it, so the op returned is the Assign (its output
the updated value). guarantee_const is TF's GuaranteeConst, an identity that promises the
runtime its input is constant; like TF, it has no gradient.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_op
from xlapy.compat.v1.ops._common import constant_value, make, same_as_input, tensor
from xlapy.compat.v1.ops.array_ops import broadcast_to, expand_dims, reshape, shape, stack
from xlapy.compat.v1.ops.array_extra_ops import tensor_scatter_nd_update
from xlapy.compat.v1.ops.clip_ops import clip_by_value
from xlapy.compat.v1.ops.manip_ops import range_
from xlapy.compat.v1.ops.math_ops import cast, floor, floor_div, multiply, subtract, truediv
from xlapy.compat.v1.ops.variable_ops import _ref, assign

__all__ = ["batch_scatter_update", "floor_div", "guarantee_const",
           "histogram_fixed_width_bins"]


# ---- histogram_fixed_width_bins ------------------------------------------------------------

def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin index (int32) of each value among nbins equal bins over value_range; values
    below the range go to bin 0, values at or above its end to bin nbins - 1."""
    with get_default_graph().name_scope(name or "histogram_fixed_width_bins"):
        v = tensor(values)
        if v.dtype.is_integer:
            v = cast(v, dtypes.float64)
        elif not v.dtype.is_floating:
            raise InvalidArgumentError(f"histogram_fixed_width_bins: values must be numeric, "
                                       f"got {v.dtype.name}")
        vr = tensor(value_range, v.dtype) if not hasattr(value_range, "dtype") else \
            cast(tensor(value_range), v.dtype)
        if vr.shape.ndims is not None and vr.shape.as_list() not in ([2], [None]):
            raise InvalidArgumentError(f"histogram_fixed_width_bins: value_range must have "
                                       f"shape [2], got {vr.shape.tf_str()}")
        nb = tensor(nbins, dtypes.int32) if not hasattr(nbins, "dtype") else tensor(nbins)
        nv = constant_value(nb)
        if nv is not None and int(np.reshape(nv, [-1])[0]) <= 0:
            raise InvalidArgumentError(f"histogram_fixed_width_bins: nbins must be positive, "
                                       f"got {int(np.reshape(nv, [-1])[0])}")
        nb_f = cast(nb, v.dtype)
        flat = reshape(v, [-1])
        scaled = truediv(subtract(flat, vr[0]), subtract(vr[1], vr[0]))
        idx = floor(multiply(nb_f, scaled))
        one = tensor(np.ones((), v.dtype.np))
        idx = clip_by_value(idx, tensor(np.zeros((), v.dtype.np)), subtract(nb_f, one))
        return reshape(cast(idx, dtypes.int32), shape(v))


# ---- batch_scatter_update ------------------------------------------------------------------

def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[b..., indices[b..., j], ...] = updates[b..., j, ...] for every batch index b...
    (the leading indices.rank - 1 dimensions); returns the updated variable's value."""
    r = _ref(ref)
    with get_default_graph().name_scope(name or "batch_scatter_update"):
        idx = tensor(indices)
        if idx.dtype not in (dtypes.int32, dtypes.int64):
            raise InvalidArgumentError(f"batch_scatter_update: indices must be int32 or "
                                       f"int64, got {idx.dtype.name}")
        rank = idx.shape.ndims
        if rank is None:
            raise InvalidArgumentError("batch_scatter_update does not allow indices with "
                                       "unknown shape.")
        if rank == 0:
            raise InvalidArgumentError("batch_scatter_update: indices must have rank >= 1")
        if r.shape.ndims is not None and r.shape.ndims < rank:
            raise InvalidArgumentError(f"batch_scatter_update: the variable (shape "
                                       f"{r.shape.tf_str()}) must have rank >= the rank of "
                                       f"indices ({rank})")
        s = shape(idx, out_type=idx.dtype)
        coords = []
        for i in range(rank - 1):
            dims = [1] * rank
            dims[i] = -1
            coords.append(broadcast_to(reshape(range_(s[i], dtype=idx.dtype), dims), s))
        nd = stack(coords + [idx], axis=-1) if coords else expand_dims(idx, -1)
        value = tensor(ref)
        new = tensor_scatter_nd_update(value, nd, tensor(updates, dtype=r.dtype))
        return assign(ref, new, use_locking=use_locking)


# ---- guarantee_const -----------------------------------------------------------------------

register_op("GuaranteeConst", infer=same_as_input(0))(lambda m, x: x)


def guarantee_const(input, name=None):
    """`input` itself, promised to the runtime to be constant (TF's GuaranteeConst); it has
    no gradient, as TF's."""
    return make("GuaranteeConst", [tensor(input)], name=name or "GuaranteeConst")
