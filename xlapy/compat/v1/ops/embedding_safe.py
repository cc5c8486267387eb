"""tf.nn.safe_embedding_lookup_sparse: embedding_lookup_sparse that tolerates invalid ids
(< 0, pruned), non-positive weights (pruned unless combiner is "sum"), empty rows (zero
vectors, or default_id's embedding) and sparse ids of rank > 2 (the leading dimensions
flattened into rows, restored in the result), as TF's.

Where TF fills the empty rows with default_id (sparse_fill_empty_rows) and then combines,
this combines into all dense_shape[0] rows with an unsorted segment sum (a row without
entries sums to 0; mean and sqrtn divide with div_no_nan) and selects default_id's
embedding for the empty rows: the same values.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, expand_dims, ones_like, reshape, shape
from xlapy.compat.v1.ops.embedding_ops import embedding_lookup
from xlapy.compat.v1.ops.gather_ops import unsorted_segment_sum
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (cast, equal, greater, greater_equal, logical_and,
                                          multiply, reduce_prod, sqrt, square)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    from xlapy.compat.v1.ops.sparse_ops import sparse_reshape, sparse_retain
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    if combiner not in ("mean", "sqrtn", "sum"):
        raise InvalidArgumentError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if not isinstance(sparse_ids, SparseTensor):
        raise InvalidTypeError("sparse_ids must be SparseTensor")
    params = embedding_weights
    if isinstance(params, (list, tuple)) and not params:
        raise InvalidArgumentError("Missing embedding_weights.")
    with get_default_graph().name_scope(name or "embedding_lookup"):
        orig = cast(sparse_ids.dense_shape, dtypes.int64)
        rank = sparse_ids.dense_shape.shape.dims[0]
        if rank is None:
            raise InvalidArgumentError("safe_embedding_lookup_sparse needs the rank of "
                                       "sparse_ids")
        rows = reduce_prod(orig[:rank - 1])
        ids = sparse_reshape(sparse_ids, concat([expand_dims(rows, 0), orig[rank - 1:]], 0))
        wts = None
        if sparse_weights is not None:
            wts = SparseTensor(ids.indices, sparse_weights.values, ids.dense_shape)
        keep = greater_equal(ids.values, tensor(np.zeros((), ids.values.dtype.np)))
        if wts is not None and combiner != "sum":
            keep = logical_and(keep, greater(wts.values, tensor(np.zeros((), wts.values.dtype
                                                                         .np))))
        ids_kept = sparse_retain(ids, keep)
        seg = cast(ids_kept.indices[:, 0], dtypes.int32)
        n_rows = cast(rows, dtypes.int32)
        emb = embedding_lookup(params, ids_kept.values, partition_strategy, max_norm=max_norm)
        er = emb.shape.ndims
        if wts is not None:
            w = cast(sparse_retain(wts, keep).values, emb.dtype)
        else:
            w = cast(ones_like(seg), emb.dtype)
        wb = w
        for _ in range(er - 1):
            wb = expand_dims(wb, -1)
        summed = unsorted_segment_sum(multiply(emb, wb), seg, n_rows)
        count = unsorted_segment_sum(ones_like(seg), seg, n_rows)
        if combiner == "sum":
            out = summed
        else:
            d = unsorted_segment_sum(w if combiner == "mean" else square(w), seg, n_rows)
            if combiner == "sqrtn":
                d = sqrt(d)
            for _ in range(er - 1):
                d = expand_dims(d, -1)
            out = div_no_nan(summed, d)
        empty = equal(count, 0)
        for _ in range(er - 1):
            empty = expand_dims(empty, -1)
        empty = logical_and(empty, cast(ones_like(out), dtypes.bool))  # full-shaped
        if default_id is not None:
            dflt = embedding_lookup(params, tensor(np.asarray([default_id], np.int64)),
                                    partition_strategy, max_norm=max_norm)
            out = where(empty, multiply(ones_like(out), dflt), out)
        else:
            out = where(empty, multiply(out, 0.0), out)
        return reshape(out, concat([cast(orig[:rank - 1], dtypes.int32), shape(out)[1:]], 0))
