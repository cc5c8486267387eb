"""tf.contrib.metrics (slim.metrics): the streaming metrics of TF 1.x's metric_ops.py,
tf.metrics with the streaming argument order (predictions, labels), and
aggregate_metrics / aggregate_metric_map to run many metrics' update ops together.

    names_to_values, names_to_updates = slim.metrics.aggregate_metric_map({
        "accuracy": slim.metrics.streaming_accuracy(predictions, labels),
        "mse": slim.metrics.streaming_mean_squared_error(scores, targets)})

Each metric returns (value, update_op) and keeps its state in local variables, as tf.metrics'.
"""

from __future__ import annotations

from xlapy.compat.v1 import metrics as _m

__all__ = ["aggregate_metric_map", "aggregate_metrics", "streaming_accuracy",
           "streaming_auc", "streaming_mean", "streaming_mean_absolute_error",
           "streaming_mean_squared_error", "streaming_precision", "streaming_recall"]


def streaming_mean(values, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    return _m.mean(values, weights, metrics_collections, updates_collections, name)


def streaming_accuracy(predictions, labels, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    return _m.accuracy(labels, predictions, weights, metrics_collections,
                       updates_collections, name)


def streaming_precision(predictions, labels, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    return _m.precision(labels, predictions, weights, metrics_collections,
                        updates_collections, name)


def streaming_recall(predictions, labels, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    return _m.recall(labels, predictions, weights, metrics_collections,
                     updates_collections, name)


def streaming_auc(predictions, labels, weights=None, num_thresholds=200,
                  metrics_collections=None, updates_collections=None, curve="ROC",
                  name=None, summation_method="trapezoidal"):
    return _m.auc(labels, predictions, weights, num_thresholds, metrics_collections,
                  updates_collections, curve, name, summation_method)


def streaming_mean_squared_error(predictions, labels, weights=None,
                                 metrics_collections=None, updates_collections=None,
                                 name=None):
    return _m.mean_squared_error(labels, predictions, weights, metrics_collections,
                                 updates_collections, name)


def streaming_mean_absolute_error(predictions, labels, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """The weighted mean of |predictions - labels| (state in mean_absolute_error/total and
    /count)."""
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops._common import tensor
    from xlapy.compat.v1.ops.math_ops import abs, cast, subtract
    predictions = cast(tensor(predictions), dtypes.float32)
    labels = cast(tensor(labels), dtypes.float32)
    return _m.mean(abs(subtract(predictions, labels)), weights, metrics_collections,
                   updates_collections, name or "mean_absolute_error")


def aggregate_metrics(*value_update_tuples):
    """([values], [update_ops]) of (value, update_op) pairs."""
    if not value_update_tuples:
        from xlapy.compat.v1.errors import InvalidArgumentError
        raise InvalidArgumentError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples):
    """({name: value}, {name: update_op}) of a dict of name -> (value, update_op)."""
    names = sorted(names_to_tuples)
    values, updates = aggregate_metrics(*[names_to_tuples[n] for n in names])
    return dict(zip(names, values)), dict(zip(names, updates))
