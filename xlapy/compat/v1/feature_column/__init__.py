"""tf.feature_column (TF 1.x): columns describing how the features of an input_fn become
the dense input of a model, as TF's premade estimators and the "Feature Columns" guide use
them:

    age = tf.feature_column.numeric_column("age")
    age_buckets = tf.feature_column.bucketized_column(age, boundaries=[18, 25, 30, 40])
    edu = tf.feature_column.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "Masters", "Doctorate"], num_oov_buckets=1)
    net = tf.feature_column.input_layer(features, [age, age_buckets,
                                                   tf.feature_column.indicator_column(edu),
                                                   tf.feature_column.embedding_column(edu, 8)])

Features are dicts of dense tensors, as numpy_input_fn and tf.data give them (SparseTensor
inputs are not supported). A categorical input is an int or string tensor of shape [batch],
[batch, 1] or [batch, k] (k values per example, combined by the column's combiner); as in
TF's dense-to-sparse conversion, '' (strings) and -1 (ints) are missing values and count for
nothing.

Outputs are TF's: numeric columns give the value (after normalizer_fn) flattened to
[batch, prod(shape)]; bucketized columns one-hot of the bucket (number of boundaries <= x)
per element; indicator columns the count of each id (multi-hot); embedding columns the
combination ('mean', 'sum' or 'sqrtn') of the looked-up rows, zeros for an example without
ids. input_layer concatenates its columns sorted by name; linear_model sums, over its columns
sorted by name, weights[id] for categorical columns (combined by sparse_combiner) and
x @ weights for dense ones, plus a bias. Variables are named as TF's:
input_layer/<column>_embedding/embedding_weights, linear_model/<column>/weights,
linear_model/bias_weights.

Hash buckets (categorical_column_with_hash_bucket, and out-of-vocabulary buckets) use
FarmHash Fingerprint64 as TF's do, and crossed_column TF's sparse_cross_hashed
(FingerprintCat64 chained from hash_key), so ids match TF's (ops/lookup_ops.py). As in TF, a
crossed column crosses all values of a raw feature key ('' included) and the ids of a
categorical column key (missing ones dropped). Vocabulary lookups, hashing and crossing run
in the executor; the rest compiles under XLA like any graph. Weighted and sequence
columns, and SparseTensor features, are not provided.
"""

from __future__ import annotations

import math as _math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_identity",
           "categorical_column_with_vocabulary_list", "categorical_column_with_vocabulary_file",
           "categorical_column_with_hash_bucket", "crossed_column", "indicator_column",
           "embedding_column", "input_layer", "linear_model"]

_COMBINERS = ("mean", "sum", "sqrtn")


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _feature(features, key):
    if not isinstance(features, dict):
        raise InvalidTypeError(f"features should be a dictionary of `Tensor`s, got "
                               f"{type(features).__name__}")
    if key not in features:
        raise InvalidArgumentError(f"The feature {key!r} is not in features dictionary "
                                   f"(keys: {sorted(features)})")
    return _tf().convert_to_tensor(features[key])


def _flat_width(t, what):
    """The number of values per example of a [batch, ...] tensor (static)."""
    dims = t.shape.dims
    if dims is None:
        raise InvalidArgumentError(f"{what}: the feature's rank must be known")
    if len(dims) <= 1:
        return 1
    rest = dims[1:]
    if any(d is None for d in rest):
        raise InvalidArgumentError(f"{what}: the feature's shape {t.shape} must be known "
                                   "beyond the batch dimension")
    return int(np.prod(rest))


class _FeatureColumn:
    name: str

    @property
    def _var_scope_name(self):
        return self.name

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


class _DenseColumn(_FeatureColumn):
    """A column with a dense [batch, variable_shape] output."""

    def _dense(self, features, weight_collections, trainable):  # -> [batch, width]
        raise NotImplementedError


class _CategoricalColumn(_FeatureColumn):
    """A column of ids in [0, num_buckets); -1 means no id."""

    num_buckets: int

    def _ids(self, features):  # -> int64 [batch, k]
        raise NotImplementedError


# ---- numeric / bucketized --------------------------------------------------------------------

class _NumericColumn(_DenseColumn):
    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key, self.shape, self.default_value = key, shape, default_value
        self.dtype, self.normalizer_fn = dtype, normalizer_fn
        self.name = key

    @property
    def _width(self):
        return int(np.prod(self.shape))

    def _dense(self, features, weight_collections=None, trainable=True):
        tf = _tf()
        x = _feature(features, self.key)
        if x.dtype == dtypes.string or x.dtype == dtypes.bool:
            raise InvalidTypeError(f"numeric_column {self.key!r}: the feature must be "
                                   f"numeric, got {x.dtype.name}")
        x = tf.cast(x, dtypes.float32)
        if self.normalizer_fn is not None:
            x = self.normalizer_fn(x)
        w = _flat_width(x, f"numeric_column {self.key!r}")
        if w != self._width:
            raise InvalidArgumentError(f"numeric_column {self.key!r}: the feature has {w} "
                                       f"values per example, the column's shape "
                                       f"{self.shape} says {self._width}")
        return tf.reshape(x, [-1, self._width])


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,
                   normalizer_fn=None):
    """A real-valued feature of `shape` values per example (default_value only matters
    for parsed tf.Example input, which xlapy does not read)."""
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError(f"key must be a non-empty string, got {key!r}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d)
                                                                             for d in shape)
    if any(d < 1 for d in shape):
        raise InvalidArgumentError(f"shape dimensions must be greater than 0, got {shape}")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise InvalidTypeError(f"dtype must be convertible to float, got {dtype.name}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise InvalidTypeError(f"normalizer_fn must be a callable, got {normalizer_fn!r}")
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


class _BucketizedColumn(_DenseColumn, _CategoricalColumn):
    def __init__(self, source_column, boundaries):
        self.source_column, self.boundaries = source_column, boundaries
        self.name = f"{source_column.name}_bucketized"
        self.num_buckets = (len(boundaries) + 1) * source_column._width

    def _buckets(self, features):  # int64 [batch, source width]
        tf = _tf()
        x = self.source_column._dense(features)
        b = tf.constant(np.asarray(self.boundaries, np.float32))
        return tf.reduce_sum(tf.cast(tf.greater_equal(tf.expand_dims(x, -1), b),
                                     dtypes.int64), -1)

    def _dense(self, features, weight_collections=None, trainable=True):
        tf = _tf()
        n = len(self.boundaries) + 1
        oh = tf.one_hot(self._buckets(features), n, dtype=dtypes.float32)
        return tf.reshape(oh, [-1, self.num_buckets])

    def _ids(self, features):
        tf = _tf()
        n = len(self.boundaries) + 1
        w = self.source_column._width
        offsets = tf.constant(np.arange(w, dtype=np.int64)[None, :] * n)
        return tf.add(self._buckets(features), offsets)


def bucketized_column(source_column, boundaries):
    """Buckets of a numeric column: bucket i holds boundaries[i-1] <= x < boundaries[i]."""
    if not isinstance(source_column, _NumericColumn):
        raise InvalidTypeError(f"source_column must be a column generated with "
                               f"numeric_column(), got {source_column!r}")
    if not isinstance(boundaries, (list, tuple)) or not boundaries:
        raise InvalidArgumentError(f"boundaries must be a non-empty sorted list, got "
                                   f"{boundaries!r}")
    boundaries = tuple(float(b) for b in boundaries)
    if any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise InvalidArgumentError(f"boundaries must be a sorted list, got {boundaries}")
    return _BucketizedColumn(source_column, boundaries)


# ---- categorical -----------------------------------------------------------------------------

def _as_ids(t, what):
    """[batch] or [batch, ...] ids -> [batch, k]."""
    return _tf().reshape(t, [-1, _flat_width(t, what)])


class _IdentityCategoricalColumn(_CategoricalColumn):
    def __init__(self, key, num_buckets, default_value):
        self.key, self.num_buckets, self.default_value = key, num_buckets, default_value
        self.name = key

    def _ids(self, features):
        tf = _tf()
        x = _feature(features, self.key)
        if not x.dtype.is_integer:
            raise InvalidTypeError(f"categorical_column_with_identity {self.key!r}: the "
                                   f"feature must be integer, got {x.dtype.name}")
        ids = _as_ids(tf.cast(x, dtypes.int64), f"categorical column {self.key!r}")
        missing = tf.equal(ids, tf.constant(np.int64(-1)))
        n = tf.constant(np.int64(self.num_buckets))
        out_of_range = tf.logical_or(tf.less(ids, tf.zeros_like(ids)),
                                     tf.greater_equal(ids, tf.ones_like(ids) * n))
        out_of_range = tf.logical_and(out_of_range, tf.logical_not(missing))
        if self.default_value is None:
            check = tf.debugging.assert_equal(
                tf.reduce_any(out_of_range), tf.constant(False),
                message=f"categorical_column_with_identity {self.key!r}: ids must be in "
                        f"[0, {self.num_buckets})")
            with tf.control_dependencies([check]):
                return tf.identity(ids)
        return tf.where(out_of_range, tf.ones_like(ids) * np.int64(self.default_value), ids)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer ids used as they are, in [0, num_buckets); others become default_value (or
    fail at run time when it is None)."""
    if int(num_buckets) < 1:
        raise InvalidArgumentError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= int(default_value) < int(num_buckets):
        raise InvalidArgumentError(f"default_value {default_value} not in range "
                                   f"[0, {num_buckets}), column_name {key}")
    return _IdentityCategoricalColumn(key, int(num_buckets), default_value)


class _VocabularyColumn(_CategoricalColumn):
    def __init__(self, key, vocabulary, dtype, default_value, num_oov_buckets):
        self.key, self.vocabulary, self.dtype = key, tuple(vocabulary), dtype
        self.default_value, self.num_oov_buckets = default_value, num_oov_buckets
        self.num_buckets = len(self.vocabulary) + num_oov_buckets
        self.name = key

    def _ids(self, features):
        from xlapy.compat.v1.ops.lookup_ops import vocabulary_lookup
        x = _feature(features, self.key)
        if (x.dtype == dtypes.string) != (self.dtype == dtypes.string):
            raise InvalidTypeError(f"Column dtype and SparseTensors dtype must be compatible. "
                                   f"key: {self.key}, column dtype: {self.dtype.name}, "
                                   f"tensor dtype: {x.dtype.name}")
        ids = vocabulary_lookup(x, self.vocabulary, default_value=self.default_value,
                                num_oov_buckets=self.num_oov_buckets)
        return _as_ids(ids, f"categorical column {self.key!r}")


def _vocab_dtype(vocabulary, dtype):
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    if all(isinstance(v, (str, bytes)) for v in vocabulary):
        return dtypes.string
    if all(isinstance(v, (int, np.integer)) for v in vocabulary):
        return dtypes.int64
    raise InvalidTypeError(f"vocabulary_list must be all strings or all integers, got "
                           f"{list(vocabulary)!r}")


def _check_vocab_args(key, vocabulary, default_value, num_oov_buckets):
    if not vocabulary:
        raise InvalidArgumentError(f"vocabulary_list {vocabulary!r} must be non-empty, "
                                   f"column_name: {key}")
    if len(set(vocabulary)) != len(vocabulary):
        raise InvalidArgumentError(f"Duplicate keys in vocabulary_list {list(vocabulary)}, "
                                   f"column_name: {key}")
    if num_oov_buckets < 0:
        raise InvalidArgumentError(f"Invalid num_oov_buckets {num_oov_buckets}")
    if num_oov_buckets and default_value != -1:
        raise InvalidArgumentError(f"Can't specify both num_oov_buckets and default_value "
                                   f"in {key}.")


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                            default_value=-1, num_oov_buckets=0):
    """The index of each value in vocabulary_list; others go to one of num_oov_buckets
    hash buckets after the vocabulary, else to default_value (-1: no id)."""
    vocabulary_list = list(vocabulary_list)
    default_value = -1 if default_value is None else int(default_value)
    _check_vocab_args(key, vocabulary_list, default_value, int(num_oov_buckets))
    dt = _vocab_dtype(vocabulary_list, dtype)
    return _VocabularyColumn(key, vocabulary_list, dt, default_value, int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """As categorical_column_with_vocabulary_list, with the vocabulary read from a text file
    of one token per line (the first vocabulary_size lines when given)."""
    if not vocabulary_file:
        raise InvalidArgumentError(f"Missing vocabulary_file in {key}.")
    with open(vocabulary_file, encoding="utf-8") as f:
        tokens = [line.rstrip("\r\n") for line in f]
    if vocabulary_size is not None:
        if int(vocabulary_size) < 1 or int(vocabulary_size) > len(tokens):
            raise InvalidArgumentError(f"Invalid vocabulary_size {vocabulary_size} in {key} "
                                       f"(the file has {len(tokens)} lines)")
        tokens = tokens[:int(vocabulary_size)]
    dt = dtypes.as_dtype(dtype)
    vocab = tokens if dt == dtypes.string else [int(t) for t in tokens]
    default_value = -1 if default_value is None else int(default_value)
    _check_vocab_args(key, vocab, default_value, int(num_oov_buckets))
    col = _VocabularyColumn(key, vocab, dt, default_value, int(num_oov_buckets))
    col.vocabulary_file = vocabulary_file
    return col


class _HashedCategoricalColumn(_CategoricalColumn):
    def __init__(self, key, hash_bucket_size, dtype):
        self.key, self.num_buckets, self.dtype = key, hash_bucket_size, dtype
        self.hash_bucket_size = hash_bucket_size
        self.name = key

    def _ids(self, features):
        from xlapy.compat.v1.ops.lookup_ops import string_to_hash_bucket_fast
        x = _feature(features, self.key)
        if (x.dtype == dtypes.string) != (self.dtype == dtypes.string):
            raise InvalidTypeError(f"Column dtype and SparseTensors dtype must be compatible. "
                                   f"key: {self.key}, column dtype: {self.dtype.name}, "
                                   f"tensor dtype: {x.dtype.name}")
        return _as_ids(string_to_hash_bucket_fast(x, self.num_buckets),
                       f"categorical column {self.key!r}")


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Fingerprint64(value) % hash_bucket_size (ints hashed by their decimal text), the
    same buckets as TF's."""
    if hash_bucket_size is None or int(hash_bucket_size) < 1:
        raise InvalidArgumentError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                                   f"{hash_bucket_size}, key: {key}")
    dt = dtypes.as_dtype(dtype)
    if not (dt == dtypes.string or dt.is_integer):
        raise InvalidTypeError(f"dtype must be string or integer. dtype: {dt.name}, "
                               f"column_name: {key}")
    return _HashedCategoricalColumn(key, int(hash_bucket_size), dt)


class _CrossedColumn(_CategoricalColumn):
    def __init__(self, keys, hash_bucket_size, hash_key):
        self.keys, self.hash_bucket_size, self.hash_key = keys, hash_bucket_size, hash_key
        self.num_buckets = hash_bucket_size
        self.name = "_X_".join(sorted(k if isinstance(k, str) else k.name
                                      for k in self._leaves()))

    def _leaves(self):
        out = []
        for k in self.keys:
            out.extend(k._leaves() if isinstance(k, _CrossedColumn) else [k])
        return out

    def _ids(self, features):
        from xlapy.compat.v1.ops.lookup_ops import cross_hashed
        tf = _tf()
        parts, drop = [], []
        for k in self._leaves():
            if isinstance(k, str):   # the raw feature, all of its values (as TF's)
                x = _feature(features, k)
                if x.dtype != dtypes.string:
                    if not x.dtype.is_integer:
                        raise InvalidTypeError(f"crossed_column: feature {k!r} must be string "
                                               f"or integer, got {x.dtype.name}")
                    x = tf.cast(x, dtypes.int64)
                parts.append(_as_ids(x, f"crossed_column key {k!r}"))
                drop.append(False)
            else:
                parts.append(k._ids(features))
                drop.append(True)
        return cross_hashed(parts, self.hash_bucket_size, self.hash_key, drop)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Crosses of features: for each example every combination of one value per key
    (feature names: the raw feature's values; categorical columns: their ids), hashed
    as TF's sparse_cross_hashed (FingerprintCat64 chained from hash_key, default TF's
    0xDECAFCAFFE), % hash_bucket_size: the same ids as TF's."""
    keys = list(keys)
    if len(keys) < 2:
        raise InvalidArgumentError(f"keys must be a list with length > 1. Given: {keys}")
    if hash_bucket_size is None or int(hash_bucket_size) < 1:
        raise InvalidArgumentError(f"hash_bucket_size must be > 1. hash_bucket_size: "
                                   f"{hash_bucket_size}")
    for k in keys:
        if isinstance(k, _HashedCategoricalColumn):
            raise InvalidArgumentError(
                "categorical_column_with_hash_bucket is not supported for crossing. Hashing "
                "before crossing will increase probability of collision. Instead, use the "
                f"feature name as a string. Given: {k!r}")
        if not isinstance(k, (str, _CategoricalColumn)):
            raise InvalidTypeError(f"Unsupported key type. All keys must be either string, or "
                                   f"categorical column except _HashedCategoricalColumn. "
                                   f"Given: {k!r}")
    return _CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


# ---- indicator / embedding -------------------------------------------------------------------

def _valid(ids):
    tf = _tf()
    return tf.greater_equal(ids, tf.zeros_like(ids))


def _combine(rows, ids, combiner):
    """rows [batch, k, d] of ids [batch, k] (-1: none) combined over k."""
    tf = _tf()
    w = tf.expand_dims(tf.cast(_valid(ids), rows.dtype), -1)
    total = tf.reduce_sum(tf.multiply(rows, w), 1)
    if combiner == "sum":
        return total
    count = tf.reduce_sum(w, 1)
    if combiner == "sqrtn":
        count = tf.sqrt(count)
    return tf.div_no_nan(total, count)


def _lookup(table, ids, combiner):
    tf = _tf()
    safe = tf.maximum(ids, tf.zeros_like(ids))
    return _combine(tf.gather(table, safe), ids, combiner)


class _IndicatorColumn(_DenseColumn):
    def __init__(self, categorical_column):
        self.categorical_column = categorical_column
        self.name = f"{categorical_column.name}_indicator"

    def _dense(self, features, weight_collections=None, trainable=True):
        tf = _tf()
        ids = self.categorical_column._ids(features)
        oh = tf.one_hot(ids, self.categorical_column.num_buckets, dtype=dtypes.float32)
        return tf.reduce_sum(oh, 1)   # ids of -1 give rows of zeros


def indicator_column(categorical_column):
    """The multi-hot [batch, num_buckets] count of each id of a categorical column."""
    if not isinstance(categorical_column, _CategoricalColumn):
        raise InvalidTypeError(f"Unsupported input type. Input must be a CategoricalColumn. "
                               f"Given: {categorical_column!r}")
    return _IndicatorColumn(categorical_column)


class _EmbeddingColumn(_DenseColumn):
    def __init__(self, categorical_column, dimension, combiner, initializer, max_norm,
                 trainable):
        self.categorical_column, self.dimension = categorical_column, dimension
        self.combiner, self.initializer = combiner, initializer
        self.max_norm, self.trainable = max_norm, trainable
        self.name = f"{categorical_column.name}_embedding"

    def _dense(self, features, weight_collections=None, trainable=True):
        tf = _tf()
        ids = self.categorical_column._ids(features)
        table = tf.get_variable(
            "embedding_weights", [self.categorical_column.num_buckets, self.dimension],
            dtype=dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and trainable,
            collections=_collections(weight_collections))
        if self.max_norm is not None:
            table = tf.clip_by_norm(table, self.max_norm, axes=[1])
        return _lookup(table, ids, self.combiner)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A dense [batch, dimension] embedding of a categorical column: the rows of its ids
    in a trainable table, combined with 'mean', 'sum' or 'sqrtn'. The table starts as
    truncated_normal(stddev=1/sqrt(dimension)) unless initializer is given."""
    if dimension is None or int(dimension) < 1:
        raise InvalidArgumentError(f"Invalid dimension {dimension}.")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise InvalidArgumentError("embedding_column: ckpt_to_load_from / tensor_name_in_ckpt "
                                   "are not supported by xlapy")
    if combiner not in _COMBINERS:
        raise InvalidArgumentError(f"combiner must be one of {_COMBINERS}, got {combiner!r}")
    if initializer is not None and not callable(initializer):
        raise InvalidArgumentError("initializer must be callable if specified. Embedding of "
                                   f"column_name: {categorical_column.name}")
    if not isinstance(categorical_column, _CategoricalColumn):
        raise InvalidTypeError(f"embedding_column needs a categorical column, got "
                               f"{categorical_column!r}")
    if initializer is None:
        initializer = _tf().truncated_normal_initializer(mean=0.0,
                                                         stddev=1 / _math.sqrt(dimension))
    return _EmbeddingColumn(categorical_column, int(dimension), combiner, initializer,
                           max_norm, trainable)


# ---- input_layer / linear_model --------------------------------------------------------------

def _collections(weight_collections):
    from xlapy.compat.v1.framework import GraphKeys
    out = [GraphKeys.GLOBAL_VARIABLES]
    for c in weight_collections or ():
        if c not in out:
            out.append(c)
    return out


def _columns(feature_columns, what):
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    cols = list(feature_columns or ())
    if not cols:
        raise InvalidArgumentError("feature_columns must not be empty.")
    for c in cols:
        if not isinstance(c, _FeatureColumn):
            raise InvalidTypeError(f"Items of feature_columns must be a _FeatureColumn. "
                                   f"Given (type {type(c).__name__}): {c!r}.")
    names = [c.name for c in cols]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidArgumentError(f"Duplicate feature column name found for columns: {dup}")
    return sorted(cols, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """The dense [batch, sum of widths] input of a model: each dense column's output,
    concatenated in the order of the columns' names."""
    tf = _tf()
    cols = _columns(feature_columns, "input_layer")
    for c in cols:
        if not isinstance(c, _DenseColumn):
            raise InvalidArgumentError(
                f"Items of feature_columns must be a _DenseColumn. You can wrap a categorical "
                f"column with an embedding_column or indicator_column. Given: {c!r}")
    outs = []
    with tf.variable_scope(None, default_name="input_layer"):
        for c in cols:
            with tf.variable_scope(None, default_name=c._var_scope_name):
                before = set(tf.global_variables())
                t = c._dense(features, weight_collections, trainable)
                if cols_to_vars is not None:
                    cols_to_vars[c] = [v for v in tf.global_variables() if v not in before]
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[c] = t
                outs.append(t)
        return tf.concat(outs, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """sum over columns of weights[ids] (categorical, combined by sparse_combiner) or
    x @ weights (dense), plus bias_weights: [batch, units]. Weights start at zero."""
    tf = _tf()
    if sparse_combiner not in _COMBINERS:
        raise InvalidArgumentError(f"sparse_combiner must be one of {_COMBINERS}, got "
                                   f"{sparse_combiner!r}")
    cols = _columns(feature_columns, "linear_model")
    colls = _collections(weight_collections)
    zeros = tf.zeros_initializer()
    parts = []
    with tf.variable_scope(None, default_name="linear_model"):
        for c in cols:
            with tf.variable_scope(None, default_name=c._var_scope_name):
                if isinstance(c, _CategoricalColumn):
                    ids = c._ids(features)
                    w = tf.get_variable("weights", [c.num_buckets, units], dtypes.float32,
                                        initializer=zeros, trainable=trainable,
                                        collections=colls)
                    parts.append(_lookup(w, ids, sparse_combiner))
                else:
                    x = c._dense(features, weight_collections, trainable)
                    width = x.shape.dims[1]
                    w = tf.get_variable("weights", [width, units], dtypes.float32,
                                        initializer=zeros, trainable=trainable,
                                        collections=colls)
                    parts.append(tf.matmul(x, w))
                if cols_to_vars is not None:
                    cols_to_vars[c] = [w]
        bias = tf.get_variable("bias_weights", [units], dtypes.float32, initializer=zeros,
                               trainable=trainable, collections=colls)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return tf.nn.bias_add(tf.add_n(parts) if len(parts) > 1 else parts[0], bias,
                              name="weighted_sum")

