"""The tf.* names of the ops beyond the basics (control flow, gathers, manipulation,
variable updates), collected for xlapy.compat.v1's namespace."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.ops import (activation_ops, clip_ops, cond_ops,  # noqa: F401
                                 control_flow_ops, conv_ops, embedding_ops, functional_ops,
                                 gather_ops, logging_ops, manip_ops, norm_ops, pool_ops,
                                 variable_ops)
from xlapy.compat.v1.ops.clip_ops import (clip_by_global_norm, clip_by_norm, clip_by_value,
                                          global_norm, norm, reduce_logsumexp)
from xlapy.compat.v1.ops.cond_ops import case, cond
from xlapy.compat.v1.ops.control_flow_ops import while_loop
from xlapy.compat.v1.ops.functional_ops import foldl, foldr, map_fn, scan
from xlapy.compat.v1.ops.tensor_array_ops import TensorArray
from xlapy.compat.v1.ops.gather_ops import (argsort, boolean_mask, gather, gather_nd,
                                            scatter_nd, segment_sum, sort, unique,
                                            unsorted_segment_sum)
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.logging_ops import Print, print_v2
from xlapy.compat.v1.ops.manip_ops import (cumprod, cumsum, einsum, is_finite, is_inf, is_nan,
                                           lin_space, matrix_band_part, meshgrid, pad,
                                           range_, reverse, reverse_sequence, reverse_v2,
                                           sequence_mask, split, tensordot, truncatediv,
                                           truncatemod)
from xlapy.compat.v1.ops.variable_ops import (assign, assign_add, assign_sub, scatter_add,
                                              scatter_sub, scatter_update)

linspace = lin_space
range = range_  # tf.range
print = print_v2  # tf.print


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype="int64", name=None,
                  reduction_indices=None, keep_dims=None, input=None):
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops._common import tensor
    from xlapy.compat.v1.ops.math_ops import cast, not_equal, reduce_sum
    x = tensor(input_tensor if input is None else input)
    nz = cast(not_equal(x, tensor(np.zeros((), x.dtype.np))), dtypes.as_dtype(dtype))
    return reduce_sum(nz, axis if axis is not None else reduction_indices,
                      keepdims=keepdims if keepdims is not None else keep_dims, name=name)


def logical_xor(x, y, name="LogicalXor"):
    from xlapy.compat.v1.ops.math_ops import logical_and, logical_not, logical_or
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


__all__ = ["case", "cond", "while_loop", "foldl", "foldr", "map_fn", "scan", "TensorArray",
           "argsort",
           "boolean_mask", "gather", "gather_nd", "scatter_nd", "segment_sum", "sort",
           "unique", "unsorted_segment_sum", "where", "Print", "clip_by_global_norm",
           "clip_by_norm", "clip_by_value", "cumprod", "cumsum", "einsum", "global_norm",
           "is_finite", "is_inf", "is_nan", "lin_space", "linspace", "matrix_band_part",
           "meshgrid", "norm", "pad", "print", "range", "reduce_logsumexp", "reverse",
           "reverse_sequence", "reverse_v2", "sequence_mask", "split", "tensordot",
           "truncatediv", "truncatemod", "assign", "assign_add", "assign_sub", "scatter_add",
           "scatter_sub", "scatter_update", "count_nonzero", "logical_xor"]
