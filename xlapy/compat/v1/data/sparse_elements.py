"""tf.SparseTensor components of tf.data elements: a map function may return
SparseTensors (a parsed VarLenFeature), which the element carries as one SparseTensorValue
(NumPy indices, values, dense_shape) described by a _SparseSpec leaf. Functions and
iterators see it as its three tensors; batch stacks SparseTensors as TF 1.x does (indices
gain the batch position, dense_shape is [batch] + the largest dense shape);
padded_batch and unbatch of SparseTensors are not supported."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.tensor_shape import TensorShape


class _SparseSpec:
    """A SparseTensor leaf of an element structure: its values' dtype and its (partial)
    dense shape."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, TensorShape(shape)

    def components(self) -> list:
        """(dtype, shape) of its indices, values and dense_shape."""
        rank = self.shape.ndims
        return [(dtypes.int64, TensorShape([None, rank])), (self.dtype, TensorShape([None])),
                (dtypes.int64, TensorShape([rank]))]


def is_sparse_spec(leaf) -> bool:
    return isinstance(leaf, _SparseSpec)


def any_sparse(leaves) -> bool:
    return any(isinstance(leaf, _SparseSpec) for leaf in leaves)


def component_specs(leaves) -> list:
    """(dtype, shape) of each tensor the leaves are made of."""
    out = []
    for leaf in leaves:
        out += leaf.components() if isinstance(leaf, _SparseSpec) else [(leaf.dtype,
                                                                         leaf.shape)]
    return out


def placeholders(fg, leaves) -> tuple:
    """(the function's input placeholders, one argument per leaf: a Tensor or a
    SparseTensor of three of them)."""
    from xlapy.compat.v1.ops.functional import placeholder_in
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    flat, args = [], []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, _SparseSpec):
            phs = [placeholder_in(fg, dt, sh, f"arg{i}_{part}") for (dt, sh), part in zip(
                leaf.components(), ("indices", "values", "dense_shape"))]
            flat += phs
            args.append(SparseTensor(*phs))
        else:
            ph = placeholder_in(fg, leaf.dtype, leaf.shape, f"arg{i}")
            flat.append(ph)
            args.append(ph)
    return flat, args


def outputs(fg, out_leaves) -> tuple:
    """(the function's output tensors, the leaf specs) of a function's results (Tensors or
    SparseTensors, captured into fg when they come from outside)."""
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    from xlapy.compat.v1.framework import convert_to_tensor

    def inner(t):
        if hasattr(t, "graph") and t.graph is not fg:
            return fg.capture(t)
        return t if hasattr(t, "op") else convert_to_tensor(t)
    flat, specs = [], []
    for t in out_leaves:
        if isinstance(t, SparseTensor):
            parts = [inner(x) for x in (t.indices, t.values, t.dense_shape)]
            flat += parts
            specs.append(_SparseSpec(t.dtype, t.shape))
        else:
            from xlapy.compat.v1.data.structure import _Spec
            x = inner(t)
            flat.append(x)
            specs.append(_Spec(x.dtype, x.shape))
    return flat, specs


def expand(values, leaves) -> list:
    """An element's values as the tensors of its leaves (a SparseTensorValue: three)."""
    if not any_sparse(leaves):
        return values
    out = []
    for v, leaf in zip(values, leaves):
        out += list(v) if isinstance(leaf, _SparseSpec) else [v]
    return out


def collapse(flat, leaves) -> list:
    """The inverse of expand: three arrays of a sparse leaf become a SparseTensorValue."""
    if not any_sparse(leaves):
        return [np.asarray(v) for v in flat]
    from xlapy.compat.v1.sparse_tensor import SparseTensorValue
    out, i = [], 0
    for leaf in leaves:
        if isinstance(leaf, _SparseSpec):
            out.append(SparseTensorValue(*[np.asarray(v) for v in flat[i:i + 3]]))
            i += 3
        else:
            out.append(np.asarray(flat[i]))
            i += 1
    return out


def batch_sparse(parts):
    """SparseTensorValues stacked along a new first dimension, as TF 1.x batches them."""
    from xlapy.compat.v1.sparse_tensor import SparseTensorValue
    ranks = {len(p.dense_shape) for p in parts}
    if len(ranks) != 1:
        raise InvalidArgumentError(f"batch: SparseTensors of different ranks {sorted(ranks)} "
                                   "cannot be batched")
    rank = ranks.pop()
    shape = np.max(np.stack([np.asarray(p.dense_shape, np.int64) for p in parts]), axis=0)
    idx = [np.concatenate([np.full([len(p.indices), 1], i, np.int64),
                           np.asarray(p.indices, np.int64).reshape(len(p.indices), rank)], 1)
           for i, p in enumerate(parts)]
    vals = np.concatenate([np.asarray(p.values) for p in parts])
    return SparseTensorValue(np.concatenate(idx), vals,
                             np.concatenate([[len(parts)], shape]).astype(np.int64))


def refuse(leaves, what):
    if any_sparse(leaves):
        raise UnimplementedError(f"Dataset.{what} of elements with SparseTensor components "
                                 "is not supported by xlapy (batch them, or make them dense "
                                 "with tf.sparse_tensor_to_dense in the map function)")
