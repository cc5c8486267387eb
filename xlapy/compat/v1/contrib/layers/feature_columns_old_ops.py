"""The contrib feature columns' op and values (feature_columns_old.py): the
XlapySparseFeatureCross op (contrib's cross hashing: the original hash combine seeded
with SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY, or FingerprintCat64 chains with a hash_key),
and the sparse id values the columns pass between them (_SparseIds, lookups, combiners)."""

from __future__ import annotations

import collections
import itertools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, NotFoundError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.lookup_ops import (
    fingerprint64,
    fingerprint_cat64,
)

SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY = 0xDECAFCAFFE
_COMBINERS = ("mean", "sqrtn", "sum")
_M = (1 << 64) - 1


def _tf():
    import xlapy.compat.v1 as tf  # (the package imports this module while it loads)
    return tf


# ---- the cross op ---------------------------------------------------------------------------

def _hash_combine(a: int, b: int) -> int:
    """contrib's original cross hash step, on 64-bit words (a's right shift is signed)."""
    sa = a - (1 << 64) if a >> 63 else a
    return (a ^ ((b + 0x9E3779B97F4A7800 + ((sa << 10) & _M) + ((sa >> 4) & _M)) & _M)) & _M


def _feature_words(row, drop):
    if row.dtype == object or row.dtype.kind in "SU":
        vals = [v if isinstance(v, bytes) else str(v).encode() for v in row]
        return [fingerprint64(v) for v in vals if not (drop and v == b"")]
    return [int(v) & _M for v in row if not (drop and int(v) == -1)]


def _cross_infer(op):
    from xlapy.compat.v1.tensor_shape import TensorShape
    widths = []
    for t in op.inputs:
        d = t.shape.dims
        if d is not None and len(d) != 2:
            raise InvalidArgumentError(f"sparse_feature_cross: inputs must be [batch, k] "
                                       f"matrices, got {t.shape.tf_str()}")
        widths.append(None if d is None else d[1])
    batch = next((t.shape.dims[0] for t in op.inputs if t.shape.dims), None)
    width = None if any(w is None for w in widths) else int(np.prod(widths))
    return [(dtypes.int64, TensorShape([batch, width]))]


@register_op("XlapySparseFeatureCross", attrs=("num_buckets", "hash_key", "drop_missing"),
             lowering=None, infer=_cross_infer)
def _sparse_feature_cross(m, *inputs, num_buckets=0, hash_key=0, drop_missing=()):
    arrays = [np.asarray(a) for a in inputs]
    n = arrays[0].shape[0]
    if any(a.ndim != 2 or a.shape[0] != n for a in arrays):
        raise InvalidArgumentError(f"sparse_feature_cross: inputs must be [batch, k] with one "
                                   f"batch size, got shapes {[a.shape for a in arrays]}")
    width = int(np.prod([a.shape[1] for a in arrays]))
    out = np.full((n, width), -1, np.int64)
    mod = num_buckets if num_buckets > 0 else (1 << 63) - 1
    for b in range(n):
        lists = [_feature_words(a[b], drop) for a, drop in zip(arrays, drop_missing)]
        for j, combo in enumerate(itertools.product(*lists)):
            if hash_key:
                h = hash_key & _M
                for f in combo:
                    h = fingerprint_cat64(h, f)
            else:
                h = SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY
                for f in combo:
                    h = _hash_combine(h, f)
            out[b, j] = h % mod
    return out


not_differentiable("XlapySparseFeatureCross")


def _cross(parts, drops, num_buckets, hash_key):
    """ids [batch, prod k] of the crosses of parts ([batch, k] string or int64 tensors),
    -1 where a row lacks a combination (values '' / -1 of the `drops` parts are absent)."""
    return make("XlapySparseFeatureCross", parts, {
        "num_buckets": int(num_buckets), "hash_key": int(hash_key or 0),
        "drop_missing": tuple(bool(d) for d in drops)}, name="cross")


# ---- values ---------------------------------------------------------------------------------

class _SparseIds(collections.namedtuple("_SparseIds", ["id_tensor", "weight_tensor"])):
    """A transformed sparse column: ids int64 [batch, k] (-1: none) and weights float32
    [batch, k] (None: all 1)."""


def _is_sparse(x):
    return getattr(x, "_is_sparse_tensor", False)


def _raw(columns_to_tensors, key):
    if key not in columns_to_tensors:
        raise NotFoundError(f"The feature {key!r} is not in columns_to_tensors (keys: "
                            f"{sorted(k for k in columns_to_tensors if isinstance(k, str))})")
    x = columns_to_tensors[key]
    return x if _is_sparse(x) else _tf().convert_to_tensor(x)


def _to_2d(t, what):
    """[batch] -> [batch, 1]; [batch, ...] -> [batch, prod(...)] (TF's inner flatten)."""
    tf = _tf()
    dims = t.shape.dims
    if dims is None:
        raise InvalidArgumentError(f"{what}: the feature's rank must be known")
    if len(dims) == 0:
        raise InvalidArgumentError(f"{what}: the feature must have a batch dimension, got a "
                                   "scalar")
    if len(dims) == 1:
        return tf.expand_dims(t, -1)
    if len(dims) == 2:
        return t
    if any(d is None for d in dims[1:]):
        raise InvalidArgumentError(f"{what}: the feature's shape {t.shape.tf_str()} must be "
                                   "known beyond the batch dimension")
    return tf.reshape(t, [-1, int(np.prod(dims[1:]))])


def _missing_value(dtype):
    return b"" if dtype == dtypes.string else -1


def _dense_values(x, what):
    """A feature as [batch, k] values; a SparseTensor's absent entries '' / -1."""
    tf = _tf()
    if _is_sparse(x):
        if x.shape.ndims not in (None, 2):
            raise InvalidArgumentError(f"{what}: a SparseTensor feature must have rank 2 "
                                       f"([batch, k]), got {x.shape.tf_str()}")
        default = _missing_value(x.dtype) if (x.dtype == dtypes.string or
                                              x.dtype.is_integer) else 0
        return tf.sparse_tensor_to_dense(x, default_value=default)
    return _to_2d(x, what)


def _valid(ids):
    tf = _tf()
    return tf.greater_equal(ids, tf.zeros_like(ids))


def _combine_rows(rows, ids, weights, combiner):
    """rows [batch, k, d] of ids [batch, k] combined over k as safe_embedding_lookup_sparse:
    ids < 0 dropped, weights <= 0 dropped unless combining by sum, empty rows 0."""
    tf = _tf()
    keep = _valid(ids)
    w = tf.ones_like(ids, dtype=dtypes.float32) if weights is None else \
        tf.cast(weights, dtypes.float32)
    if weights is not None and combiner != "sum":
        keep = tf.logical_and(keep, tf.greater(w, tf.zeros_like(w)))
    w = tf.where(keep, w, tf.zeros_like(w))
    total = tf.reduce_sum(tf.multiply(rows, tf.expand_dims(w, -1)), 1)
    if combiner == "sum":
        return total
    norm = tf.reduce_sum(w, 1, keepdims=True) if combiner == "mean" else \
        tf.sqrt(tf.reduce_sum(tf.square(w), 1, keepdims=True))
    return tf.div_no_nan(total, norm)


def _lookup(table, sparse_ids, combiner, max_norm=None):
    tf = _tf()
    ids = sparse_ids.id_tensor
    rows = tf.gather(table, tf.maximum(ids, tf.zeros_like(ids)))
    if max_norm is not None:
        rows = tf.clip_by_norm(rows, max_norm, axes=[2])
    return _combine_rows(rows, ids, sparse_ids.weight_tensor, combiner)


def _as_sparse_ids(value, what):
    """A value given for an already transformed column: _SparseIds, ids or a SparseTensor."""
    tf = _tf()
    if isinstance(value, _SparseIds):
        return value
    if _is_sparse(value):
        if not value.dtype.is_integer:
            raise InvalidTypeError(f"{what}: transformed ids must be integers, got "
                                   f"{value.dtype.name}")
        return _SparseIds(tf.cast(tf.sparse_tensor_to_dense(value, default_value=-1),
                                  dtypes.int64), None)
    t = _to_2d(tf.convert_to_tensor(value), what)
    return _SparseIds(tf.cast(t, dtypes.int64), None)
