"""tf.contrib.layers' feature columns: the pre-tf.feature_column API of TF 1.x's "wide &
deep" tutorials and of tf.contrib.learn's estimators.

    gender = tf.contrib.layers.sparse_column_with_keys("gender", ["Female", "Male"])
    occupation = tf.contrib.layers.sparse_column_with_hash_bucket("occupation", 1000)
    age = tf.contrib.layers.real_valued_column("age")
    age_buckets = tf.contrib.layers.bucketized_column(age, boundaries=[18, 25, 30, 40])
    wide = [gender, occupation, age_buckets,
            tf.contrib.layers.crossed_column([age_buckets, occupation], int(1e4))]
    deep = [tf.contrib.layers.embedding_column(occupation, dimension=8),
            tf.contrib.layers.one_hot_column(gender), age]
    logits, _, _ = tf.contrib.layers.weighted_sum_from_feature_columns(features, wide, 1)
    net = tf.contrib.layers.input_from_feature_columns(features, deep)

Columns are immutable namedtuples with TF's classes, fields, names and sort keys (the
`key` strings that order the columns of input_from_feature_columns' concatenation and of
the linear sum). Features (`columns_to_tensors`) map feature names to Tensors or
tf.SparseTensors ([batch, k] indices, as tf.parse_example gives VarLenFeatures); transformed
columns are added to the dict as TF does.

Semantics are TF 1.15's:
- sparse columns turn their feature's values into ids: sparse_column_with_hash_bucket
  Fingerprint64(value) % size (ints by their decimal text: TF's as_string), with_keys the
  index in `keys` (else default_value), with_vocabulary_file the line number in the file (out
  of vocabulary: num_oov_buckets Fingerprint64 buckets after it, else default_value),
  with_integerized_feature value mod bucket_size. Dense inputs lose '' (strings) and -1
  (integers) as TF's dense-to-sparse conversion does; ids of -1 count for nothing.
- weighted_sparse_column pairs the ids with the weights of another feature.
- crossed_column hashes every combination of one value per crossed column (a sparse
  column's raw values, a bucketized column's bucket ids) as contrib's SparseFeatureCross:
  without hash_key (the default) the original 64-bit hash combine seeded with 0xDECAFCAFFE,
  with hash_key FarmHash's FingerprintCat64 chained from it; SparseTensor features enter the
  cross before dense ones, as in TF's kernel. Ids are TF's (checked against TF's test
  vectors).
- weighted_sum_from_feature_columns is a linear model: per sparse column a zero-initialized
  `weights` [num ids, num_outputs] variable looked up and combined with the column's
  combiner (TF's safe_embedding_lookup_sparse: ids < 0 dropped, weights <= 0 dropped unless
  the combiner is "sum", empty rows 0), per real-valued column x @ `weight`, plus
  `bias_weight`. joint_weighted_sum_from_feature_columns keeps all sparse weights in one
  variable. input_from_feature_columns concatenates real values, one-hot (multi-hot) and
  bucketized columns' one-hot rows, and embeddings (`weights` [num ids, dimension], TF's
  default initializer truncated_normal(stddev=1/sqrt(num ids)); shared_embedding_columns
  share one variable).

Differences from TF: the transformed value of a sparse column in columns_to_tensors is a
dense id matrix (`_SparseIds`: ids [batch, k] int64 with -1 for none, and weights) instead
of a SparseTensor; a SparseTensor value that is itself '' or -1 counts as missing; one-hot
columns of weighted columns add the weights of repeated ids (TF fails on them). Variable-
length real-valued columns and scattered_embedding_column are not provided. Vocabulary
lookups, hashing and crossing run in the executor; the rest compiles under XLA.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, NotFoundError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.lookup_ops import (fingerprint64, fingerprint_cat64,
                                            string_to_hash_bucket_fast, vocabulary_lookup)

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


# ---- columns --------------------------------------------------------------------------------

class _FeatureColumn:
    """The base of contrib's feature columns (namedtuples: equal configs, equal columns)."""

    __slots__ = ()

    def _key_without(self, excluded):
        parts = [f"{k}={v}" for k, v in zip(self._fields, self) if k not in excluded]
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def key(self):
        """The string the columns are sorted by."""
        return f"{self}"

    def _checkpoint_path(self):
        return None


def _check_combiner(combiner, name):
    if combiner not in _COMBINERS:
        raise InvalidArgumentError(f"combiner must be one of {list(_COMBINERS)}, got "
                                   f"{combiner!r} (column_name: {name})")


class _SparseIdLookupConfig(collections.namedtuple(
        "_SparseIdLookupConfig", ["vocabulary_file", "keys", "num_oov_buckets", "vocab_size",
                                  "default_value"])):
    """How a sparse column maps values to ids: a vocabulary file or a tuple of keys."""

    def __new__(cls, vocabulary_file=None, keys=None, num_oov_buckets=0, vocab_size=None,
                default_value=-1):
        return super().__new__(cls, vocabulary_file, keys, num_oov_buckets, vocab_size,
                               default_value)


class _SparseColumn(_FeatureColumn, collections.namedtuple(
        "_SparseColumn", ["column_name", "is_integerized", "bucket_size", "lookup_config",
                          "combiner", "dtype"])):
    """A categorical feature: a SparseTensor (or dense tensor) of strings or integers
    turned into ids in [0, length)."""

    def __new__(cls, column_name, is_integerized=False, bucket_size=None, lookup_config=None,
                combiner="sum", dtype=dtypes.string):
        dtype = dtypes.as_dtype(dtype)
        if not isinstance(column_name, str) or not column_name:
            raise InvalidArgumentError(f"column_name must be a non-empty string, got "
                                       f"{column_name!r}")
        if is_integerized and not dtype.is_integer:
            raise InvalidArgumentError(f"dtype must be an integer if is_integerized is True. "
                                       f"dtype: {dtype.name}, column_name: {column_name}.")
        if dtype != dtypes.string and not dtype.is_integer:
            raise InvalidArgumentError(f"dtype must be string or integer. dtype: {dtype.name}, "
                                       f"column_name: {column_name}")
        if (bucket_size is None) == (lookup_config is None):
            raise InvalidArgumentError(f"one and only one of bucket_size or lookup_config must "
                                       f"be set. column_name: {column_name}")
        if bucket_size is not None:
            if isinstance(bucket_size, bool) or not isinstance(bucket_size,
                                                               (int, np.integer)):
                raise InvalidTypeError(f"bucket_size must be an int, got {bucket_size!r} "
                                       f"(column_name: {column_name})")
            if bucket_size < 1:
                raise InvalidArgumentError(f"bucket_size must be at least 1. bucket_size: "
                                           f"{bucket_size}, column_name: {column_name}")
            bucket_size = int(bucket_size)
        _check_combiner(combiner, column_name)
        return super().__new__(cls, column_name, bool(is_integerized), bucket_size,
                               lookup_config, combiner, dtype)

    @property
    def name(self):
        return self.column_name

    @property
    def length(self):
        """The number of ids."""
        if self.bucket_size is not None:
            return self.bucket_size
        return self.lookup_config.vocab_size + self.lookup_config.num_oov_buckets

    @property
    def config(self):
        return {self.column_name: _tf().VarLenFeature(self.dtype)}

    def id_tensor(self, value):
        return value.id_tensor

    def weight_tensor(self, value):
        return value.weight_tensor

    def _values(self, columns_to_tensors):
        x = _raw(columns_to_tensors, self.column_name)
        if (x.dtype == dtypes.string) != (self.dtype == dtypes.string) or not (
                x.dtype == dtypes.string or x.dtype.is_integer):
            raise InvalidTypeError(f"The feature {self.column_name!r} of dtype {x.dtype.name} "
                                   f"does not match its column's dtype {self.dtype.name}")
        return _dense_values(x, f"sparse column {self.column_name!r}")

    def insert_transformed_feature(self, columns_to_tensors):
        tf = _tf()
        with tf.name_scope(self.column_name):
            columns_to_tensors[self] = _SparseIds(self._ids(columns_to_tensors), None)

    def is_compatible(self, other):
        if self.lookup_config and other.lookup_config:
            return self.lookup_config == other.lookup_config
        return self.length == other.length and (
            self.dtype == other.dtype or (self.dtype.is_integer and other.dtype.is_integer))


class _SparseColumnIntegerized(_SparseColumn):
    def _ids(self, columns_to_tensors):
        tf = _tf()
        x = tf.cast(self._values(columns_to_tensors), dtypes.int64)
        ids = tf.mod(x, tf.constant(np.int64(self.bucket_size)))
        return tf.where(tf.equal(x, tf.constant(np.int64(-1))), tf.ones_like(x) * -1, ids)


class _SparseColumnHashed(_SparseColumn):
    def _ids(self, columns_to_tensors):
        x = self._values(columns_to_tensors)
        if x.dtype.is_integer and x.dtype != dtypes.int64:
            x = _tf().cast(x, dtypes.int64)
        return string_to_hash_bucket_fast(x, self.bucket_size, name="lookup")


class _SparseColumnKeys(_SparseColumn):
    def _ids(self, columns_to_tensors):
        x = self._values(columns_to_tensors)
        if x.dtype.is_integer and x.dtype != dtypes.int64:
            x = _tf().cast(x, dtypes.int64)
        cfg = self.lookup_config
        return vocabulary_lookup(x, cfg.keys, default_value=cfg.default_value, name="lookup")


class _SparseColumnVocabulary(_SparseColumn):
    def _ids(self, columns_to_tensors):
        tf = _tf()
        cfg = self.lookup_config
        tokens = _read_vocabulary(cfg.vocabulary_file, cfg.vocab_size, self.column_name)
        x = self._values(columns_to_tensors)
        if x.dtype.is_integer:   # looked up by their decimal text, as TF's as_string
            missing = tf.equal(tf.cast(x, dtypes.int64), tf.constant(np.int64(-1)))
            ids = vocabulary_lookup(tf.as_string(x), tokens, default_value=cfg.default_value,
                                    num_oov_buckets=cfg.num_oov_buckets, name="lookup")
            return tf.where(missing, tf.ones_like(ids) * -1, ids)
        return vocabulary_lookup(x, tokens, default_value=cfg.default_value,
                                 num_oov_buckets=cfg.num_oov_buckets, name="lookup")


def _read_vocabulary(path, vocab_size, column_name):
    try:
        with open(path, encoding="utf-8") as f:
            tokens = [line.rstrip("\r\n") for line in f]
    except OSError as e:
        raise NotFoundError(f"vocabulary_file {path!r} of column {column_name!r}: {e}") \
            from None
    if vocab_size > len(tokens):
        raise InvalidArgumentError(f"Invalid vocab_size {vocab_size} of column {column_name!r}:"
                                   f" {path} has {len(tokens)} lines")
    return tokens[:vocab_size]


def sparse_column_with_integerized_feature(column_name, bucket_size, combiner="sum",
                                           dtype=dtypes.int64):
    """Integer features used as ids: value mod bucket_size."""
    return _SparseColumnIntegerized(column_name, is_integerized=True, bucket_size=bucket_size,
                                    combiner=combiner, dtype=dtype)


def sparse_column_with_hash_bucket(column_name, hash_bucket_size, combiner="sum",
                                   dtype=dtypes.string, hash_keys=None):
    """Ids Fingerprint64(value) % hash_bucket_size (integers hashed by their decimal text),
    TF's buckets."""
    if hash_keys is not None:
        raise InvalidArgumentError("sparse_column_with_hash_bucket: hash_keys (multiple "
                                   "hashes per value) is not supported by xlapy")
    return _SparseColumnHashed(column_name, bucket_size=hash_bucket_size, combiner=combiner,
                               dtype=dtype)


def sparse_column_with_keys(column_name, keys, default_value=-1, combiner="sum",
                            dtype=dtypes.string):
    """Ids the index of the value in `keys` (others: default_value; -1 drops them)."""
    keys = tuple(keys)
    dt = dtypes.as_dtype(dtype)
    if not keys:
        raise InvalidArgumentError(f"keys must not be empty (column_name: {column_name})")
    want = (str, bytes) if dt == dtypes.string else (int, np.integer)
    if not all(isinstance(k, want) for k in keys):
        raise InvalidTypeError(f"keys must be castable to {dt.name}, got {list(keys)!r} "
                               f"(column_name: {column_name})")
    if len(set(keys)) != len(keys):
        raise InvalidArgumentError(f"Duplicate keys in {list(keys)} (column_name: "
                                   f"{column_name})")
    return _SparseColumnKeys(column_name, lookup_config=_SparseIdLookupConfig(
        keys=keys, vocab_size=len(keys), default_value=int(default_value)),
        combiner=combiner, dtype=dt)


def sparse_column_with_vocabulary_file(column_name, vocabulary_file, num_oov_buckets=0,
                                       vocab_size=None, default_value=-1, combiner="sum",
                                       dtype=dtypes.string):
    """Ids the line number of the value in vocabulary_file (its first vocab_size lines);
    others go to one of num_oov_buckets hash buckets after it, else to default_value."""
    if vocab_size is None:
        raise InvalidArgumentError(f"vocab_size should be defined. column_name: {column_name}")
    if int(vocab_size) < 1 or int(num_oov_buckets) < 0:
        raise InvalidArgumentError(f"vocab_size must be >= 1 and num_oov_buckets >= 0, got "
                                   f"{vocab_size}, {num_oov_buckets} (column_name: "
                                   f"{column_name})")
    return _SparseColumnVocabulary(column_name, lookup_config=_SparseIdLookupConfig(
        vocabulary_file=vocabulary_file, num_oov_buckets=int(num_oov_buckets),
        vocab_size=int(vocab_size), default_value=int(default_value)),
        combiner=combiner, dtype=dtype)


class _WeightedSparseColumn(_FeatureColumn, collections.namedtuple(
        "_WeightedSparseColumn", ["sparse_id_column", "weight_column_name", "dtype"])):
    """A sparse column's ids with the weights of the feature weight_column_name."""

    @property
    def name(self):
        return f"{self.sparse_id_column.name}_weighted_by_{self.weight_column_name}"

    @property
    def length(self):
        return self.sparse_id_column.length

    @property
    def combiner(self):
        return self.sparse_id_column.combiner

    @property
    def config(self):
        cfg = dict(self.sparse_id_column.config)
        cfg[self.weight_column_name] = _tf().VarLenFeature(self.dtype)
        return cfg

    def id_tensor(self, value):
        return value.id_tensor

    def weight_tensor(self, value):
        return value.weight_tensor

    def insert_transformed_feature(self, columns_to_tensors):
        tf = _tf()
        ids = _transform(columns_to_tensors, self.sparse_id_column)
        w = _raw(columns_to_tensors, self.weight_column_name)
        if not (w.dtype.is_floating or w.dtype.is_integer):
            raise InvalidTypeError(f"The weight feature {self.weight_column_name!r} must be "
                                   f"numeric, got {w.dtype.name}")
        if _is_sparse(w):
            w = tf.sparse_tensor_to_dense(w, default_value=0)
        else:
            w = _to_2d(w, f"weight feature {self.weight_column_name!r}")
        w = tf.cast(w, dtypes.float32)
        if not w.shape.is_compatible_with(ids.id_tensor.shape):
            raise InvalidArgumentError(f"weighted_sparse_column {self.name!r}: the weights' "
                                       f"shape {w.shape.tf_str()} differs from the ids' "
                                       f"{ids.id_tensor.shape.tf_str()}")
        columns_to_tensors[self] = _SparseIds(ids.id_tensor, w)


def weighted_sparse_column(sparse_id_column, weight_column_name, dtype=dtypes.float32):
    """A sparse column whose ids carry the values of weight_column_name as weights (the
    two features have the same indices)."""
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise InvalidArgumentError(f"dtype is not convertible to float. Given {dtype.name}")
    if not isinstance(sparse_id_column, _SparseColumn):
        raise InvalidTypeError(f"sparse_id_column must be a sparse_column_with_* column, got "
                               f"{sparse_id_column!r}")
    return _WeightedSparseColumn(sparse_id_column, weight_column_name, dtype)


class _OneHotColumn(_FeatureColumn, collections.namedtuple("_OneHotColumn",
                                                           ["sparse_id_column"])):
    """A sparse column as a dense multi-hot [batch, length] input of a DNN."""

    @property
    def name(self):
        return f"{self.sparse_id_column.name}_one_hot"

    @property
    def length(self):
        return self.sparse_id_column.length

    @property
    def config(self):
        return self.sparse_id_column.config

    def insert_transformed_feature(self, columns_to_tensors):
        columns_to_tensors[self] = _transform(columns_to_tensors, self.sparse_id_column)

    def _to_dnn_input_layer(self, value, weight_collections=None, trainable=True):
        tf = _tf()
        oh = tf.one_hot(value.id_tensor, self.length, dtype=dtypes.float32)
        if value.weight_tensor is not None:
            oh = tf.multiply(oh, tf.expand_dims(value.weight_tensor, -1))
        return tf.reduce_sum(oh, 1)


def one_hot_column(sparse_id_column):
    """The multi-hot [batch, length] count (weighted columns: sum of weights) of each id of
    a sparse, weighted or crossed column (its combiner is ignored)."""
    if not isinstance(sparse_id_column, (_SparseColumn, _WeightedSparseColumn,
                                         _CrossedColumn)):
        raise InvalidTypeError(f"one_hot_column needs a sparse, weighted sparse or crossed "
                               f"column, got {sparse_id_column!r}")
    return _OneHotColumn(sparse_id_column)


class _EmbeddingColumn(_FeatureColumn, collections.namedtuple(
        "_EmbeddingColumn", ["sparse_id_column", "dimension", "combiner", "initializer",
                             "ckpt_to_load_from", "tensor_name_in_ckpt",
                             "shared_embedding_name", "shared_vocab_size", "max_norm",
                             "trainable"])):
    """A sparse column's ids embedded in `dimension` trainable values, combined per
    example."""

    def __new__(cls, sparse_id_column, dimension, combiner="mean", initializer=None,
                ckpt_to_load_from=None, tensor_name_in_ckpt=None, shared_embedding_name=None,
                shared_vocab_size=None, max_norm=None, trainable=True):
        if not isinstance(sparse_id_column, (_SparseColumn, _WeightedSparseColumn,
                                             _CrossedColumn)):
            raise InvalidTypeError(f"embedding_column needs a sparse, weighted sparse or "
                                   f"crossed column, got {sparse_id_column!r}")
        if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)) or \
                dimension < 1:
            raise InvalidArgumentError(f"dimension must be a positive integer, got "
                                       f"{dimension!r} (column: {sparse_id_column.name})")
        _check_combiner(combiner, sparse_id_column.name)
        if initializer is not None and not callable(initializer):
            raise InvalidArgumentError(f"initializer must be callable if specified. Embedding "
                                       f"of column_name: {sparse_id_column.name}")
        if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
            raise InvalidArgumentError("Must specify both `ckpt_to_load_from` and "
                                       "`tensor_name_in_ckpt` or none of them.")
        if initializer is None:
            initializer = _tf().truncated_normal_initializer(
                mean=0.0, stddev=1 / math.sqrt(sparse_id_column.length))
        return super().__new__(cls, sparse_id_column, int(dimension), combiner, initializer,
                               ckpt_to_load_from, tensor_name_in_ckpt, shared_embedding_name,
                               shared_vocab_size, max_norm, trainable)

    @property
    def name(self):
        suffix = "embedding" if self.shared_embedding_name is None else "shared_embedding"
        return f"{self.sparse_id_column.name}_{suffix}"

    @property
    def length(self):
        return self.sparse_id_column.length if self.shared_vocab_size is None \
            else self.shared_vocab_size

    @property
    def config(self):
        return self.sparse_id_column.config

    @property
    def key(self):
        return self._key_without(("initializer",))

    def _checkpoint_path(self):
        if self.ckpt_to_load_from is not None:
            return self.ckpt_to_load_from, self.tensor_name_in_ckpt
        return None

    def insert_transformed_feature(self, columns_to_tensors):
        columns_to_tensors[self] = _transform(columns_to_tensors, self.sparse_id_column)

    def _to_dnn_input_layer(self, value, weight_collections=None, trainable=True):
        tf = _tf()
        shape = [self.length, self.dimension]
        if self.shared_embedding_name is not None:
            coll = "SHARED_EMBEDDING_COLLECTION_" + self.shared_embedding_name.upper()
            graph = tf.get_default_graph()
            existing = graph.get_collection(coll)
            if existing:
                table = existing[0]
                if table.shape.as_list() != shape:
                    raise InvalidArgumentError(
                        f"The embedding variable with name {self.shared_embedding_name} "
                        "already exists, but its shape does not match required embedding "
                        "shape here. Please make sure to use different "
                        "shared_embedding_name for different shared embeddings.")
            else:
                table = _model_variable(self.shared_embedding_name, shape, self.initializer,
                                        trainable and self.trainable, weight_collections)
                graph.add_to_collection(coll, table)
        else:
            table = _model_variable("weights", shape, self.initializer,
                                    trainable and self.trainable, weight_collections)
        _maybe_restore(self, table)
        return _lookup(table, value, self.combiner, self.max_norm)


def embedding_column(sparse_id_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A dense [batch, dimension] embedding of a sparse column's ids ('mean', 'sqrtn' or
    'sum' of their rows, weighted by a weighted column's weights); the table starts as
    truncated_normal(stddev=1/sqrt(number of ids)) unless initializer is given."""
    return _EmbeddingColumn(sparse_id_column, dimension, combiner, initializer,
                            ckpt_to_load_from, tensor_name_in_ckpt, max_norm=max_norm,
                            trainable=trainable)


def shared_embedding_columns(sparse_id_columns, dimension, combiner="mean",
                             shared_embedding_name=None, initializer=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                             trainable=True):
    """Embedding columns of several sparse columns of one id space sharing one table
    (named shared_embedding_name, by default from the columns' names)."""
    if isinstance(sparse_id_columns, (str, bytes)) or not isinstance(
            sparse_id_columns, (list, tuple)):
        raise InvalidTypeError(f"sparse_id_columns must be a non-string sequence (ex: list or "
                               f"tuple) instead of type {type(sparse_id_columns).__name__}.")
    cols = list(sparse_id_columns)
    if not cols:
        raise InvalidArgumentError("The input sparse_id_columns should have at least one "
                                   "element.")
    for c in cols:
        if not isinstance(c, _SparseColumn):
            raise InvalidTypeError(f"Elements of sparse_id_columns must be _SparseColumn, but "
                                   f"{c!r} is not.")
    if len(cols) == 1:
        return [_EmbeddingColumn(cols[0], dimension, combiner, initializer, ckpt_to_load_from,
                                 tensor_name_in_ckpt, shared_embedding_name,
                                 max_norm=max_norm, trainable=trainable)]
    if not all(c.is_compatible(cols[0]) for c in cols[1:]):
        raise InvalidArgumentError("The input sparse id columns are not compatible.")
    if not shared_embedding_name:
        names = [c.name for c in sorted(cols)]
        shared_embedding_name = "_".join(names[:3])
        if len(names) > 3:
            shared_embedding_name += f"_plus_{len(names) - 3}_others"
        shared_embedding_name += "_shared_embedding"
    return tuple(_EmbeddingColumn(c, dimension, combiner, initializer, ckpt_to_load_from,
                                  tensor_name_in_ckpt, shared_embedding_name,
                                  cols[0].length, max_norm=max_norm, trainable=trainable)
                 for c in cols)


class _RealValuedColumn(_FeatureColumn, collections.namedtuple(
        "_RealValuedColumn", ["column_name", "dimension", "default_value", "dtype",
                              "normalizer"])):
    """A dense numeric feature of `dimension` values per example."""

    @property
    def name(self):
        return self.column_name

    @property
    def normalizer_fn(self):
        return self.normalizer

    @property
    def key(self):
        return self._key_without(("normalizer",))

    @property
    def config(self):
        default = None if self.default_value is None else list(self.default_value)
        return {self.column_name: _tf().FixedLenFeature([self.dimension], self.dtype,
                                                         default)}

    def insert_transformed_feature(self, columns_to_tensors):
        tf = _tf()
        x = _raw(columns_to_tensors, self.column_name)
        if _is_sparse(x):
            raise InvalidArgumentError(f"real_valued_column {self.column_name!r}: the feature "
                                       "must be a dense Tensor, got a SparseTensor")
        if not (x.dtype.is_floating or x.dtype.is_integer):
            raise InvalidTypeError(f"real_valued_column {self.column_name!r}: the feature "
                                   f"must be numeric, got {x.dtype.name}")
        if self.normalizer is not None:
            x = self.normalizer(x)
        columns_to_tensors[self] = tf.cast(x, dtypes.float32)

    def _to_dnn_input_layer(self, value, weight_collections=None, trainable=True):
        return _to_2d(value, f"real_valued_column {self.column_name!r}")


def real_valued_column(column_name, dimension=1, default_value=None, dtype=dtypes.float32,
                       normalizer=None):
    """A dense feature of `dimension` numbers per example; default_value fills it when a
    parsed tf.Example lacks it; normalizer (a function of the tensor) is applied first."""
    if dimension is None:
        raise InvalidTypeError(f"dimension must be an integer (variable-length real-valued "
                               f"columns are not supported). column_name: {column_name}")
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)):
        raise InvalidTypeError(f"dimension must be an integer. dimension: {dimension}, "
                               f"column_name: {column_name}")
    if dimension < 1:
        raise InvalidArgumentError(f"dimension must be greater than 0. dimension: "
                                   f"{dimension}, column_name: {column_name}")
    dimension = int(dimension)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise InvalidArgumentError(f"dtype must be convertible to float. dtype: {dtype.name}, "
                                   f"column_name: {column_name}")
    if normalizer is not None and not callable(normalizer):
        raise InvalidTypeError(f"normalizer must be callable, got {normalizer!r}")
    if default_value is None:
        return _RealValuedColumn(column_name, dimension, None, dtype, normalizer)
    scalar = isinstance(default_value, (int, float, np.integer, np.floating)) and \
        not isinstance(default_value, bool)
    values = [default_value] * dimension if scalar else default_value
    if not isinstance(values, (list, tuple)):
        raise InvalidTypeError(f"default_value must be compatible with dtype. default_value: "
                               f"{default_value}, dtype: {dtype.name}, column_name: "
                               f"{column_name}")
    if len(values) != dimension:
        raise InvalidArgumentError(f"The length of default_value must be equal to dimension. "
                                   f"default_value: {default_value}, dimension: {dimension}, "
                                   f"column_name: {column_name}")
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values)
    nums = all(isinstance(v, (int, float, np.integer, np.floating)) and
               not isinstance(v, bool) for v in values)
    if dtype.is_integer and ints:
        return _RealValuedColumn(column_name, dimension, tuple(int(v) for v in values), dtype,
                                 normalizer)
    if dtype.is_floating and nums:
        return _RealValuedColumn(column_name, dimension, tuple(float(v) for v in values),
                                 dtype, normalizer)
    raise InvalidTypeError(f"default_value must be compatible with dtype. default_value: "
                           f"{default_value}, dtype: {dtype.name}, column_name: {column_name}")


class _BucketizedColumn(_FeatureColumn, collections.namedtuple(
        "_BucketizedColumn", ["source_column", "boundaries"])):
    """A real-valued column's values as bucket ids: bucket i holds
    boundaries[i-1] <= x < boundaries[i]."""

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def length(self):
        """Buckets per value."""
        return len(self.boundaries) + 1

    @property
    def config(self):
        return self.source_column.config

    def insert_transformed_feature(self, columns_to_tensors):
        tf = _tf()
        x = _transform(columns_to_tensors, self.source_column)
        with tf.name_scope("bucketize"):
            b = tf.constant(np.asarray(self.boundaries, np.float32))
            columns_to_tensors[self] = tf.reduce_sum(tf.cast(
                tf.greater_equal(tf.expand_dims(x, -1), b), dtypes.int64), -1)

    def _ids(self, value):
        """Per example one id per source value: bucket + i * length for value i."""
        tf = _tf()
        d = self.source_column.dimension
        ids = tf.reshape(value, [-1, d])
        if d > 1:
            ids = tf.add(ids, tf.constant(np.arange(d, dtype=np.int64)[None, :] * self.length))
        return ids

    def _to_dnn_input_layer(self, value, weight_collections=None, trainable=True):
        tf = _tf()
        oh = tf.one_hot(value, self.length, dtype=dtypes.float32)
        return tf.reshape(oh, [-1, self.length * self.source_column.dimension])

    def _sparse(self, value):
        return _SparseIds(self._ids(value), None)

    @property
    def _num_ids(self):
        return self.length * self.source_column.dimension


def bucketized_column(source_column, boundaries):
    """Buckets of a real-valued column (equal boundaries are merged)."""
    if not isinstance(source_column, _RealValuedColumn):
        raise InvalidTypeError(f"source_column must be an instance of _RealValuedColumn. "
                               f"source_column: {source_column}")
    if not isinstance(boundaries, (list, tuple)) or not boundaries:
        raise InvalidArgumentError(f"boundaries must be a non-empty list or tuple. "
                                   f"boundaries: {boundaries}")
    clean = []
    for a, b in zip(boundaries, boundaries[1:]):
        if a > b:
            raise InvalidArgumentError(f"boundaries must be a sorted list. boundaries: "
                                       f"{boundaries}")
        if a < b:
            clean.append(a)
    clean.append(boundaries[-1])
    return _BucketizedColumn(source_column, tuple(clean))


class _CrossedColumn(_FeatureColumn, collections.namedtuple(
        "_CrossedColumn", ["columns", "hash_bucket_size", "hash_key", "combiner",
                           "ckpt_to_load_from", "tensor_name_in_ckpt"])):
    """The hashed combinations of sparse and bucketized columns' values."""

    @property
    def name(self):
        return "_X_".join(sorted(c.name for c in self.columns))

    @property
    def length(self):
        return self.hash_bucket_size

    @property
    def config(self):
        cfg = {}
        for c in self.columns:
            cfg.update(c.config)
        return cfg

    def id_tensor(self, value):
        return value.id_tensor

    def weight_tensor(self, value):
        return None

    def _checkpoint_path(self):
        if self.ckpt_to_load_from is not None:
            return self.ckpt_to_load_from, self.tensor_name_in_ckpt
        return None

    def _leaves(self):
        out = []
        for c in self.columns:
            out.extend(c._leaves() if isinstance(c, _CrossedColumn) else [c])
        return out

    def insert_transformed_feature(self, columns_to_tensors):
        tf = _tf()
        sparse_parts, dense_parts = [], []
        for c in self._leaves():
            if isinstance(c, _BucketizedColumn):
                sparse_parts.append((c._ids(_transform(columns_to_tensors, c)), False))
                continue
            x = _raw(columns_to_tensors, c.name)
            if not (x.dtype == dtypes.string or x.dtype.is_integer):
                raise InvalidTypeError(f"crossed_column: the feature {c.name!r} must be "
                                       f"string or integer, got {x.dtype.name}")
            part = _dense_values(x, f"crossed_column feature {c.name!r}")
            if part.dtype != dtypes.string:
                part = tf.cast(part, dtypes.int64)
            # (TF's kernel takes the SparseTensors first, then the dense tensors)
            (sparse_parts if _is_sparse(x) else dense_parts).append((part, _is_sparse(x)))
        parts = sparse_parts + dense_parts
        columns_to_tensors[self] = _SparseIds(
            _cross([p for p, _ in parts], [d for _, d in parts], self.hash_bucket_size,
                   self.hash_key), None)


def crossed_column(columns, hash_bucket_size, combiner="sum", ckpt_to_load_from=None,
                   tensor_name_in_ckpt=None, hash_key=None):
    """Hash(one value of each column, for every combination) % hash_bucket_size, as contrib's
    SparseFeatureCross (hash_key: FingerprintCat64 chained from it; None: the original
    hash combine)."""
    columns = list(columns)
    for c in columns:
        if not isinstance(c, (_SparseColumn, _CrossedColumn, _BucketizedColumn)):
            raise InvalidTypeError(f"columns must be a set of _SparseColumn, _CrossedColumn, "
                                   f"or _BucketizedColumn instances. (column {c} is a "
                                   f"{type(c).__name__})")
    if len(columns) < 2:
        raise InvalidArgumentError(f"columns must contain at least 2 elements. columns: "
                                   f"{columns}")
    if isinstance(hash_bucket_size, bool) or not isinstance(hash_bucket_size,
                                                            (int, np.integer)):
        raise InvalidTypeError(f"hash_bucket_size must be an int, got {hash_bucket_size!r}")
    if hash_bucket_size < 2:
        raise InvalidArgumentError(f"hash_bucket_size must be at least 2. hash_bucket_size: "
                                   f"{hash_bucket_size}")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise InvalidArgumentError("Must specify both `ckpt_to_load_from` and "
                                   "`tensor_name_in_ckpt` or none of them.")
    _check_combiner(combiner, "crossed_column")
    return _CrossedColumn(tuple(sorted(columns, key=lambda c: c.name)), int(hash_bucket_size),
                          hash_key, combiner, ckpt_to_load_from, tensor_name_in_ckpt)


_ALL = (_SparseColumn, _WeightedSparseColumn, _OneHotColumn, _EmbeddingColumn,
        _RealValuedColumn, _BucketizedColumn, _CrossedColumn)


# ---- transformation -------------------------------------------------------------------------

def _transform(columns_to_tensors, column):
    """column's transformed value, computed once and kept in columns_to_tensors."""
    if column in columns_to_tensors:
        value = columns_to_tensors[column]
        if isinstance(column, (_SparseColumn, _CrossedColumn, _WeightedSparseColumn)):
            value = _as_sparse_ids(value, f"column {column.name!r}")
        return value
    column.insert_transformed_feature(columns_to_tensors)
    return columns_to_tensors[column]


def check_feature_columns(feature_columns):
    """Raises if two columns have the same key."""
    seen = set()
    for c in feature_columns:
        if not isinstance(c, _FeatureColumn):
            raise InvalidTypeError(f"feature_columns should only contain instances of "
                                   f"_FeatureColumn. Given column is {c!r}")
        if c.key in seen:
            raise InvalidArgumentError(f"Duplicate feature column key found for column: "
                                       f"{c.name}. This usually means that the column is "
                                       "almost identical to another column, and one must be "
                                       "discarded.")
        seen.add(c.key)


def _sorted_columns(feature_columns):
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    cols = list(feature_columns or ())
    check_feature_columns(cols)
    return sorted(set(cols), key=lambda c: c.key)


def _check_features(columns_to_tensors):
    if not isinstance(columns_to_tensors, dict):
        raise InvalidTypeError(f"columns_to_tensors must be a dict of feature name -> Tensor, "
                               f"got {type(columns_to_tensors).__name__}")


def transform_features(features, feature_columns):
    """{column: transformed value} of each column (see _SparseIds for sparse ones)."""
    _check_features(features)
    c2t = dict(features)
    cols = _sorted_columns(feature_columns)
    for c in cols:
        _transform(c2t, c)
    return {c: c2t[c] for c in cols}


def _model_variable(name, shape, initializer, trainable, collections):
    from xlapy.compat.v1.contrib.framework.model_variables import model_variable  # (cycle)
    return model_variable(name, shape=shape, dtype=dtypes.float32, initializer=initializer,
                          trainable=trainable, collections=collections)


def _maybe_restore(column, variable):
    path = column._checkpoint_path()
    if path is not None:
        _tf().train.init_from_checkpoint(path[0], {path[1]: variable})


def _weight_collections(weight_collections):
    from xlapy.compat.v1.framework import GraphKeys
    if not weight_collections:
        return None
    return list(dict.fromkeys(list(weight_collections) + [GraphKeys.GLOBAL_VARIABLES]))


def input_from_feature_columns(columns_to_tensors, feature_columns, weight_collections=None,
                               trainable=True, scope=None):
    """The dense [batch, n] input of a DNN: each column's dense value (real-valued,
    bucketized one-hot, one-hot, embedding), concatenated in the order of the columns'
    keys."""
    tf = _tf()
    _check_features(columns_to_tensors)
    cols = _sorted_columns(feature_columns)
    if not cols:
        raise InvalidArgumentError("feature_columns must not be empty")
    colls = _weight_collections(weight_collections)
    outs = []
    with tf.variable_scope(scope, default_name="input_from_feature_columns"):
        for c in cols:
            if not hasattr(c, "_to_dnn_input_layer"):
                raise InvalidArgumentError(
                    f"Error creating input layer for column: {c.name}. {type(c).__name__} is "
                    "not supported in DNN. Please use embedding_column or one_hot_column.")
            with tf.variable_scope(None, default_name=c.name):
                value = _transform(columns_to_tensors, c)
                outs.append(c._to_dnn_input_layer(value, colls, trainable))
        return tf.concat(outs, 1)


def _wide_ids(column, value):
    """(ids, number of ids, combiner) of a column in a linear model, or None for a dense
    one."""
    if isinstance(column, _BucketizedColumn):
        return column._sparse(value), column._num_ids, "sum"
    if isinstance(column, (_SparseColumn, _WeightedSparseColumn, _CrossedColumn)):
        return value, column.length, column.combiner
    if isinstance(column, _RealValuedColumn):
        return None
    raise InvalidArgumentError(f"Error creating weighted sum for column: {column.name}. "
                               f"Column {type(column).__name__} is not supported in linear "
                               "models. Please use sparse_column.")


def weighted_sum_from_feature_columns(columns_to_tensors, feature_columns, num_outputs,
                                      weight_collections=None, trainable=True, scope=None):
    """A linear model: (predictions [batch, num_outputs], {column: [its variable]},
    bias_weight). Sparse columns look up rows of a [num ids, num_outputs] `weights`
    variable, real-valued ones multiply a [width, num_outputs] `weight`; all start at 0."""
    tf = _tf()
    _check_features(columns_to_tensors)
    cols = _sorted_columns(feature_columns)
    if not cols:
        raise InvalidArgumentError("feature_columns must not be empty")
    num_outputs = int(num_outputs)
    zeros = tf.zeros_initializer()
    outs, col_vars = [], {}
    with tf.variable_scope(scope, default_name="weighted_sum_from_feature_columns"):
        for c in cols:
            value = _transform(columns_to_tensors, c)
            wide = _wide_ids(c, value)
            with tf.variable_scope(None, default_name=c.name):
                if wide is not None:
                    ids, n, combiner = wide
                    w = _model_variable("weights", [n, num_outputs], zeros, trainable,
                                        weight_collections)
                    pred = _lookup(w, ids, combiner)
                else:
                    x = _to_2d(value, f"real_valued_column {c.name!r}")
                    width = x.shape.dims[1]
                    if width is None:
                        raise InvalidArgumentError(f"Error creating weighted sum for column: "
                                                   f"{c.name}: its width must be known")
                    w = _model_variable("weight", [width, num_outputs], zeros, trainable,
                                        weight_collections)
                    pred = tf.matmul(x, w)
            _maybe_restore(c, w)
            outs.append(tf.reshape(pred, [-1, num_outputs]))
            col_vars[c] = [w]
        bias = _model_variable("bias_weight", [num_outputs], zeros, trainable,
                               _weight_collections(weight_collections))
        total = tf.add_n(outs) if len(outs) > 1 else outs[0]
        return tf.nn.bias_add(total, bias), col_vars, bias


def joint_weighted_sum_from_feature_columns(columns_to_tensors, feature_columns, num_outputs,
                                            weight_collections=None, trainable=True,
                                            scope=None):
    """weighted_sum_from_feature_columns for unweighted sparse columns combined by sum, all
    in one `linear_weights/weights` variable: (predictions, [variable], bias_weight)."""
    tf = _tf()
    _check_features(columns_to_tensors)
    cols = _sorted_columns(feature_columns)
    if not cols:
        raise InvalidArgumentError("At least one column must be in the model.")
    num_outputs = int(num_outputs)
    zeros = tf.zeros_initializer()
    with tf.variable_scope(scope, default_name="joint_weighted_sum_from_feature_columns"):
        parts, offset = [], 0
        for c in cols:
            wide = _wide_ids(c, _transform(columns_to_tensors, c))
            if wide is None:
                raise NotImplementedError("Real-valued columns are not supported. Use "
                                          "weighted_sum_from_feature_columns instead, or "
                                          "bucketize these columns.")
            ids, n, combiner = wide
            if ids.weight_tensor is not None:
                raise InvalidArgumentError("Joint sums for weighted sparse columns are not "
                                           "supported. Please use "
                                           "weighted_sum_from_feature_columns instead.")
            if combiner != "sum":
                raise InvalidArgumentError("Combiners other than sum are not supported for "
                                           "joint sums. Please use "
                                           "weighted_sum_from_feature_columns instead.")
            t = ids.id_tensor
            shifted = tf.where(_valid(t), t + np.int64(offset), t)
            parts.append(shifted)
            offset += n
        all_ids = _SparseIds(tf.concat(parts, 1) if len(parts) > 1 else parts[0], None)
        with tf.variable_scope(None, default_name="linear_weights"):
            w = _model_variable("weights", [offset, num_outputs], zeros, trainable,
                                weight_collections)
            pred = _lookup(w, all_ids, "sum")
        bias = _model_variable("bias_weight", [num_outputs], zeros, trainable,
                               _weight_collections(weight_collections))
        return tf.nn.bias_add(pred, bias), [w], bias


# ---- parsing --------------------------------------------------------------------------------

def create_feature_spec_for_parsing(feature_columns):
    """The tf.parse_example `features` dict the columns read: FixedLenFeature for
    real-valued columns, VarLenFeature for sparse ones (and weights)."""
    if isinstance(feature_columns, dict):
        feature_columns = feature_columns.values()
    spec = {}
    for c in feature_columns:
        if not isinstance(c, _ALL):
            raise InvalidTypeError(f"feature_columns should only contain instances of "
                                   f"_FeatureColumn. Given column is {c!r}")
        spec.update(c.config)
    return spec


def parse_feature_columns_from_examples(serialized, feature_columns, name=None,
                                        example_names=None):
    """tf.parse_example of serialized tf.train.Examples with the columns' spec, then every
    column transformed: a dict of feature names and columns to their values."""
    cols = _sorted_columns(feature_columns)
    c2t = _tf().parse_example(serialized, create_feature_spec_for_parsing(cols), name=name,
                              example_names=example_names)
    for c in cols:
        _transform(c2t, c)
    return c2t


def make_place_holder_tensors_for_base_features(feature_columns):
    """Placeholders for the columns' raw features: sparse_placeholder for VarLenFeatures,
    [None, dimension] placeholders for the others."""
    tf = _tf()
    out = {}
    for key, spec in create_feature_spec_for_parsing(feature_columns).items():
        if isinstance(spec, tf.VarLenFeature):
            out[key] = tf.sparse_placeholder(spec.dtype, name=f"Placeholder_{key}")
        else:
            out[key] = tf.placeholder(spec.dtype, shape=(None, spec.shape[0]),
                                      name=f"Placeholder_{key}")
    return out


def infer_real_valued_columns(features):
    """real_valued_columns for a dict of dense numeric tensors (or one tensor, name '')."""
    tf = _tf()
    items = features.items() if isinstance(features, dict) else [("", features)]
    out = []
    for name, t in items:
        if _is_sparse(t):
            raise InvalidArgumentError(f"SparseTensor is not supported for auto detection. "
                                       f"Please define corresponding FeatureColumn for tensor "
                                       f"{name}.")
        t = tf.convert_to_tensor(t)
        if not (t.dtype.is_integer or t.dtype.is_floating):
            raise InvalidArgumentError(f"Non integer or non floating types are not supported "
                                       f"for auto detection. Please define corresponding "
                                       f"FeatureColumn for tensor {name}.")
        dims = t.shape.as_list() if t.shape.ndims is not None else [None]
        out.append(real_valued_column(name, dimension=int(np.prod(dims[1:])),
                                      dtype=t.dtype))
    return out


__all__ = ["SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY", "bucketized_column",
           "check_feature_columns", "create_feature_spec_for_parsing", "crossed_column",
           "embedding_column", "infer_real_valued_columns", "input_from_feature_columns",
           "joint_weighted_sum_from_feature_columns", "make_place_holder_tensors_for_base_features",
           "one_hot_column", "parse_feature_columns_from_examples", "real_valued_column",
           "shared_embedding_columns", "sparse_column_with_hash_bucket",
           "sparse_column_with_integerized_feature", "sparse_column_with_keys",
           "sparse_column_with_vocabulary_file", "transform_features",
           "weighted_sparse_column", "weighted_sum_from_feature_columns"]
