"""tf.keras.metrics (TF 1.15): the per-example metric functions that compile(metrics=[...])
averages over each batch (by name or function; History reports them under Keras 1.x
names: 'acc' for 'accuracy', the function's name otherwise ('mae' ->
'mean_absolute_error')), and the stateful metric classes (Metric, Mean, AUC, Precision,
...) of keras/metric_classes.py and metric_confusion.py. get / deserialize take a
function's name, a class's name (an instance with the defaults, as Keras) or a
{'class_name', 'config'} dict."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.keras import utils as _utils
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
    """A metric function or object: a dict config, a name (custom objects first; a class
    name gives an instance), or a callable as it is."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise InvalidArgumentError(f"Could not interpret metric function identifier: "
                               f"{identifier!r}")


def serialize(metric):
    """A function's name, or {'class_name', 'config'} for a Metric object."""
    if isinstance(metric, Metric):
        return {"class_name": type(metric).__name__, "config": metric.get_config()}
    return getattr(metric, "__name__", metric)


def deserialize(config, custom_objects=None):
    """The metric a serialize() result names (custom_objects and the global custom objects
    first)."""
    found = {**_CLASSES, **_BY_NAME, **_utils.get_custom_objects(), **(custom_objects or {})}
    if isinstance(config, dict):
        if "class_name" not in config:
            raise InvalidArgumentError(f"Improper config format: {config!r}")
        cls = found.get(config["class_name"])
        if cls is None:
            raise InvalidArgumentError(f"Unknown metric function: {config['class_name']}")
        if not isinstance(cls, type):
            return cls
        if hasattr(cls, "from_config"):
            return cls.from_config(dict(config.get("config") or {}))
        return cls(**(config.get("config") or {}))
    if not isinstance(config, str):
        raise InvalidArgumentError(f"Could not interpret serialized metric function: "
                                   f"{config!r}")
    f = found.get(config)
    if f is None:
        raise InvalidArgumentError(f"Unknown metric function: {config!r} (known: "
                                   f"'accuracy', 'acc', {', '.join(sorted(_BY_NAME))} and "
                                   f"the metric classes)")
    return f() if isinstance(f, type) else f


# the classes (after the functions, which they wrap)
from xlapy.compat.v1.keras.metric_classes import (  # noqa: E402
    Accuracy, BinaryAccuracy, BinaryCrossentropy, CategoricalAccuracy,
    CategoricalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge, KLDivergence,
    LogCoshError, Mean, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanRelativeError, MeanSquaredError, MeanSquaredLogarithmicError, MeanTensor, Metric,
    Poisson, RootMeanSquaredError, SparseCategoricalAccuracy, SparseCategoricalCrossentropy,
    SparseTopKCategoricalAccuracy, SquaredHinge, Sum, TopKCategoricalAccuracy)
from xlapy.compat.v1.keras.metric_confusion import (  # noqa: E402
    AUC, FalseNegatives, FalsePositives, MeanIoU, Precision, Recall, SensitivityAtSpecificity,
    SpecificityAtSensitivity, TrueNegatives, TruePositives)

from xlapy.compat.v1.keras.metric_classes import MeanMetricWrapper as _MMW  # noqa: E402

_CLASS_LIST = [Metric, Mean, Sum, _MMW, MeanRelativeError, MeanTensor, Accuracy,
               BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
               TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError,
               MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
               RootMeanSquaredError, Hinge, SquaredHinge, CategoricalHinge, KLDivergence,
               LogCoshError, Poisson, CosineSimilarity, BinaryCrossentropy,
               CategoricalCrossentropy, SparseCategoricalCrossentropy, TruePositives,
               FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall, AUC,
               SensitivityAtSpecificity, SpecificityAtSensitivity, MeanIoU]

_CLASSES = {c.__name__: c for c in _CLASS_LIST if c is not Metric}
