"""tf.sparse: the SparseTensor ops of TF 1.15 under one namespace (ops/sparse_ops.py)."""

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

__all__ = ["SparseTensor", "add", "concat", "from_dense", "matmul", "placeholder",
           "reduce_sum", "reorder", "reshape", "retain", "segment_mean", "segment_sqrt_n",
           "segment_sum", "sparse_dense_matmul", "to_dense", "transpose"]
