"""TF 1.15's further SparseTensor ops: tf.sparse.slice, split, fill_empty_rows, softmax,
maximum and minimum, with tf.sparse_mask (IndexedSlices) and tf.sparse_matmul. The shape,
reduction, cross and serialization ops are in sparse_more_shape.py and sparse_more_io.py;
this module's __all__ gathers the top-level names of all three.

SparseSlice, SparseSplit, SparseFillEmptyRows and SparseSparseMaximum / Minimum output a
number of entries that only the data decides: they run in the executor (a cluster forms
around them). They take entries in any order, keep the input's order (the slices, the
split pieces; fill_empty_rows groups entries by row, stably, as TF's kernel does), and the
union of maximum / minimum is in row-major order (TF's for ordered inputs; an entry only
one side holds meets the other side's implicit zero).

sparse.softmax is a composition that compiles: entries form one group per run of equal
leading indices (all but the last), as TF's kernel groups them, and each group gets a
softmax through segment maxima and sums over the run numbers. sparse_mask is a ListDiff
and a gather; sparse_matmul is a MatMul (the sparsity hints change nothing but speed in
TF; float32 and bfloat16 inputs, a float32 product).

Gradients, as TF 1.15 defines them: SparseSlice's and SparseFillEmptyRows's for the
values (and the default value) are gathers and scatters of the incoming gradient;
softmax's comes from its composition; SparseSparseMaximum / Minimum raise
NotImplementedError, as TF's; SparseSplit has none.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, control_dependencies, get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make_op, tensor
from xlapy.compat.v1.ops.array_extra_ops import setdiff1d
from xlapy.compat.v1.ops.array_ops import (concat, identity, reshape, shape, size,
                                           stop_gradient)
from xlapy.compat.v1.ops.check_ops import Assert
from xlapy.compat.v1.ops.gather_ops import gather, scatter_nd, unsorted_segment_sum, where_indices
from xlapy.compat.v1.ops.manip_ops import cumsum
from xlapy.compat.v1.ops.math_ops import (add, cast, exp, greater_equal, less, logical_and,
                                          matmul, not_equal, realdiv, reduce_all, reduce_any,
                                          reduce_sum, subtract)
from xlapy.compat.v1.ops.misc_framework import IndexedSlices
from xlapy.compat.v1.ops.partition_ops import unsorted_segment_max
from xlapy.compat.v1.ops.sparse_more_io import (deserialize_many_sparse, serialize_many_sparse,
                                                serialize_sparse)
from xlapy.compat.v1.ops.sparse_more_shape import (sparse_merge, sparse_reduce_max,
                                                   sparse_reduce_max_sparse,
                                                   sparse_reduce_sum_sparse, sparse_reset_shape,
                                                   sparse_to_indicator)
from xlapy.compat.v1.ops.sparse_ops import _merge_keys, _sparse
from xlapy.compat.v1.sparse_tensor import SparseTensor
from xlapy.compat.v1.tensor_shape import TensorShape

__all__ = ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse",
           "sparse_fill_empty_rows", "sparse_mask", "sparse_matmul", "sparse_maximum",
           "sparse_merge", "sparse_minimum", "sparse_reduce_max", "sparse_reduce_max_sparse",
           "sparse_reduce_sum_sparse", "sparse_reset_shape", "sparse_slice", "sparse_softmax",
           "sparse_split", "sparse_to_indicator"]

_I64 = dtypes.int64


# ---- helpers ---------------------------------------------------------------------------------

def static_rank(sp: SparseTensor):
    """The rank of a SparseTensor when the graph is built (indices' columns or the length
    of dense_shape), else None."""
    ishape = sp.indices.shape
    if ishape.ndims == 2 and ishape.dims[1] is not None:
        return ishape.dims[1]
    return sp.shape.ndims


def entries(idx, vals, shape_, what: str):
    """A SparseTensor's three values checked against each other: (indices int64 [N, r],
    values [N], dense_shape int64 [r])."""
    s = np.asarray(shape_, np.int64)
    if s.ndim != 1:
        raise InvalidArgumentError(f"{what}: dense_shape must be a vector, got shape "
                                   f"{list(s.shape)}")
    ix = np.asarray(idx, np.int64)
    if ix.ndim != 2 or ix.shape[1] != s.size:
        raise InvalidArgumentError(f"{what}: indices must be a matrix with {s.size} columns "
                                   f"(the length of dense_shape), got shape {list(ix.shape)}")
    v = np.asarray(vals)
    if v.ndim != 1 or len(v) != len(ix):
        raise InvalidArgumentError(f"{what}: values must be a vector of {len(ix)} entries "
                                   f"(one per index), got shape {list(v.shape)}")
    return ix, v, s


def _vector_i64(v, what: str, rank) -> Tensor:
    if not isinstance(v, Tensor):
        a = np.asarray(v)
        v = tensor(a.astype(np.int64) if a.dtype.kind in "iub" or a.size == 0 else a)
    t = v
    if not t.dtype.is_integer:
        raise InvalidTypeError(f"{what} must be an integer vector, got {t.dtype.name}")
    if t.dtype != _I64:
        t = cast(t, _I64)
    t.shape.with_rank(1)
    n = t.shape.dims[0]
    if rank is not None and n is not None and n != rank:
        raise InvalidArgumentError(f"{what} must have {rank} entries (the rank of sp_input), "
                                   f"got {n}")
    return t


def _sparse_infer(idx, vals, shp, dtype=None):
    """(int64 [None, r]), (dtype [None]), (int64 [r]) for a SparseTensor like the input's."""
    r = idx.shape.dims[1] if idx.shape.ndims == 2 else None
    if r is None and shp.shape.ndims == 1:
        r = shp.shape.dims[0]
    return [(_I64, TensorShape([None, r])), (dtype or vals.dtype, TensorShape([None])),
            (_I64, TensorShape([r]))]


# ---- SparseSlice -----------------------------------------------------------------------------

def _cut(ix, s, start, size):
    """The entries inside [start, start + size) and the slice's dense shape."""
    if (start < 0).any() or (size < 0).any():
        raise InvalidArgumentError(f"sparse slice: start {start.tolist()} and size "
                                   f"{size.tolist()} must not be negative")
    end = start + size
    keep = np.all((ix >= start) & (ix < end), axis=1)
    return keep, np.maximum(np.minimum(end, s) - start, 0)


@register_op("SparseSlice", lowering=None,
             infer=lambda op: _sparse_infer(*op.inputs[:3]))
def _sparse_slice(m, idx, vals, shape_, start, size):
    """The entries of [start, start + size) (in the input's order), their indices shifted
    by -start; the dense shape is cut at the input's end."""
    ix, v, s = entries(idx, vals, shape_, "sparse.slice")
    start, size = np.asarray(start, np.int64), np.asarray(size, np.int64)
    if start.shape != s.shape or size.shape != s.shape:
        raise InvalidArgumentError(f"sparse.slice: start and size must have {s.size} entries "
                                   f"(the rank of the input), got shapes {list(start.shape)} "
                                   f"and {list(size.shape)}")
    keep, out_shape = _cut(ix, s, start, size)
    return ix[keep] - start, v[keep], out_shape


@register_gradient("SparseSlice")
def _sparse_slice_grad(op, g_idx, g_vals, g_shape):
    """The values' gradient: each kept entry's incoming gradient, zero for the others."""
    if g_vals is None:
        return [None] * 5
    idx, vals, _, start, size = op.inputs
    inside = logical_and(greater_equal(idx, start), less(idx, add(start, size)))
    kept = where_indices(reduce_all(inside, 1))
    return [None, scatter_nd(kept, g_vals, shape(vals, out_type=_I64)), None, None, None]


def sparse_slice(sp_input, start, size, name=None) -> SparseTensor:
    """tf.sparse.slice: the part of sp_input in [start, start + size), re-based at 0."""
    sp = _sparse(sp_input)
    r = static_rank(sp)
    with get_default_graph().name_scope(name or "SparseSlice"):
        st, sz = _vector_i64(start, "start", r), _vector_i64(size, "size", r)
        op = make_op("SparseSlice", [sp.indices, sp.values, sp.dense_shape, st, sz])
        return SparseTensor(*op.outputs)


# ---- SparseSplit -----------------------------------------------------------------------------

def _split_infer(op):
    n = op.get_attr("num_split")
    i, v, s = _sparse_infer(*op.inputs[1:])
    return [i] * n + [v] * n + [s] * n


@register_op("SparseSplit", lowering=None, attrs=("num_split",), infer=_split_infer)
def _sparse_split(m, split_dim, idx, vals, shape_, num_split=1):
    """num_split slices along split_dim: the first (size % num_split) one entry longer."""
    ix, v, s = entries(idx, vals, shape_, "sparse.split")
    r, d = s.size, int(split_dim)
    if not -r <= d < r:
        raise InvalidArgumentError(f"sparse.split: axis {d} is out of range for a "
                                   f"SparseTensor of rank {r}")
    d %= r
    dim = int(s[d])
    if not 1 <= num_split <= dim:
        raise InvalidArgumentError(f"sparse.split: num_split should be between 1 and the "
                                   f"size of the split dimension ({dim}), got {num_split}")
    base, extra = divmod(dim, num_split)
    out_idx, out_vals, out_shapes = [], [], []
    first = 0
    for i in range(num_split):
        n = base + (i < extra)
        start, size = np.zeros(r, np.int64), s.copy()
        start[d], size[d] = first, n
        keep, piece = _cut(ix, s, start, size)
        out_idx.append(ix[keep] - start)
        out_vals.append(v[keep])
        out_shapes.append(piece)
        first += n
    return tuple(out_idx + out_vals + out_shapes)


class _Required:
    def __repr__(self):
        return "KeywordRequired()"


_KEYWORD_REQUIRED = _Required()


def sparse_split(keyword_required=_KEYWORD_REQUIRED, sp_input=None, num_split=None, axis=None,
                 name=None, split_dim=None) -> list:
    """tf.sparse.split (keyword arguments only): num_split SparseTensors along axis."""
    if keyword_required is not _KEYWORD_REQUIRED:
        raise ValueError("Keyword arguments are required for this function.")
    if split_dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'split_dim'")
        axis = split_dim
    for v, what in ((sp_input, "sp_input"), (num_split, "num_split"), (axis, "axis")):
        if v is None:
            raise ValueError(f"{what} is required")
    sp = _sparse(sp_input)
    num_split = int(num_split)
    if num_split < 1:
        raise InvalidArgumentError(f"sparse.split: num_split must be at least 1, got "
                                   f"{num_split}")
    with get_default_graph().name_scope(name or "SparseSplit"):
        d = axis if isinstance(axis, Tensor) else tensor(np.asarray(axis, np.int64))
        if not d.dtype.is_integer:
            raise InvalidTypeError(f"sparse.split: axis must be an integer, got {d.dtype.name}")
        d = cast(d, _I64) if d.dtype != _I64 else d
        r, c = static_rank(sp), constant_value(d)
        if r is not None and c is not None and not -r <= int(c) < r:
            raise InvalidArgumentError(f"sparse.split: axis {int(c)} is out of range for a "
                                       f"SparseTensor of rank {r}")
        outs = make_op("SparseSplit", [d, sp.indices, sp.values, sp.dense_shape],
                       {"num_split": num_split}).outputs
        n = num_split
        return [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]


# ---- SparseFillEmptyRows ---------------------------------------------------------------------

def _fill_infer(op):
    idx, vals, shp, default = op.inputs
    if default.dtype != vals.dtype:
        raise InvalidTypeError(f"sparse.fill_empty_rows: default_value of type "
                               f"{default.dtype.name} does not match the values' type "
                               f"{vals.dtype.name}")
    if default.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"sparse.fill_empty_rows: default_value must be a scalar, "
                                   f"got shape {default.shape}")
    sv = constant_value(shp)
    rows = int(np.reshape(sv, [-1])[0]) if sv is not None and np.size(sv) else None
    i, v, _ = _sparse_infer(idx, vals, shp)
    n = idx.shape.dims[0] if idx.shape.ndims == 2 else None
    return [i, v, (dtypes.bool, TensorShape([rows])), (_I64, TensorShape([n]))]


@register_op("SparseFillEmptyRows", lowering=None, infer=_fill_infer)
def _fill_empty_rows(m, idx, vals, shape_, default):
    """Every row (first index) without entries gets one, [row, 0, ...] = default_value;
    entries are grouped by row, in their order within a row. Also: which rows were empty,
    and where each input entry went."""
    ix, v, s = entries(idx, vals, shape_, "sparse.fill_empty_rows")
    if s.size == 0:
        raise InvalidArgumentError("sparse.fill_empty_rows: the SparseTensor must have rank "
                                   "at least 1")
    if np.ndim(default) != 0:
        raise InvalidArgumentError(f"sparse.fill_empty_rows: default_value must be a scalar, "
                                   f"got shape {list(np.shape(default))}")
    n_rows, rows = int(s[0]), ix[:, 0]
    bad = (rows < 0) | (rows >= n_rows)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidArgumentError(f"sparse.fill_empty_rows: indices({i}, 0) is invalid: "
                                   f"{int(rows[i])} is not in [0, {n_rows})")
    counts = np.bincount(rows, minlength=n_rows) if n_rows else np.zeros(0, np.int64)
    empty = counts == 0
    per_row = np.maximum(counts, 1)
    first = np.cumsum(per_row) - per_row                  # each row's first output position
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    within = np.arange(len(rows)) - np.searchsorted(sorted_rows, sorted_rows, "left")
    pos = np.empty(len(rows), np.int64)
    pos[order] = first[sorted_rows] + within
    total = int(per_row.sum())
    out_idx = np.zeros((total, s.size), np.int64)
    out_vals = np.full(total, default, v.dtype)
    out_idx[pos], out_vals[pos] = ix, v
    empty_rows = np.nonzero(empty)[0]
    out_idx[first[empty_rows], 0] = empty_rows
    return out_idx, out_vals, empty, pos


@register_gradient("SparseFillEmptyRows")
def _fill_empty_rows_grad(op, g_idx, g_vals, g_empty, g_map):
    """The values get the gradient of where they went; the default value the rest."""
    if g_vals is None:
        return [None] * 4
    d_vals = gather(g_vals, op.outputs[3])
    return [None, d_vals, None, subtract(reduce_sum(g_vals), reduce_sum(d_vals))]


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """tf.sparse.fill_empty_rows: (the SparseTensor with an entry default_value at
    [row, 0, ..., 0] of each empty row, a bool vector of the rows that were empty)."""
    sp = _sparse(sp_input)
    with get_default_graph().name_scope(name or "SparseFillEmptyRows"):
        dv = default_value if isinstance(default_value, Tensor) else \
            tensor(default_value, dtype=sp.dtype)
        op = make_op("SparseFillEmptyRows", [sp.indices, sp.values, sp.dense_shape, dv])
        out = SparseTensor(op.outputs[0], op.outputs[1], sp.dense_shape)
        return out, op.outputs[2]


# ---- SparseSparseMaximum / SparseSparseMinimum -----------------------------------------------

def _cwise_infer(op):
    a_idx, a_vals, a_shp, b_idx, b_vals, b_shp = op.inputs
    if a_vals.dtype != b_vals.dtype:
        raise InvalidTypeError(f"Input 'b_values' of '{op.type}' Op has type "
                               f"{b_vals.dtype.name} that does not match type "
                               f"{a_vals.dtype.name} of argument 'a_values'.")
    dt = a_vals.dtype
    if not (dt.is_floating or dt.is_integer):
        raise InvalidTypeError(f"{op.type}: values of type {dt.name} are not supported (real "
                               "numbers only)")
    return _sparse_infer(a_idx, a_vals, a_shp)[:2]


def _cwise(fn, op_type):
    def kernel(m, a_idx, a_vals, a_shape, b_idx, b_vals, b_shape):
        ai, av, a_s = entries(a_idx, a_vals, a_shape, op_type)
        bi, bv, b_s = entries(b_idx, b_vals, b_shape, op_type)
        if a_s.size != b_s.size:
            raise InvalidArgumentError(f"Operands do not have the same ranks; got shapes: "
                                       f"{a_s.tolist()} and {b_s.tolist()}")
        if (a_s != b_s).any():
            raise InvalidArgumentError(f"Operands' shapes do not match: got {a_s.tolist()} "
                                       f"and {b_s.tolist()} for {op_type}")
        keys, pa, pb = _merge_keys(ai, bi)
        x, y = np.zeros(len(keys), av.dtype), np.zeros(len(keys), av.dtype)
        x[pa], y[pb] = av, bv
        return keys.reshape(len(keys), a_s.size).astype(np.int64), fn(x, y)
    kernel.__doc__ = (f"The element-wise {fn.__name__} of two SparseTensors of one shape, on "
                      "the union of their entries (an absent entry counts as 0).")
    return kernel


for _t, _fn in (("SparseSparseMaximum", np.maximum), ("SparseSparseMinimum", np.minimum)):
    register_op(_t, lowering=None, infer=_cwise_infer)(_cwise(_fn, _t))

    @register_gradient(_t)
    def _cwise_grad(op, *grads):
        raise NotImplementedError(f"Gradient for {op.type} is currently not implemented yet.")


def _sparse_cwise(op_type, sp_a, sp_b, name):
    a, b = _sparse(sp_a, "sp_a"), _sparse(sp_b, "sp_b")
    with get_default_graph().name_scope(name or op_type):
        op = make_op(op_type, [a.indices, a.values, a.dense_shape, b.indices, b.values,
                               b.dense_shape])
        return SparseTensor(op.outputs[0], op.outputs[1], a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None) -> SparseTensor:
    """tf.sparse.maximum: the element-wise maximum of two SparseTensors of one shape."""
    return _sparse_cwise("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None) -> SparseTensor:
    """tf.sparse.minimum: the element-wise minimum of two SparseTensors of one shape."""
    return _sparse_cwise("SparseSparseMinimum", sp_a, sp_b, name)


# ---- softmax (a composition) -----------------------------------------------------------------

def sparse_softmax(sp_input, name=None) -> SparseTensor:
    """tf.sparse.softmax: a softmax over each run of entries sharing all but their last
    index (the innermost rows of a SparseTensor in canonical order); the implicit zeros
    take no part. Rank at least 2; float16/32/64."""
    sp = _sparse(sp_input)
    if sp.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise InvalidTypeError(f"sparse.softmax: values must be float16, float32 or float64, "
                               f"got {sp.dtype.name}")
    r = static_rank(sp)
    if r is not None and r < 2:
        raise InvalidArgumentError(f"sparse.softmax: the input should have rank >= 2, got "
                                   f"rank {r}")
    with get_default_graph().name_scope(name or "SparseSoftmax"):
        vals = sp.values
        if r is None:  # the rank check at run time
            ok = greater_equal(size(sp.dense_shape), tensor(np.int32(2)))
            with control_dependencies([Assert(ok, ["sparse.softmax: the input should have "
                                                   "rank >= 2; dense_shape:",
                                                   sp.dense_shape])]):
                vals = identity(vals)
        lead = sp.indices[:, :-1]
        prev = concat([lead[:1], lead[:-1]], 0)          # each entry's predecessor (itself first)
        starts = cast(reduce_any(not_equal(lead, prev), 1), dtypes.int32)
        run = cumsum(starts)                             # the run number of each entry
        n = shape(vals)[0]
        top = gather(unsorted_segment_max(stop_gradient(vals), run, n), run)
        e = exp(subtract(vals, top))
        out = realdiv(e, gather(unsorted_segment_sum(e, run, n), run))
        return SparseTensor(sp.indices, out, sp.dense_shape)


# ---- sparse_mask (IndexedSlices), sparse_matmul ----------------------------------------------

def sparse_mask(a, mask_indices, name=None) -> IndexedSlices:
    """tf.sparse.mask: the slices of IndexedSlices `a` whose index is not in mask_indices
    (in a's order)."""
    if not isinstance(a, IndexedSlices):
        raise InvalidTypeError(f"sparse_mask: a must be an IndexedSlices, got "
                               f"{type(a).__name__}")
    with get_default_graph().name_scope(name or "sparse_mask"):
        mask = tensor(mask_indices, dtype=a.indices.dtype) \
            if not isinstance(mask_indices, Tensor) else mask_indices
        if mask.dtype != a.indices.dtype:
            raise InvalidTypeError(f"sparse_mask: mask_indices of type {mask.dtype.name} do "
                                   f"not match the indices' type {a.indices.dtype.name}")
        kept, at = setdiff1d(a.indices, reshape(mask, [-1]))
        return IndexedSlices(gather(a.values, at), kept, a.dense_shape)


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None) -> Tensor:
    """tf.sparse_matmul: a matmul (the is_sparse hints only choose TF's kernel) of float32
    or bfloat16 matrices (each side either), with a float32 product as TF's."""
    a, b = tensor(a), tensor(b)
    for t, what in ((a, "a"), (b, "b")):
        if t.dtype not in (dtypes.float32, dtypes.bfloat16):
            raise InvalidTypeError(f"Value passed to parameter '{what}' has DataType "
                                   f"{t.dtype.name} not in list of allowed values: float32, "
                                   "bfloat16")
        if t.shape.ndims not in (None, 2):
            raise InvalidArgumentError(f"sparse_matmul: {what} must be a matrix, got shape "
                                       f"{t.shape}")
    a, b = (cast(t, dtypes.float32) if t.dtype == dtypes.bfloat16 else t for t in (a, b))
    return matmul(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b),
                  name=name or "SparseMatMul")

