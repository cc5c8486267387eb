"""Sparse ops on tf.SparseTensor's three tensors (indices, values, dense_shape).

Ops whose outputs have static shapes given their inputs' shapes and their constant inputs
(the dense shape, the reduction axes) have XLA lowerings, written with scatters and
gathers: SparseTensorDenseMatMul, SparseToDense, SparseTensorDenseAdd, SparseReduceSum,
SparseReorder and SparseReshape. Their dense-shape and axes inputs are const_inputs, so a
sparse_placeholder whose dense shape is fed compiles once per dense shape (like a batch
size). SparseAdd of two sparse tensors (and its gradient op) has a data-dependent number
of entries and runs in the executor.

Index checks follow TF's CPU kernels in the executor (validate_indices: bounds, order,
repeats; the matmul's bounds checks); compiled, out-of-range entries are dropped, as
XLA's scatters do.

Gradients are TF's (sparse_grad.py): the matmul's for the dense operand and for the sparse
values, the values' of SparseToDense, SparseTensorDenseAdd, SparseReduceSum and
SparseReorder; indices and shapes are not differentiable.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import (constant_value, ints, make, make_op,
                                         partial_shape_value, tensor)
from xlapy.compat.v1.sparse_tensor import (SparseTensor, SparseTensorValue,
                                           convert_to_tensor_or_sparse_tensor)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

# ---- helpers ---------------------------------------------------------------------------------


def _sparse(x, what="sp_input") -> SparseTensor:
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    if not isinstance(x, SparseTensor):
        raise InvalidTypeError(f"Input must be a SparseTensor ({what}), got {type(x).__name__}")
    return x


def _check_index_dtype(t: Tensor, what: str):
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"{what} must be int32 or int64, got {t.dtype.name}")


def _fmt(row) -> str:
    return "[" + ",".join(str(int(v)) for v in row) + "]"


def check_indices(ix, shape, check_order=True) -> None:
    """TF's SparseTensor::IndicesValid: every index in bounds, in row-major order, none
    repeated; the first offending entry is reported as TF does."""
    ix = np.asarray(ix)
    if ix.ndim < 2:
        ix = ix.reshape(-1, 1)
    n = len(ix)
    if n == 0:
        return
    shape = np.asarray(shape, np.int64)
    oob = np.any((ix < 0) | (ix >= shape), axis=1)
    bad = oob.copy()
    order = np.zeros(n, np.int8)  # -1: out of order, 0: repeated, 1: increasing
    order[0] = 1
    if check_order and n > 1:
        diff = np.diff(ix, axis=0)
        nz = diff != 0
        first = np.where(nz.any(1), nz.argmax(1), -1)
        sign = np.where(first >= 0, np.sign(diff[np.arange(n - 1), np.maximum(first, 0)]), 0)
        order[1:] = sign
        bad |= order != 1
    elif not check_order:
        order[:] = 1
    if not bad.any():
        return
    i = int(np.argmax(bad))
    index = f"indices[{i}] = {_fmt(ix[i])}"
    if oob[i]:
        raise InvalidArgumentError(f"{index} is out of bounds: need 0 <= index < "
                                   f"{_fmt(shape)}")
    if order[i] < 0:
        raise InvalidArgumentError(f"{index} is out of order. Many sparse ops require sorted "
                                   "indices. Use `tf.sparse.reorder` to create a correctly "
                                   "ordered copy.")
    raise InvalidArgumentError(f"{index} is repeated")


def _drop_negative(m, col, n):
    """Negative indices made out of range (n), so that a compiled scatter drops them as it
    drops the indices past the end (instead of wrapping them)."""
    if m is np:
        return col
    z = np.zeros((), np.dtype(col.dtype))
    return m.where(m.less(col, z), np.asarray(n, np.dtype(col.dtype)), col)


def _scatter_add(m, out, key, vals):
    if m is np:
        np.add.at(out, key, vals)
        return out
    return m.at(out)[key].add(vals)


def _i64(v) -> Tensor:
    return tensor(np.asarray(v, np.int64))


def _static_shape(sp: SparseTensor):
    """The dense shape as Python ints when it is a constant, else None."""
    v = constant_value(sp.dense_shape)
    return None if v is None else [int(d) for d in np.reshape(v, [-1])]


# ---- SparseTensorDenseMatMul -------------------------------------------------------------------

def _matmul_dims(a_shape, b_shape, adjoint_a, adjoint_b):
    """(rows, inner of A, inner of B, cols): Python ints or None."""
    ad = a_shape.dims if a_shape.dims is not None else (None, None)
    bd = b_shape.dims if b_shape.dims is not None else (None, None)
    rows, inner_a = (ad[1], ad[0]) if adjoint_a else (ad[0], ad[1])
    inner_b, cols = (bd[1], bd[0]) if adjoint_b else (bd[0], bd[1])
    return rows, inner_a, inner_b, cols


def _spmm_infer(op):
    idx, vals, shp, b = op.inputs
    _check_index_dtype(idx, "a_indices")
    if vals.dtype != b.dtype:
        raise InvalidTypeError(f"Input 'b' of 'SparseTensorDenseMatMul' Op has type "
                               f"{b.dtype.name} that does not match type {vals.dtype.name} of "
                               "argument 'a_values'.")
    b.shape.with_rank(2)
    a_shape = partial_shape_value(shp)
    if a_shape.ndims is not None and a_shape.ndims != 2:
        raise InvalidArgumentError(f"Tensor 'a_shape' is not a vector of 2 elements: "
                                   f"{a_shape}")
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    rows, inner_a, inner_b, cols = _matmul_dims(a_shape, b.shape, adj_a, adj_b)
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise InvalidArgumentError(
            f"Cannot multiply A and B because inner dimension does not match: {inner_a} vs. "
            f"{inner_b}.  Did you forget a transpose?  Dimensions of A: "
            f"{a_shape.tf_str()}).  Dimensions of B: {b.shape.tf_str()}")
    return [(b.dtype, TensorShape([rows, cols]))]


def _spmm_parts(m, idx, shape_, b, adjoint_a, adjoint_b):
    s = ints(shape_)
    rows_n, inner = (s[1], s[0]) if adjoint_a else (s[0], s[1])
    bb = m.transpose(b) if adjoint_b else b
    r = idx[:, 1] if adjoint_a else idx[:, 0]
    c = idx[:, 0] if adjoint_a else idx[:, 1]
    return rows_n, inner, bb, r, c


def _spmm_lower(m, idx, vals, shape_, b, adjoint_a=False, adjoint_b=False):
    rows_n, inner, bb, r, c = _spmm_parts(m, idx, shape_, b, adjoint_a, adjoint_b)
    k = bb.shape[1]
    out = m.zeros((rows_n, k), b.dtype)
    if bb.shape[0] == 0:
        return out
    picked = m.take(bb, c, axis=0, mode="clip") * m.reshape(vals, (-1, 1))
    return m.at(out)[_drop_negative(m, r, rows_n)].add(picked)


@register_op("SparseTensorDenseMatMul", infer=_spmm_infer, attrs=("adjoint_a", "adjoint_b"),
             const_inputs=(2,), lowering=_spmm_lower)
def _spmm(m, idx, vals, shape_, b, adjoint_a=False, adjoint_b=False):
    """A (sparse: indices, values, shape) times B (dense), either adjointed."""
    rows_n, inner, bb, r, c = _spmm_parts(np, np.asarray(idx), shape_, b, adjoint_a,
                                          adjoint_b)
    if bb.shape[0] != inner:
        raise InvalidArgumentError(
            f"Cannot multiply A and B because inner dimension does not match: {inner} vs. "
            f"{bb.shape[0]}.  Did you forget a transpose?  Dimensions of A: "
            f"[{','.join(map(str, ints(shape_)))}]).  Dimensions of B: "
            f"[{','.join(map(str, b.shape))}]")
    ri, ci = (1, 0) if adjoint_a else (0, 1)
    for col, n, name, j in ((c, inner, "k", ci), (r, rows_n, "m", ri)):
        bad = (col < 0) | (col >= n)
        if bad.any():
            i = int(np.argmax(bad))
            raise InvalidArgumentError(f"{name} ({int(col[i])}) from index[{i},{j}] out of "
                                       f"bounds (>={n})")
    out = np.zeros((rows_n, bb.shape[1]), b.dtype)
    np.add.at(out, r, (bb[c] * np.reshape(vals, (-1, 1))).astype(b.dtype))
    return out


@register_gradient("SparseTensorDenseMatMul")
def _spmm_grad(op, g):
    from xlapy.compat.v1.ops.gather_ops import gather
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum
    from xlapy.compat.v1.ops.array_ops import transpose
    idx, vals, shp, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = make("SparseTensorDenseMatMul", [idx, vals, shp, g],
                  {"adjoint_a": not adj_a, "adjoint_b": False})
    if adj_b:
        b_grad = transpose(b_grad)
    rows, cols = idx[:, 0], idx[:, 1]
    parts_a = gather(g, cols if adj_a else rows)
    parts_b = gather(transpose(b) if adj_b else b, rows if adj_a else cols)
    return [None, reduce_sum(multiply(parts_a, parts_b), 1), None, b_grad]


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    sp_a = _sparse(sp_a, "sp_a")
    b = tensor(b)
    with get_default_graph().name_scope(name or "SparseTensorDenseMatMul"):
        return make("SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, sp_a.dense_shape, b],
                    {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)})


# ---- SparseToDense -------------------------------------------------------------------------------

def _s2d_infer(op):
    idx, shp, vals, default = op.inputs
    _check_index_dtype(idx, "sparse_indices")
    if vals.dtype != default.dtype:
        raise InvalidTypeError(f"Input 'default_value' of 'SparseToDense' Op has type "
                               f"{default.dtype.name} that does not match type "
                               f"{vals.dtype.name} of argument 'sparse_values'.")
    if default.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"default_value should be a scalar, got shape "
                                   f"{default.shape}")
    if idx.shape.ndims is not None and idx.shape.ndims > 2:
        raise InvalidArgumentError(f"sparse_indices should be a scalar, vector, or matrix, "
                                   f"got shape {idx.shape}")
    return [(vals.dtype, partial_shape_value(shp))]


def _s2d_index(m, idx, r):
    """sparse_indices as [N, r] (a scalar or vector index one entry per element)."""
    if len(idx.shape) < 2:
        return m.reshape(idx, (-1, 1))
    return idx


def _s2d_lower(m, idx, shape_, vals, default, validate_indices=True):
    s = ints(shape_)
    ix = _s2d_index(m, idx, len(s))
    out = m.zeros(s, vals.dtype) + default
    key = tuple(_drop_negative(m, ix[:, j], s[j]) for j in range(len(s)))
    n = ix.shape[0]
    v = vals if len(vals.shape) else m.broadcast_to(vals, (n,))
    return m.at(out)[key].set(v)


@register_op("SparseToDense", infer=_s2d_infer, attrs=("validate_indices",), const_inputs=(1,),
             lowering=_s2d_lower)
def _s2d(m, idx, shape_, vals, default, validate_indices=True):
    """A dense tensor of default_value with sparse_values at sparse_indices."""
    s = ints(shape_)
    ix = _s2d_index(np, np.asarray(idx), len(s))
    n = ix.shape[0]
    if ix.shape[1] != len(s):
        raise InvalidArgumentError(f"sparse_indices should have {len(s)} columns (the rank of "
                                   f"output_shape), got shape {list(np.shape(idx))}")
    if np.ndim(vals) not in (0,) and np.shape(vals) != (n,):
        raise InvalidArgumentError(f"sparse_values has incorrect shape "
                                   f"[{','.join(map(str, np.shape(vals)))}], should be [] or "
                                   f"[{n}]")
    if validate_indices:
        check_indices(ix, s)
    else:
        oob = np.any((ix < 0) | (ix >= np.asarray(s, np.int64)), axis=1) if n else []
        if np.any(oob):
            i = int(np.argmax(oob))
            raise InvalidArgumentError(f"indices[{i}] = {_fmt(ix[i])} is out of bounds: need "
                                       f"0 <= index < {_fmt(s)}")
    out = np.full(s, default, vals.dtype)
    out[tuple(ix[:, j] for j in range(len(s)))] = vals
    return out


@register_gradient("SparseToDense")
def _s2d_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    from xlapy.compat.v1.ops.math_ops import reduce_sum, subtract
    idx, shp, vals, default = op.inputs
    ix = idx if idx.shape.ndims == 2 else reshape(idx, [-1, 1])
    vg = gather_nd(g, ix)
    dg = subtract(reduce_sum(g), reduce_sum(vg))
    if vals.shape.ndims == 0:
        vg = reduce_sum(vg)
    return [None, None, vg, dg]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    vals = tensor(sparse_values)
    idx = tensor(sparse_indices)
    shp = output_shape if isinstance(output_shape, Tensor) else tensor(
        output_shape, dtype=idx.dtype if idx.dtype in (dtypes.int32, dtypes.int64) else None)
    default = default_value if isinstance(default_value, Tensor) else \
        tensor(default_value, dtype=vals.dtype)
    return make("SparseToDense", [idx, shp, vals, default],
                {"validate_indices": bool(validate_indices)}, name=name or "SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    sp = _sparse(sp_input)
    if default_value is None or (sp.dtype == dtypes.string and
                                 not isinstance(default_value, Tensor) and
                                 default_value == 0):
        default_value = b"" if sp.dtype == dtypes.string else 0  # the dtype's zero
    return sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value,
                           validate_indices, name=name or "SparseToDense")


# ---- SparseTensorDenseAdd ------------------------------------------------------------------------

def _stda_infer(op):
    idx, vals, shp, b = op.inputs
    _check_index_dtype(idx, "a_indices")
    if vals.dtype != b.dtype:
        raise InvalidTypeError(f"Input 'b' of 'SparseTensorDenseAdd' Op has type "
                               f"{b.dtype.name} that does not match type {vals.dtype.name} of "
                               "argument 'a_values'.")
    a_shape = partial_shape_value(shp)
    if not a_shape.is_compatible_with(b.shape):
        raise InvalidArgumentError(f"sparse_add: the SparseTensor's shape {a_shape.tf_str()} "
                                   f"and the Tensor's {b.shape.tf_str()} differ (no "
                                   "broadcasting is supported)")
    return [(b.dtype, b.shape.merge_with(a_shape))]


def _stda_lower(m, idx, vals, shape_, b):
    key = tuple(_drop_negative(m, idx[:, j], b.shape[j]) for j in range(len(b.shape)))
    return m.at(b)[key].add(vals)


@register_op("SparseTensorDenseAdd", infer=_stda_infer, lowering=_stda_lower)
def _stda(m, idx, vals, shape_, b):
    """b with the sparse tensor's values added at its indices."""
    s = ints(shape_)
    if len(s) != b.ndim:
        raise InvalidArgumentError(f"Dimension mismatch: the sparse side has rank {len(s)}, "
                                   f"the dense side {b.ndim}")
    for i, (a, n) in enumerate(zip(s, b.shape)):
        if a != n:
            raise InvalidArgumentError(f"Dimension {i} does not equal (no broadcasting is "
                                       f"supported): sparse side {a} vs dense side {n}")
    idx = np.asarray(idx)
    check_indices(idx, s, check_order=False)
    out = np.array(b, copy=True)
    np.add.at(out, tuple(idx[:, j] for j in range(len(s))), vals)
    return out


@register_gradient("SparseTensorDenseAdd")
def _stda_grad(op, g):
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    return [None, gather_nd(g, op.inputs[0]), None, g]


# ---- SparseReduceSum -----------------------------------------------------------------------------

def _reduce_axes(axes, r) -> list:
    out = set()
    for a in ints(axes):
        if not -r <= a < r:
            raise InvalidArgumentError(f"Invalid reduction dimension {a}, for input with {r} "
                                       "dimensions.")
        out.add(a % r)
    return sorted(out)


def _srs_infer(op):
    idx, vals, shp, axes = op.inputs
    keep = op.get_attr("keep_dims")
    s = partial_shape_value(shp)
    av = constant_value(axes)
    if s.ndims is None or av is None:
        return [(vals.dtype, unknown_shape())]
    red = _reduce_axes(av, s.ndims)
    dims = [1 if d in red else n for d, n in enumerate(s.dims)] if keep else \
        [n for d, n in enumerate(s.dims) if d not in red]
    return [(vals.dtype, TensorShape(dims))]


def _srs(m, idx, vals, shape_, axes, keep_dims=False):
    """The sum over reduction_axes of the dense tensor, summed from its entries."""
    s = ints(shape_)
    r = len(s)
    red = _reduce_axes(axes, r)
    kept = [d for d in range(r) if d not in red]
    if m is np:
        idx = np.asarray(idx)
        oob = np.any((idx < 0) | (idx >= np.asarray(s, np.int64)), axis=1) if len(idx) else []
        if np.any(oob):
            i = int(np.argmax(oob))
            raise InvalidArgumentError(f"indices[{i}] = {_fmt(idx[i])} is out of bounds: need "
                                       f"0 <= index < {_fmt(s)}")
    out = m.zeros([s[d] for d in kept], vals.dtype)
    if kept:
        key = tuple(_drop_negative(m, idx[:, d], s[d]) for d in kept)
        out = _scatter_add(m, out, key, vals)
    else:
        out = m.sum(vals).astype(vals.dtype) + out
    if keep_dims:
        out = m.reshape(out, [1 if d in red else s[d] for d in range(r)])
    return out


register_op("SparseReduceSum", infer=_srs_infer, attrs=("keep_dims",),
            const_inputs=(2, 3))(_srs)


@register_gradient("SparseReduceSum")
def _srs_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    from xlapy.compat.v1.ops.math_ops import add, multiply, subtract
    idx, vals, shp, axes = op.inputs
    av = constant_value(axes)
    r = partial_shape_value(shp).ndims
    if r is None and idx.shape.ndims == 2:
        r = idx.shape.dims[1]
    if av is None or r is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs constant reduction axes "
                                   "and a known rank")
    red = _reduce_axes(av, r)
    mask = _i64([0 if d in red else 1 for d in range(r)])
    kept_shape = add(multiply(shp, mask), subtract(_i64(1), mask))
    g2 = reshape(g, kept_shape)
    return [None, gather_nd(g2, multiply(idx, mask)), None, None]


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None, name=None):
    sp = _sparse(sp_input)
    if axis is None:
        axis = reduction_axes
    if keepdims is None:
        keepdims = keep_dims
    with get_default_graph().name_scope(name or "SparseReduceSum"):
        if axis is None:
            rank = sp.indices.shape.dims[1] if sp.indices.shape.ndims == 2 else None
            if rank is None:
                rank = sp.shape.ndims
            if rank is None:
                from xlapy.compat.v1.ops.array_ops import size
                from xlapy.compat.v1.ops.manip_ops import range_
                axes = range_(size(sp.dense_shape))
            else:
                axes = tensor(np.arange(rank, dtype=np.int32))
        else:
            axes = axis if isinstance(axis, Tensor) else tensor(np.asarray(axis, np.int32))
        return make("SparseReduceSum", [sp.indices, sp.values, sp.dense_shape, axes],
                    {"keep_dims": bool(keepdims)})


# ---- SparseReorder -------------------------------------------------------------------------------

def _reorder_infer(op):
    idx, vals, _ = op.inputs
    return [(idx.dtype, idx.shape), (vals.dtype, vals.shape)]


def _linear(m, idx, s):
    """Row-major positions of the indices in a dense tensor of shape s (int64)."""
    strides = np.cumprod((list(s[1:]) + [1])[::-1])[::-1].astype(np.int64)
    if m is np:
        return np.asarray(idx, np.int64) @ strides
    lin = None
    for j, st in enumerate(strides):
        term = m.astype(idx[:, j], np.int64) * np.int64(st)
        lin = term if lin is None else lin + term
    return lin


def _reorder_lower(m, idx, vals, shape_):
    # lexicographic order without the dense shape (which may be data: it is no constant
    # input): stable sorts by the last column, then by each column before it
    n, r = idx.shape
    if n == 0 or r == 0:
        return idx, vals
    order = m.argsort(idx[:, r - 1], stable=True)
    for j in range(r - 2, -1, -1):
        order = m.take(order, m.argsort(m.take(idx[:, j], order), stable=True))
    return m.take(idx, order, axis=0), m.take(vals, order, axis=0)


@register_op("SparseReorder", infer=_reorder_infer, lowering=_reorder_lower)
def _reorder(m, idx, vals, shape_):
    """The entries in row-major order of their indices."""
    idx = np.asarray(idx)
    if idx.shape[0] == 0 or idx.shape[1] == 0:
        return idx, vals
    order = np.lexsort(idx.T[::-1])
    return idx[order], vals[order]


@register_gradient("SparseReorder")
def _reorder_grad(op, g_idx, g_vals):
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.manip_ops import range_
    from xlapy.compat.v1.ops.partition_ops import invert_permutation
    from xlapy.compat.v1.ops.gather_ops import gather
    idx, vals, shp = op.inputs
    if g_vals is None:
        return [None, None, None]
    entries = range_(shape(idx)[0])
    perm = make_op("SparseReorder", [idx, entries, shp]).outputs[1]
    return [None, gather(g_vals, invert_permutation(perm)), None]


def sparse_reorder(sp_input, name=None) -> SparseTensor:
    sp = _sparse(sp_input)
    with get_default_graph().name_scope(name or "SparseReorder"):
        op = make_op("SparseReorder", [sp.indices, sp.values, sp.dense_shape])
        return SparseTensor(op.outputs[0], op.outputs[1], sp.dense_shape)


# ---- SparseReshape -------------------------------------------------------------------------------

def _reshape_infer(op):
    idx, shp, new = op.inputs
    n = idx.shape.dims[0] if idx.shape.ndims == 2 else None
    r = new.shape.dims[0] if new.shape.ndims == 1 else None
    return [(dtypes.int64, TensorShape([n, r])), (dtypes.int64, TensorShape([r]))]


def _reshape_shape(s, new) -> list:
    dense = int(np.prod(s, dtype=np.int64))
    new = list(new)
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise InvalidArgumentError(f"only one output dimension may be -1, not both "
                                   f"{unknown[0]} and {unknown[1]}")
    for i, d in enumerate(new):
        if d < -1:
            raise InvalidArgumentError(f"size {i} must be non-negative, not {d}")
    known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or dense % known:
            raise InvalidArgumentError(f"Input to reshape is a SparseTensor with {dense} dense "
                                       f"values, but the requested shape requires a multiple "
                                       f"of {known}")
        new[unknown[0]] = dense // known
    elif known != dense:
        raise InvalidArgumentError(f"Input to reshape is a tensor with {dense} dense values, "
                                   f"but the requested shape has {known}")
    return new


@register_op("SparseReshape", infer=_reshape_infer, const_inputs=(1, 2))
def _sparse_reshape(m, idx, shape_, new_shape):
    """The indices of the same entries in a dense tensor of the new shape."""
    s = ints(shape_)
    new = _reshape_shape(s, ints(new_shape))
    n = idx.shape[0]
    out_shape = np.asarray(new, np.int64)
    if n == 0 or not new:
        return (m.zeros((n, len(new)), np.int64) if m is not np else
                np.zeros((n, len(new)), np.int64)), out_shape
    lin = _linear(m, idx, s)
    strides = np.cumprod((list(new[1:]) + [1])[::-1])[::-1].astype(np.int64)
    cols = []
    for st, d in zip(strides, new):
        cols.append((lin // np.int64(st)) % np.int64(max(d, 1)))
    return m.stack(cols, axis=1), out_shape


not_differentiable("SparseReshape")


def sparse_reshape(sp_input, shape, name=None) -> SparseTensor:
    sp = _sparse(sp_input)
    with get_default_graph().name_scope(name or "SparseReshape"):
        new = shape if isinstance(shape, Tensor) else _i64(shape)
        if new.dtype != dtypes.int64:
            from xlapy.compat.v1.ops.math_ops import cast
            new = cast(new, dtypes.int64)
        s, n = _static_shape(sp), constant_value(new)
        if s is not None and n is not None:
            _reshape_shape(s, ints(n))  # TF checks a static shape when the graph is built
        op = make_op("SparseReshape", [sp.indices, sp.dense_shape, new])
        return SparseTensor(op.outputs[0], sp.values, op.outputs[1])


# ---- SparseAdd (sparse + sparse) -----------------------------------------------------------------

def _sadd_infer(op):
    a_idx, a_vals, a_shp, b_idx, b_vals, b_shp, thresh = op.inputs
    if a_vals.dtype != b_vals.dtype:
        raise InvalidTypeError(f"Input 'b_values' of 'SparseAdd' Op has type "
                               f"{b_vals.dtype.name} that does not match type "
                               f"{a_vals.dtype.name} of argument 'a_values'.")
    r = a_idx.shape.dims[1] if a_idx.shape.ndims == 2 else None
    return [(dtypes.int64, TensorShape([None, r])), (a_vals.dtype, TensorShape([None])),
            (dtypes.int64, TensorShape([r]))]


def _merge_keys(a_idx, b_idx):
    """The union of both index sets in row-major order: (sorted unique rows, position of
    each row of a in it, position of each row of b in it)."""
    both = np.concatenate([a_idx, b_idx], 0)
    if both.shape[0] == 0:
        return both, np.zeros(0, np.int64), np.zeros(0, np.int64)
    uniq, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    return uniq, inv[:len(a_idx)], inv[len(a_idx):]


@register_op("SparseAdd", infer=_sadd_infer, lowering=None)
def _sadd(m, a_idx, a_vals, a_shp, b_idx, b_vals, b_shp, thresh):
    """The sum of two SparseTensors (sorted output); entries present in both whose sum
    has a magnitude below thresh are dropped, as TF's kernel does."""
    a_idx, b_idx = np.asarray(a_idx, np.int64), np.asarray(b_idx, np.int64)
    if tuple(ints(a_shp)) != tuple(ints(b_shp)):
        raise InvalidArgumentError(f"Operands' shapes do not match: got {list(ints(a_shp))} "
                                   f"and {list(ints(b_shp))}")
    r = len(ints(a_shp))
    a_idx, b_idx = a_idx.reshape(len(a_idx), r), b_idx.reshape(len(b_idx), r)
    uniq, pa, pb = _merge_keys(a_idx, b_idx)
    out = np.zeros(len(uniq), a_vals.dtype)
    np.add.at(out, pa, a_vals)
    np.add.at(out, pb, b_vals)
    in_both = np.zeros(len(uniq), bool)
    in_both[np.intersect1d(pa, pb)] = True
    keep = ~in_both | (np.abs(out) >= thresh)
    return uniq[keep].astype(np.int64), out[keep], np.asarray(ints(a_shp), np.int64)


def _sadd_grad_infer(op):
    g, a_idx, b_idx, _ = op.inputs
    return [(g.dtype, TensorShape([a_idx.shape.dims[0] if a_idx.shape.ndims else None])),
            (g.dtype, TensorShape([b_idx.shape.dims[0] if b_idx.shape.ndims else None]))]


@register_op("SparseAddGrad", infer=_sadd_grad_infer, lowering=None)
def _sadd_grad_kernel(m, g, a_idx, b_idx, sum_idx):
    """The gradients of SparseAdd's two value vectors: each entry's gradient is that of
    its index in the sum (zero where the sum dropped it)."""
    where = {tuple(r): i for i, r in enumerate(np.asarray(sum_idx).tolist())}
    out = []
    for ix in (a_idx, b_idx):
        pos = np.array([where.get(tuple(r), -1) for r in np.asarray(ix).tolist()], np.int64)
        v = np.zeros(len(pos), g.dtype)
        v[pos >= 0] = g[pos[pos >= 0]]
        out.append(v)
    return tuple(out)


not_differentiable("SparseAddGrad")


@register_gradient("SparseAdd")
def _sadd_grad(op, g_idx, g_vals, g_shape):
    if g_vals is None:
        return [None] * 7
    a_idx, _, _, b_idx = op.inputs[:4]
    ga, gb = make_op("SparseAddGrad", [g_vals, a_idx, b_idx, op.outputs[0]]).outputs
    return [None, ga, None, None, gb, None, None]


def sparse_add(a, b, threshold=None, thresh=None, name=None):
    """SparseTensor + SparseTensor -> SparseTensor; SparseTensor + Tensor -> Tensor."""
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    sa, sb = isinstance(a, (SparseTensor, SparseTensorValue)), \
        isinstance(b, (SparseTensor, SparseTensorValue))
    if not sa and not sb:
        raise InvalidTypeError("At least one input should be SparseTensor; do you mean to use "
                               "tf.add()?")
    if sa and sb:
        a, b = _sparse(a), _sparse(b)
        with get_default_graph().name_scope(name or "SparseAdd"):
            t = threshold if isinstance(threshold, Tensor) else \
                tensor(np.asarray(threshold, a.dtype.real_dtype.np
                                  if hasattr(a.dtype, "real_dtype") else a.dtype.np))
            op = make_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                       b.dense_shape, t])
            return SparseTensor(*op.outputs)
    if sb:
        a, b = b, a
    a = _sparse(a)
    b = tensor(b, dtype=a.dtype)
    return make("SparseTensorDenseAdd", [a.indices, a.values, a.dense_shape, b],
                name=name or "SparseTensorDenseAdd")


# ---- composites: retain, concat, from_dense, transpose -------------------------------------------

def sparse_retain(sp_input, to_retain) -> SparseTensor:
    """The entries whose to_retain is True (the number kept is data: executor's Where)."""
    from xlapy.compat.v1.ops.array_ops import identity, reshape
    from xlapy.compat.v1.ops.gather_ops import gather, where_indices
    sp = _sparse(sp_input)
    keep = tensor(to_retain)
    if keep.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"to_retain should be a vector, got shape {keep.shape}")
    with get_default_graph().name_scope("SparseRetain"):
        where = reshape(where_indices(keep), [-1])
        return SparseTensor(gather(sp.indices, where), gather(sp.values, where),
                            identity(sp.dense_shape))


def from_dense(tensor_, name=None) -> SparseTensor:
    """The nonzero entries of a dense tensor (their number is data: executor's Where)."""
    from xlapy.compat.v1.ops.array_ops import shape, zeros_like
    from xlapy.compat.v1.ops.gather_ops import gather_nd, where_indices
    from xlapy.compat.v1.ops.math_ops import not_equal
    with get_default_graph().name_scope(name or "dense_to_sparse"):
        x = tensor(tensor_)
        idx = where_indices(not_equal(x, zeros_like(x)))
        return SparseTensor(idx, gather_nd(x, idx), shape(x, out_type=dtypes.int64))


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False,
                  concat_dim=None, expand_nonconcat_dims=None) -> SparseTensor:
    """The inputs joined along `axis`, in row-major order (shifted indices, concatenated,
    reordered: every op compiles)."""
    from xlapy.compat.v1.ops.array_ops import concat, stack
    from xlapy.compat.v1.ops.math_ops import add, multiply, reduce_max, reduce_sum, subtract
    if concat_dim is not None:
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    sps = [_sparse(s, "sp_inputs") for s in sp_inputs]
    if not sps:
        raise InvalidArgumentError("sparse_concat needs at least one input")
    ranks = {s.indices.shape.dims[1] if s.indices.shape.ndims == 2 else None for s in sps}
    ranks |= {s.shape.ndims for s in sps}
    ranks.discard(None)
    if len(ranks) != 1:
        raise InvalidArgumentError(f"sparse_concat needs inputs of one known rank, got "
                                   f"{sorted(ranks) or 'unknown'}")
    r = ranks.pop()
    axis = int(axis)
    if not -r <= axis < r:
        raise InvalidArgumentError(f"Concat dimension must be in range [{-r}, {r}), got {axis}")
    axis %= r
    static = [_static_shape(s) for s in sps]
    if not expand_nonconcat_dim and all(s is not None for s in static):
        for s in static[1:]:
            if [d for i, d in enumerate(s) if i != axis] != \
                    [d for i, d in enumerate(static[0]) if i != axis]:
                raise InvalidArgumentError(f"Input shapes must match: expected {static[0]} "
                                           f"except in the concat dimension {axis}, got {s}")
    hot = _i64([1 if d == axis else 0 for d in range(r)])
    with get_default_graph().name_scope(name or "SparseConcat"):
        shapes = stack([s.dense_shape for s in sps])               # [K, r]
        sizes = multiply(shapes, hot)                              # the concat dim only
        idx, offset = [], None
        for i, s in enumerate(sps):
            idx.append(s.indices if offset is None else add(s.indices, offset))
            offset = sizes[i] if offset is None else add(offset, sizes[i])
        base = reduce_max(shapes, 0) if expand_nonconcat_dim else sps[0].dense_shape
        out_shape = add(multiply(base, subtract(_i64(1), hot)), reduce_sum(sizes, 0))
        op = make_op("SparseReorder", [concat(idx, 0), concat([s.values for s in sps], 0),
                                       out_shape])
        return SparseTensor(op.outputs[0], op.outputs[1], out_shape)


def sparse_transpose(sp_input, perm=None, name=None) -> SparseTensor:
    from xlapy.compat.v1.ops.array_ops import transpose
    from xlapy.compat.v1.ops.gather_ops import gather
    sp = _sparse(sp_input)
    r = sp.indices.shape.dims[1] if sp.indices.shape.ndims == 2 else sp.shape.ndims
    if r is None:
        raise InvalidArgumentError("sparse.transpose needs the rank of its input")
    perm = list(range(r))[::-1] if perm is None else [int(p) for p in perm]
    with get_default_graph().name_scope(name or "SparseTranspose"):
        p = tensor(np.asarray(perm, np.int32))
        idx = transpose(gather(transpose(sp.indices), p))
        shp = gather(sp.dense_shape, p)
        op = make_op("SparseReorder", [idx, sp.values, shp])
        return SparseTensor(op.outputs[0], op.outputs[1], shp)


def sparse_placeholder(dtype, shape=None, name=None):
    from xlapy.compat.v1.sparse_tensor import sparse_placeholder as _sp
    return _sp(dtype, shape, name)


__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor",
           "from_dense", "sparse_add", "sparse_concat", "sparse_placeholder", "sparse_reduce_sum",
           "sparse_reorder", "sparse_reshape", "sparse_retain", "sparse_tensor_dense_matmul",
           "sparse_tensor_to_dense", "sparse_to_dense", "sparse_transpose"]
