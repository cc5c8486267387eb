"""TF 1.15's tf.sparse shape and reduction ops: to_indicator, merge, reset_shape,
expand_dims, eye (compositions of existing ops, which compile where the shapes they build
are constants), reduce_max (a dense result: SparseReduceMax, which compiles for a constant
dense shape and axes, as SparseReduceSum does), reduce_max_sparse and reduce_sum_sparse
(SparseReduceMaxSparse / SparseReduceSumSparse: as many entries as the data has groups,
so they run in the executor).

The reductions only see the entries present: a maximum ignores the implicit zeros, and an
output cell no entry reaches is 0 (TF's kernel). None of them has a gradient in TF 1.15.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, control_dependencies, get_default_graph
from xlapy.compat.v1.op_registry import register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, make_op, tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, identity, ones, reshape, size,
                                           stack, zeros_like)
from xlapy.compat.v1.ops.check_ops import assert_equal, assert_less_equal
from xlapy.compat.v1.ops.index_ops import slice_, where
from xlapy.compat.v1.ops.manip_ops import range_
from xlapy.compat.v1.ops.math_ops import (add, cast, greater_equal, minimum, reduce_max,
                                          reduce_sum)
from xlapy.compat.v1.ops.sparse_ops import (_drop_negative, _fmt, _reduce_axes, _sparse,
                                            _srs_infer, sparse_reorder, sparse_to_dense)
from xlapy.compat.v1.sparse_tensor import SparseTensor
from xlapy.compat.v1.tensor_shape import TensorShape

_I64 = dtypes.int64


def _rank(sp: SparseTensor):
    ishape = sp.indices.shape
    if ishape.ndims == 2 and ishape.dims[1] is not None:
        return ishape.dims[1]
    return sp.shape.ndims


def _as_i64(t: Tensor) -> Tensor:
    return t if t.dtype == _I64 else cast(t, _I64)


def _int_values(sp: SparseTensor, what: str) -> Tensor:
    if sp.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"{what}: the ids (values) must be int32 or int64, got "
                               f"{sp.dtype.name}")
    return _as_i64(sp.values)


# ---- to_indicator, merge -----------------------------------------------------------------------

def sparse_to_indicator(sp_input, vocab_size, name=None) -> Tensor:
    """tf.sparse.to_indicator: a bool tensor, shape [d_0, ..., d_{n-2}, vocab_size], True at
    [i_0, ..., i_{n-2}, id] for the id values of each innermost row (ids must be in
    [0, vocab_size))."""
    sp = _sparse(sp_input)
    ids = _int_values(sp, "sparse.to_indicator")
    with get_default_graph().name_scope(name or "SparseToIndicator"):
        idx = concat([sp.indices[:, :-1], expand_dims(ids, 1)], 1)
        vs = vocab_size if isinstance(vocab_size, Tensor) else \
            tensor(np.asarray(vocab_size, np.int64))
        out_shape = concat([sp.dense_shape[:-1], reshape(_as_i64(vs), [1])], 0)
        return sparse_to_dense(idx, out_shape, True, False, validate_indices=False)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """tf.sparse.merge: sp_values' entries re-indexed by ids: [i_0, ..., i_{n-2}, id] (one id
    column per SparseTensor of sp_ids, a list, with one vocab_size each); dense shape
    sp_values' but the last dimension, then the vocab sizes. Reordered unless
    already_sorted."""
    if isinstance(sp_ids, (list, tuple)):
        if not isinstance(vocab_size, (list, tuple)) or len(vocab_size) != len(sp_ids):
            raise TypeError("sparse.merge: with a list of sp_ids, vocab_size must be a list "
                            "of as many Tensors or Python ints")
        ids_list, sizes = list(sp_ids), list(vocab_size)
    else:
        if not isinstance(vocab_size, (Tensor, int, np.integer)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found "
                            f"{type(vocab_size).__name__}")
        ids_list, sizes = [sp_ids], [vocab_size]
    if not ids_list:
        raise InvalidArgumentError("sparse.merge: sp_ids must not be empty")
    vals = _sparse(sp_values, "sp_values")
    with get_default_graph().name_scope(name or "SparseMerge"):
        cols = [expand_dims(_int_values(_sparse(s, "sp_ids"), "sparse.merge"), 1)
                for s in ids_list]
        sizes = [_as_i64(v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int64)))
                 for v in sizes]
        idx = concat([vals.indices[:, :-1]] + cols, 1)
        out_shape = concat([vals.dense_shape[:-1]] + [reshape(v, [1]) for v in sizes], 0)
        out = SparseTensor(idx, vals.values, out_shape)
        return out if already_sorted else sparse_reorder(out)


# ---- reset_shape, expand_dims, eye -------------------------------------------------------------

def sparse_reset_shape(sp_input, new_shape=None) -> SparseTensor:
    """tf.sparse.reset_shape: the same entries with dense shape new_shape (same rank, no
    dimension smaller), or, without one, the tightest shape holding the entries (max index
    + 1 in each dimension; 0 for an empty SparseTensor)."""
    sp = _sparse(sp_input)
    with get_default_graph().name_scope("SparseResetShape"):
        idx, vals = identity(sp.indices), identity(sp.values)
        if new_shape is None:
            floor = reshape(zeros_like(sp.dense_shape), [1, -1])
            return SparseTensor(idx, vals, reduce_max(concat([add(sp.indices, 1), floor], 0),
                                                      0))
        new = new_shape if isinstance(new_shape, Tensor) else \
            tensor(np.asarray(new_shape, np.int64))
        if not new.dtype.is_integer:
            raise InvalidTypeError(f"sparse.reset_shape: new_shape must be integers, got "
                                   f"{new.dtype.name}")
        new = _as_i64(new)
        new.shape.with_rank(1)
        r, n = _rank(sp), new.shape.dims[0]
        if r is not None and n is not None and r != n:
            raise InvalidArgumentError(f"sparse.reset_shape: new_shape has {n} dimensions, "
                                       f"sp_input {r}")
        nv, old = constant_value(new), sp.shape
        if nv is not None and old.is_fully_defined():
            if not np.all(np.asarray(old.as_list()) <= nv):
                raise InvalidArgumentError(f"Requested new_shape should have dimension sizes "
                                           f">= sp_input.shape.  Found new_shape "
                                           f"({nv.tolist()}), sp_input.shape "
                                           f"({old.as_list()}).")
            return SparseTensor(idx, vals, new)
        same_rank = assert_equal(size(sp.dense_shape), size(new),
                                 message="sparse.reset_shape: new_shape has another rank")
        with control_dependencies([same_rank]):
            ok = assert_less_equal(sp.dense_shape, new, message="sparse.reset_shape: "
                                   "new_shape must be >= the current shape")
        with control_dependencies([ok]):
            return SparseTensor(idx, vals, identity(new))


def sparse_expand_dims(sp_input, axis=None, name=None) -> SparseTensor:
    """tf.sparse.expand_dims: a dimension of size 1 inserted at axis (default -1, the end;
    negative counts from the end of the result)."""
    sp = _sparse(sp_input)
    axis = -1 if axis is None else axis
    if not isinstance(axis, Tensor) and not isinstance(axis, (int, np.integer)):
        raise TypeError("axis must be an int32 tensor")
    with get_default_graph().name_scope(name or "expand_dims"):
        a = axis if isinstance(axis, Tensor) else tensor(np.int32(axis))
        r, c = _rank(sp), constant_value(a)
        new_col = zeros_like(reduce_sum(sp.indices, 1, keepdims=True))   # [N, 1] of zeros
        one = tensor(np.ones(1, np.int64))
        if c is not None and r is not None:
            c = int(c)
            if not -(r + 1) <= c <= r:
                raise InvalidArgumentError(f"sparse.expand_dims: axis {c} is out of range for "
                                           f"a result of rank {r + 1}")
            c %= r + 1
            idx = concat([sp.indices[:, :c], new_col, sp.indices[:, c:]], 1)
            out_shape = concat([sp.dense_shape[:c], one, sp.dense_shape[c:]], 0)
        else:
            a = cast(a, dtypes.int32)
            rank_t = size(sp.dense_shape)
            a = where(greater_equal(a, 0), a, add(a, add(rank_t, 1)))
            idx = concat([slice_(sp.indices, [0, 0], stack([-1, a])), new_col,
                          slice_(sp.indices, stack([0, a]), [-1, -1])], 1)
            out_shape = concat([slice_(sp.dense_shape, [0], reshape(a, [1])), one,
                                slice_(sp.dense_shape, reshape(a, [1]), [-1])], 0)
        return SparseTensor(idx, sp.values, out_shape)


def _scalar_i64(v, what):
    t = v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int64))
    if not t.dtype.is_integer:
        raise InvalidTypeError(f"sparse.eye: {what} must be an integer, got {t.dtype.name}")
    t.shape.with_rank(0)
    return _as_i64(t)


def sparse_eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None) -> SparseTensor:
    """tf.sparse.eye: a [num_rows, num_columns] SparseTensor of ones on the diagonal."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "eye"):
        rows = _scalar_i64(num_rows, "num_rows")
        cols = rows if num_columns is None else _scalar_i64(num_columns, "num_columns")
        rv, cv = constant_value(rows), constant_value(cols)
        if rv is not None and cv is not None:
            if rv < 0 or cv < 0:
                raise InvalidArgumentError(f"sparse.eye: num_rows ({int(rv)}) and num_columns "
                                           f"({int(cv)}) must not be negative")
            d = np.arange(min(int(rv), int(cv)), dtype=np.int64)
            return SparseTensor(tensor(np.stack([d, d], 1).reshape(-1, 2)),
                                tensor(np.ones(len(d), dtype.np)),
                                tensor(np.asarray([rv, cv], np.int64)))
        n = minimum(rows, cols)
        d = range_(n, dtype=_I64)
        return SparseTensor(stack([d, d], 1), ones(reshape(n, [1]), dtype),
                            stack([rows, cols]))


# ---- reductions ----------------------------------------------------------------------------------

def _check_bounds(ix, s):
    if len(ix):
        oob = np.any((ix < 0) | (ix >= np.asarray(s, np.int64)), axis=1)
        if oob.any():
            i = int(np.argmax(oob))
            raise InvalidArgumentError(f"indices[{i}] = {_fmt(ix[i])} is out of bounds: need "
                                       f"0 <= index < {_fmt(s)}")


def _lowest(dt):
    dt = np.dtype(dt)
    return np.asarray(-np.inf if dt.kind == "f" else np.iinfo(dt).min, dt)


def _srmax(m, idx, vals, shape_, axes, keep_dims=False):
    """The maximum over reduction_axes of the entries present; 0 where none is."""
    s = ints(shape_)
    r = len(s)
    red = _reduce_axes(axes, r)
    kept = [d for d in range(r) if d not in red]
    if m is np:
        idx = np.asarray(idx, np.int64).reshape(-1, r)
        _check_bounds(idx, s)
    dt = np.dtype(vals.dtype)
    zero = np.zeros((), dt)
    if kept:
        out_shape = [s[d] for d in kept]
        key = tuple(_drop_negative(m, idx[:, d], s[d]) for d in kept)
        if m is np:
            out = np.full(out_shape, _lowest(dt))
            np.maximum.at(out, key, vals)
            hit = np.zeros(out_shape, bool)
            hit[key] = True
        else:
            out = m.at(m.full(out_shape, _lowest(dt)))[key].max(vals)
            hit = m.at(m.zeros(out_shape, np.int32))[key].add(np.int32(1)) > 0
        out = m.where(hit, out, zero)
    else:
        out = m.max(vals).astype(dt) if vals.shape[0] else m.zeros((), dt)
    if keep_dims:
        out = m.reshape(out, [1 if d in red else s[d] for d in range(r)])
    return out


register_op("SparseReduceMax", infer=_srs_infer, attrs=("keep_dims",),
            const_inputs=(2, 3))(_srmax)


def _sparse_out_infer(op):
    idx, vals, shp, axes = op.inputs
    r = idx.shape.dims[1] if idx.shape.ndims == 2 else None
    if r is None and shp.shape.ndims == 1:
        r = shp.shape.dims[0]
    av = constant_value(axes)
    out_r = r if op.get_attr("keep_dims") else (
        None if r is None or av is None else r - len(_reduce_axes(av, r)))
    return [(_I64, TensorShape([None, out_r])), (vals.dtype, TensorShape([None])),
            (_I64, TensorShape([out_r]))]


def _sparse_out(kind):
    def kernel(m, idx, vals, shape_, axes, keep_dims=False):
        s = np.asarray(shape_, np.int64).reshape(-1)
        r = s.size
        ix = np.asarray(idx, np.int64).reshape(-1, r)
        v = np.asarray(vals)
        if len(v) != len(ix):
            raise InvalidArgumentError(f"sparse reduction: {len(ix)} indices but {len(v)} "
                                       "values")
        red = _reduce_axes(axes, r)
        _check_bounds(ix, s)
        if keep_dims:
            cols, out_shape = ix.copy(), np.where(np.isin(np.arange(r), red), 1, s)
            cols[:, red] = 0
        else:
            kept = [d for d in range(r) if d not in red]
            cols, out_shape = ix[:, kept], s[kept]
        if len(ix) == 0:
            return np.zeros((0, cols.shape[1]), np.int64), v[:0], out_shape.astype(np.int64)
        if cols.shape[1] == 0:
            keys, group = np.zeros((1, 0), np.int64), np.zeros(len(ix), np.int64)
        else:
            keys, group = np.unique(cols, axis=0, return_inverse=True)
            group = group.reshape(-1)
        if kind == "sum":
            out = np.zeros(len(keys), v.dtype)
            np.add.at(out, group, v)
        else:
            out = np.full(len(keys), _lowest(v.dtype))
            np.maximum.at(out, group, v)
        return keys.astype(np.int64), out, out_shape.astype(np.int64)
    kernel.__doc__ = (f"The {kind} over reduction_axes of each group of entries, as a "
                      "SparseTensor of the groups (in row-major order).")
    return kernel


register_op("SparseReduceMaxSparse", infer=_sparse_out_infer, attrs=("keep_dims",),
            lowering=None)(_sparse_out("max"))
register_op("SparseReduceSumSparse", infer=_sparse_out_infer, attrs=("keep_dims",),
            lowering=None)(_sparse_out("sum"))


def _reduce_inputs(sp, axis, keepdims, reduction_axes, keep_dims, what):
    if axis is not None and reduction_axes is not None:
        raise ValueError(f"{what}: cannot specify both 'axis' and 'reduction_axes'")
    if keepdims is not None and keep_dims is not None:
        raise ValueError(f"{what}: cannot specify both 'keepdims' and 'keep_dims'")
    axis = reduction_axes if axis is None else axis
    keep = bool(keep_dims if keepdims is None else keepdims)
    if not (sp.dtype.is_floating or sp.dtype.is_integer):
        raise InvalidTypeError(f"{what}: values of type {sp.dtype.name} are not supported "
                               "(real numbers only)")
    if axis is None:
        r = _rank(sp)
        axes = range_(size(sp.dense_shape)) if r is None else \
            tensor(np.arange(r, dtype=np.int32))
    else:
        axes = axis if isinstance(axis, Tensor) else tensor(np.asarray(axis, np.int32))
    return [sp.indices, sp.values, sp.dense_shape, axes], {"keep_dims": keep}


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None, name=None) -> Tensor:
    """tf.sparse.reduce_max: a dense tensor, the maximum of the entries present along axis
    (all axes by default); cells without entries are 0."""
    sp = _sparse(sp_input)
    ins, attrs = _reduce_inputs(sp, axis, keepdims, reduction_axes, keep_dims,
                                "sparse.reduce_max")
    return make("SparseReduceMax", ins, attrs, name=name or "SparseReduceMax")


def _reduce_sparse(op_type, sp_input, axis, keepdims, reduction_axes, keep_dims, name, what):
    sp = _sparse(sp_input)
    ins, attrs = _reduce_inputs(sp, axis, keepdims, reduction_axes, keep_dims, what)
    with get_default_graph().name_scope(name or op_type):
        return SparseTensor(*make_op(op_type, ins, attrs).outputs)


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None, name=None) -> SparseTensor:
    """tf.sparse.reduce_max_sparse: the maxima of the groups that have entries, as a
    SparseTensor."""
    return _reduce_sparse("SparseReduceMaxSparse", sp_input, axis, keepdims, reduction_axes,
                          keep_dims, name, "sparse.reduce_max_sparse")


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None, name=None) -> SparseTensor:
    """tf.sparse.reduce_sum_sparse: the sums of the groups that have entries, as a
    SparseTensor."""
    return _reduce_sparse("SparseReduceSumSparse", sp_input, axis, keepdims, reduction_axes,
                          keep_dims, name, "sparse.reduce_sum_sparse")

