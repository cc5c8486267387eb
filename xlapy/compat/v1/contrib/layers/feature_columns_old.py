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
import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.contrib.layers.feature_columns_old_ops import (
    _COMBINERS,
    _cross,
    _dense_values,
    _is_sparse,
    _lookup,
    _raw,
    _SparseIds,
    _as_sparse_ids,
    _tf,
    _to_2d,
)
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, NotFoundError
from xlapy.compat.v1.ops.lookup_ops import (
    string_to_hash_bucket_fast,
    vocabulary_lookup,
)

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


def _model_variable(name, shape, initializer, trainable, collections):
    from xlapy.compat.v1.contrib.framework.model_variables import model_variable  # (cycle)
    return model_variable(name, shape=shape, dtype=dtypes.float32, initializer=initializer,
                          trainable=trainable, collections=collections)


def _maybe_restore(column, variable):
    path = column._checkpoint_path()
    if path is not None:
        _tf().train.init_from_checkpoint(path[0], {path[1]: variable})


def _transform(columns_to_tensors, column):
    """column's transformed value, computed once and kept in columns_to_tensors."""
    if column in columns_to_tensors:
        value = columns_to_tensors[column]
        if isinstance(column, (_SparseColumn, _CrossedColumn, _WeightedSparseColumn)):
            value = _as_sparse_ids(value, f"column {column.name!r}")
        return value
    column.insert_transformed_feature(columns_to_tensors)
    return columns_to_tensors[column]


_ALL = (_SparseColumn, _WeightedSparseColumn, _OneHotColumn, _EmbeddingColumn,
        _RealValuedColumn, _BucketizedColumn, _CrossedColumn)
