"""tf.sets (set_intersection / set_difference / set_union / set_size) and tf.edit_distance.

The sets are the values along the last dimension of each batch entry (a dense row, or the
entries of a SparseTensor sharing all but their last index). The results are SparseTensors
whose rows hold the sorted values of each result set; their dense shape is the batch shape
plus the largest result set's size. TF's op types: DenseToDenseSetOperation,
DenseToSparseSetOperation, SparseToSparseSetOperation (set_operation "a-b", "b-a",
"intersection" or "union") and SetSize. EditDistance is the Levenshtein distance of the
sequences (last dimension) of each batch entry of two SparseTensors, divided by the truth's
length when normalize (inf for a non-empty hypothesis against an empty truth).

All of them build results whose size depends on the data (or compare strings): they run in
the executor, and have no gradient (as TF's)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, make_op, tensor
from xlapy.compat.v1.sparse_tensor import (SparseTensor, SparseTensorValue,
                                           convert_to_tensor_or_sparse_tensor)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

_SET_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
               dtypes.uint16, dtypes.string)
_OPS = ("a-b", "b-a", "intersection", "union")


# ---- groups: {batch index: values} of a dense or sparse input ---------------------------------

def _dense_groups(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise InvalidArgumentError(f"Invalid rank {x.ndim}: sets need rank >= 2")
    return {idx: list(x[idx]) for idx in np.ndindex(*x.shape[:-1])}, tuple(x.shape[:-1])


def _sparse_groups(indices, values, shp):
    indices, shp = np.asarray(indices).reshape(len(values), -1), np.asarray(shp)
    if shp.size < 2:
        raise InvalidArgumentError(f"Invalid rank {shp.size}: sets need rank >= 2")
    groups: dict = {}
    for i, v in zip(indices, values):
        if np.any(i < 0) or np.any(i >= shp):
            raise InvalidArgumentError(f"Invalid indices {list(i)} for shape {list(shp)}")
        groups.setdefault(tuple(int(k) for k in i[:-1]), []).append(v)
    return groups, tuple(int(d) for d in shp[:-1])


def _key(v):
    return v if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v


def _combine(ga, sa, gb, sb, op, dtype):
    if sa != sb:
        raise InvalidArgumentError(f"Shapes {list(sa)} and {list(sb)} do not have the same "
                                   "group dimensions")
    rows = []
    width = 0
    for key in sorted(set(ga) | set(gb)):
        a = {_key(v) for v in ga.get(key, [])}
        b = {_key(v) for v in gb.get(key, [])}
        r = {"a-b": a - b, "b-a": b - a, "intersection": a & b, "union": a | b}[op]
        if r:
            r = sorted(r)
            rows.append((key, r))
            width = max(width, len(r))
    idx = [key + (j,) for key, r in rows for j in range(len(r))]
    flat = [v for _, r in rows for v in r]
    if dtype == np.object_:
        vals = np.empty(len(flat), object)
        vals[:] = flat
    else:
        vals = np.asarray(flat, dtype)
    rank = len(sa) + 1
    return (np.asarray(idx, np.int64).reshape(-1, rank), vals,
            np.asarray(sa + (width,), np.int64))


def _check_dtypes(op, ta, tb):
    if ta.dtype not in _SET_DTYPES:
        raise InvalidTypeError(f"Value passed to parameter 'set1' of '{op.type}' Op has "
                               f"DataType {ta.dtype.name} not in list of allowed values: "
                               "int8, int16, int32, int64, uint8, uint16, string")
    if tb.dtype != ta.dtype:
        raise InvalidTypeError(f"Input 'set2' of '{op.type}' Op has type {tb.dtype.name} "
                               f"that does not match type {ta.dtype.name} of argument 'set1'.")


def _set_infer(rank_of_a, a_dtype_input, b_dtype_input):
    def infer(op):
        ta, tb = op.inputs[a_dtype_input], op.inputs[b_dtype_input]
        _check_dtypes(op, ta, tb)
        if op.get_attr("set_operation") not in _OPS:
            raise InvalidArgumentError(f"Invalid set_operation {op.get_attr('set_operation')}")
        r = rank_of_a(op)
        if r is not None and r < 2:
            raise InvalidArgumentError(f"Shape must be at least rank 2 but is rank {r} for "
                                       f"'{op.name}' (op: '{op.type}')")
        return [(dtypes.int64, TensorShape([None, r])), (ta.dtype, TensorShape([None])),
                (dtypes.int64, TensorShape([r]))]
    return infer


def _sparse_rank(t):
    d = t.shape.dims
    return None if d is None else d[0]


_ATTRS = ("set_operation", "validate_indices")


@register_op("DenseToDenseSetOperation", attrs=_ATTRS, lowering=None,
             infer=_set_infer(lambda op: op.inputs[0].shape.ndims, 0, 1))
def _dense_dense(m, a, b, set_operation="union", validate_indices=True):
    ga, sa = _dense_groups(a)
    gb, sb = _dense_groups(b)
    return _combine(ga, sa, gb, sb, set_operation, np.asarray(a).dtype)


@register_op("DenseToSparseSetOperation", attrs=_ATTRS, lowering=None,
             infer=_set_infer(lambda op: op.inputs[0].shape.ndims, 0, 2))
def _dense_sparse(m, a, bi, bv, bs, set_operation="union", validate_indices=True):
    ga, sa = _dense_groups(a)
    gb, sb = _sparse_groups(bi, bv, bs)
    return _combine(ga, sa, gb, sb, set_operation, np.asarray(a).dtype)


@register_op("SparseToSparseSetOperation", attrs=_ATTRS, lowering=None,
             infer=_set_infer(lambda op: _sparse_rank(op.inputs[2]), 1, 4))
def _sparse_sparse(m, ai, av, as_, bi, bv, bs, set_operation="union", validate_indices=True):
    ga, sa = _sparse_groups(ai, av, as_)
    gb, sb = _sparse_groups(bi, bv, bs)
    return _combine(ga, sa, gb, sb, set_operation, np.asarray(av).dtype)


def _set_size_infer(op):
    idx, vals, shp = op.inputs
    if vals.dtype not in _SET_DTYPES:
        raise InvalidTypeError(f"Value passed to parameter 'set_values' of 'SetSize' Op has "
                               f"DataType {vals.dtype.name} not in list of allowed values: "
                               "int8, int16, int32, int64, uint8, uint16, string")
    v = constant_value(shp)
    if v is not None:
        return [(dtypes.int32, TensorShape([int(d) for d in v[:-1]]))]
    r = _sparse_rank(shp)
    return [(dtypes.int32, unknown_shape() if r is None else TensorShape([None] * (r - 1)))]


@register_op("SetSize", infer=_set_size_infer, attrs=("validate_indices",), lowering=None)
def _set_size(m, indices, values, shp, validate_indices=True):
    groups, batch = _sparse_groups(indices, values, shp)
    out = np.zeros(batch, np.int32)
    for key, vs in groups.items():
        out[key] = len({_key(v) for v in vs})
    return out


not_differentiable("DenseToDenseSetOperation", "DenseToSparseSetOperation",
                   "SparseToSparseSetOperation", "SetSize")


# ---- the tf.sets functions --------------------------------------------------------------------

def _convert(x):
    if isinstance(x, SparseTensorValue):
        return SparseTensor.from_value(x)
    return convert_to_tensor_or_sparse_tensor(x)


def _set_operation(a, b, op, validate_indices, name):
    a, b = _convert(a), _convert(b)
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        # TF's kernels take (dense, sparse): swap, mirroring a difference
        a, b = b, a
        op = {"a-b": "b-a", "b-a": "a-b"}.get(op, op)
    attrs = {"set_operation": op, "validate_indices": bool(validate_indices)}
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        b = tensor(b, a.dtype) if not hasattr(b, "op") else b
        out = make_op("DenseToDenseSetOperation", [a, b], attrs, name=name)
    elif not isinstance(a, SparseTensor):
        out = make_op("DenseToSparseSetOperation", [a, b.indices, b.values, b.dense_shape],
                      attrs, name=name)
    else:
        out = make_op("SparseToSparseSetOperation",
                      [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape],
                      attrs, name=name)
    return SparseTensor(*out.outputs)


def set_intersection(a, b, validate_indices=True):
    """The values in both a's and b's set, per batch entry (a SparseTensor, sorted rows)."""
    return _set_operation(a, b, "intersection", validate_indices, None)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """a's set minus b's (b's minus a's when not aminusb), per batch entry."""
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices, None)


def set_union(a, b, validate_indices=True):
    return _set_operation(a, b, "union", validate_indices, None)


def set_size(a, validate_indices=True):
    """The number of distinct values of each batch entry of the SparseTensor a (int32)."""
    a = _convert(a)
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype not in _SET_DTYPES:
        raise TypeError(f"Invalid dtype {a.values.dtype.name}.")
    return make("SetSize", [a.indices, a.values, a.dense_shape],
                {"validate_indices": bool(validate_indices)})


# ---- edit distance ---------------------------------------------------------------------------

def _edit_infer(op):
    hi, hv, hs, ti, tv, ts = op.inputs
    if hv.dtype != tv.dtype:
        raise InvalidTypeError(f"Input 'truth_values' of 'EditDistance' Op has type "
                               f"{tv.dtype.name} that does not match type {hv.dtype.name} "
                               "of argument 'hypothesis_values'.")
    a, b = constant_value(hs), constant_value(ts)
    if a is not None and b is not None:
        if len(a) != len(b):
            raise InvalidArgumentError(f"hypothesis and truth have different ranks: "
                                       f"{len(a)} and {len(b)}")
        return [(dtypes.float32, TensorShape([int(d) for d in np.maximum(a, b)[:-1]]))]
    r = _sparse_rank(hs) or _sparse_rank(ts)
    return [(dtypes.float32, unknown_shape() if r is None else TensorShape([None] * (r - 1)))]


def _levenshtein(s, t):
    prev = list(range(len(t) + 1))
    for i, x in enumerate(s, 1):
        cur = [i] + [0] * len(t)
        for j, y in enumerate(t, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


@register_op("EditDistance", infer=_edit_infer, attrs=("normalize",), lowering=None)
def _edit_distance(m, hi, hv, hs, ti, tv, ts, normalize=True):
    hs, ts = np.asarray(hs), np.asarray(ts)
    if hs.size != ts.size:
        raise InvalidArgumentError(f"hypothesis and truth have different ranks: {hs.size} "
                                   f"and {ts.size}")
    if hs.size < 1:
        raise InvalidArgumentError("hypothesis and truth must have rank >= 1")
    hyp, _ = _sparse_groups_any(hi, hv, hs)
    tru, _ = _sparse_groups_any(ti, tv, ts)
    out = np.zeros(tuple(int(d) for d in np.maximum(hs, ts)[:-1]), np.float32)
    for key in set(hyp) | set(tru):
        h, t = [_key(v) for v in hyp.get(key, [])], [_key(v) for v in tru.get(key, [])]
        d = float(_levenshtein(h, t))
        if normalize:
            d = d / len(t) if t else (np.inf if h else 0.0)
        out[key] = d
    return out


def _sparse_groups_any(indices, values, shp):
    """Groups by all but the last index, each group's values ordered by that index."""
    indices = np.asarray(indices).reshape(len(values), -1)
    shp = np.asarray(shp)
    groups: dict = {}
    for i, v in zip(indices, values):
        if np.any(i < 0) or np.any(i >= shp):
            raise InvalidArgumentError(f"Invalid index {list(i)} for shape {list(shp)}")
        groups.setdefault(tuple(int(k) for k in i[:-1]), []).append((int(i[-1]), v))
    return {k: [v for _, v in sorted(g, key=lambda p: p[0])] for k, g in groups.items()}, \
        tuple(int(d) for d in shp[:-1])


not_differentiable("EditDistance")


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences of hypothesis and truth (SparseTensors
    whose last dimension is the sequence), per batch entry: float32 of their dense shape
    without its last dimension."""
    hypothesis, truth = _convert(hypothesis), _convert(truth)
    for x, nm in ((hypothesis, "Hypothesis"), (truth, "Truth")):
        if not isinstance(x, SparseTensor):
            raise TypeError(f"{nm} must be a SparseTensor.")
    return make("EditDistance", [hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                                 truth.indices, truth.values, truth.dense_shape],
                {"normalize": bool(normalize)}, name=name)
