"""The contrib feature columns' transformations and parsing (feature_columns_old.py has
the columns): transform_features, input_from_feature_columns, the (joint) weighted sums of
the linear part, feature specs for tf.parse_example and the placeholders of base features."""

from __future__ import annotations


import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.contrib.layers.feature_columns_old import (
    _ALL,
    _maybe_restore,
    _model_variable,
    _transform,
    _BucketizedColumn,
    _CrossedColumn,
    _FeatureColumn,
    _RealValuedColumn,
    _SparseColumn,
    _WeightedSparseColumn,
    bucketized_column,
    crossed_column,
    embedding_column,
    one_hot_column,
    real_valued_column,
    shared_embedding_columns,
    sparse_column_with_hash_bucket,
    sparse_column_with_integerized_feature,
    sparse_column_with_keys,
    sparse_column_with_vocabulary_file,
    weighted_sparse_column)
from xlapy.compat.v1.contrib.layers.feature_columns_old_ops import (
    SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY,
    _SparseIds,
    _is_sparse,
    _lookup,
    _tf,
    _to_2d,
    _valid)


# ---- transformation -------------------------------------------------------------------------

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
