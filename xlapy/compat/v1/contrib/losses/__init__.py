"""tf.contrib.losses: the loss API before tf.losses (TF 1.x's loss_ops.py), with its own
argument orders (predictions or logits first, then labels). Each loss is tf.losses' (the
weighted mean over the elements of non-zero weight, added to tf.GraphKeys.LOSSES), but for
hinge_loss, which returns the unreduced element-wise hinge max(0, 1 - (2 labels - 1)
logits) and adds nothing to the collection, as TF's."""

from __future__ import annotations

from xlapy.compat.v1 import losses as _tf_losses
from xlapy.compat.v1.losses import (add_loss, compute_weighted_loss, get_losses,
                                    get_regularization_losses)
from xlapy.compat.v1.contrib.losses import metric_learning

__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
           "get_losses", "get_regularization_losses", "get_total_loss", "hinge_loss",
           "log_loss", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    return _tf_losses.absolute_difference(labels, predictions, weights, scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _tf_losses.mean_squared_error(labels, predictions, weights, scope)


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    return _tf_losses.log_loss(labels, predictions, weights, epsilon, scope)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    return _tf_losses.cosine_distance(labels, predictions, axis if axis is not None else dim,
                                      weights, scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0,
                          scope=None):
    return _tf_losses.sigmoid_cross_entropy(multi_class_labels, logits, weights,
                                            label_smoothing, scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    return _tf_losses.softmax_cross_entropy(onehot_labels, logits, weights, label_smoothing,
                                            scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    return _tf_losses.sparse_softmax_cross_entropy(labels, logits, weights, scope)


def hinge_loss(logits, labels=None, scope=None):
    """relu(1 - (2 labels - 1) * logits), element-wise (not reduced, not collected)."""
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops._common import tensor
    from xlapy.compat.v1.ops.array_ops import ones_like
    from xlapy.compat.v1.ops.math_ops import cast, multiply, subtract
    from xlapy.compat.v1.ops.nn_ops import relu
    logits = tensor(logits)
    with get_default_graph().name_scope(scope or "hinge_loss"):
        labels = cast(tensor(labels), logits.dtype)
        ones = ones_like(labels)
        signs = subtract(multiply(labels, tensor(2.0, dtype=logits.dtype)), ones)
        return relu(subtract(ones, multiply(signs, logits)))


def get_total_loss(add_regularization_losses=True, name="total_loss"):
    return _tf_losses.get_total_loss(add_regularization_losses, name)
