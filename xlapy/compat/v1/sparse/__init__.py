"""tf.sparse: the SparseTensor ops of TF 1.15 under one namespace (ops/sparse_ops.py,
ops/sparse_more*.py)."""

from xlapy.compat.v1.ops.sparse_ops import from_dense, sparse_placeholder as placeholder
from xlapy.compat.v1.ops.sparse_ops import sparse_add as add
from xlapy.compat.v1.ops.sparse_ops import sparse_concat as concat
from xlapy.compat.v1.ops.sparse_ops import sparse_reduce_sum as reduce_sum
from xlapy.compat.v1.ops.sparse_ops import sparse_reorder as reorder
from xlapy.compat.v1.ops.sparse_ops import sparse_reshape as reshape
from xlapy.compat.v1.ops.sparse_ops import sparse_retain as retain
from xlapy.compat.v1.ops.sparse_ops import sparse_tensor_dense_matmul as matmul
from xlapy.compat.v1.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from xlapy.compat.v1.ops.sparse_ops import sparse_tensor_to_dense as to_dense
from xlapy.compat.v1.ops.sparse_ops import sparse_transpose as transpose
from xlapy.compat.v1.sparse_tensor import SparseTensor
from xlapy.compat.v1.ops.mathx_segment import sparse_segment_mean as segment_mean
from xlapy.compat.v1.ops.mathx_segment import sparse_segment_sqrt_n as segment_sqrt_n
from xlapy.compat.v1.ops.mathx_segment import sparse_segment_sum as segment_sum
from xlapy.compat.v1.ops.queue_more_accum import SparseConditionalAccumulator
from xlapy.compat.v1.ops.sparse_more import sparse_fill_empty_rows as fill_empty_rows
from xlapy.compat.v1.ops.sparse_more import sparse_mask as mask
from xlapy.compat.v1.ops.sparse_more import sparse_maximum as maximum
from xlapy.compat.v1.ops.sparse_more import sparse_minimum as minimum
from xlapy.compat.v1.ops.sparse_more import sparse_slice as slice
from xlapy.compat.v1.ops.sparse_more import sparse_softmax as softmax
from xlapy.compat.v1.ops.sparse_more import sparse_split as split
from xlapy.compat.v1.ops.sparse_more_io import sparse_cross as cross
from xlapy.compat.v1.ops.sparse_more_io import sparse_cross_hashed as cross_hashed
from xlapy.compat.v1.ops.sparse_more_shape import sparse_expand_dims as expand_dims
from xlapy.compat.v1.ops.sparse_more_shape import sparse_eye as eye
from xlapy.compat.v1.ops.sparse_more_shape import sparse_merge as merge
from xlapy.compat.v1.ops.sparse_more_shape import sparse_reduce_max as reduce_max
from xlapy.compat.v1.ops.sparse_more_shape import sparse_reduce_max_sparse as reduce_max_sparse
from xlapy.compat.v1.ops.sparse_more_shape import sparse_reduce_sum_sparse as reduce_sum_sparse
from xlapy.compat.v1.ops.sparse_more_shape import sparse_reset_shape as reset_shape
from xlapy.compat.v1.ops.sparse_more_shape import sparse_to_indicator as to_indicator

__all__ = ["SparseConditionalAccumulator", "SparseTensor", "add", "concat", "cross",
           "cross_hashed", "expand_dims", "eye", "fill_empty_rows", "from_dense", "mask",
           "matmul", "maximum", "merge", "minimum", "placeholder", "reduce_max",
           "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse", "reorder", "reset_shape",
           "reshape", "retain", "segment_mean", "segment_sqrt_n", "segment_sum", "slice",
           "softmax", "sparse_dense_matmul", "split", "to_dense", "to_indicator", "transpose"]
