"""tf.keras.metrics (TF 1.15's functions): per-example metrics that compile(metrics=[...])
averages over each batch. By name or function; History reports them under Keras 1.x
names: 'acc' for 'accuracy', the function's name otherwise ('mae' ->
'mean_absolute_error')."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.keras.losses import (binary_crossentropy, categorical_crossentropy,
                                          cosine_proximity, hinge, kullback_leibler_divergence,
                                          logcosh, mean_absolute_error,
                                          mean_absolute_percentage_error, mean_squared_error,
                                          mean_squared_logarithmic_error, poisson,
                                          sparse_categorical_crossentropy, squared_hinge)


def _floatx(t):
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.math_ops import cast
    return cast(t, dtypes.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    from xlapy.compat.v1.ops.math_ops import cast, equal, greater, reduce_mean
    pred = cast(greater(y_pred, np.float32(threshold)), y_pred.dtype)
    return reduce_mean(_floatx(equal(cast(y_true, y_pred.dtype), pred)), axis=-1)


def categorical_accuracy(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import argmax, equal
    return _floatx(equal(argmax(y_true, -1), argmax(y_pred, -1)))


def sparse_categorical_accuracy(y_true, y_pred):
    from xlapy.compat.v1.ops.array_ops import squeeze
    from xlapy.compat.v1.ops.math_ops import argmax, cast, equal
    if y_true.shape.ndims is not None and y_pred.shape.ndims is not None and \
            y_true.shape.ndims == y_pred.shape.ndims:
        y_true = squeeze(y_true, [-1])
    pred = argmax(y_pred, -1)
    if pred.dtype != y_true.dtype:
        pred = cast(pred, y_true.dtype)
    return _floatx(equal(y_true, pred))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.gather_ops import in_top_k
    from xlapy.compat.v1.ops.math_ops import argmax, cast
    return _floatx(in_top_k(y_pred, cast(argmax(y_true, -1), dtypes.int32), k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.gather_ops import in_top_k
    from xlapy.compat.v1.ops.math_ops import cast
    return _floatx(in_top_k(y_pred, cast(reshape(y_true, [-1]), dtypes.int32), k))


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
cosine = cosine_proximity
kld = KLD = kullback_leibler_divergence

_BY_NAME = {f.__name__: f for f in (
    binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, mean_squared_error,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error,
    binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy,
    hinge, squared_hinge, logcosh, poisson, kullback_leibler_divergence, cosine_proximity)}
_BY_NAME.update(mse=mse, MSE=mse, mae=mae, MAE=mae, mape=mape, MAPE=mape, msle=msle,
                MSLE=msle, cosine=cosine, kld=kld, KLD=kld)


def get(identifier):
    if callable(identifier):
        return identifier
    if isinstance(identifier, str):
        from xlapy.compat.v1.keras.utils import get_custom_objects
        f = get_custom_objects().get(identifier) or _BY_NAME.get(identifier)
        if f is not None:
            return f
    raise InvalidArgumentError(f"Unknown metric function: {identifier!r} (known: "
                               f"'accuracy', 'acc', {', '.join(sorted(_BY_NAME))})")


def serialize(metric):
    return getattr(metric, "__name__", metric)


def deserialize(name, custom_objects=None):
    return (custom_objects or {}).get(name) or get(name)
