"""tf.losses: the weighted, reduced losses of TF 1.x (mean over examples by default)."""

from __future__ import annotations

from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.math_ops import multiply, reduce_mean, reduce_sum, square, subtract
from xlapy.compat.v1.ops.nn_ops import (softmax_cross_entropy_with_logits,
                                        sparse_softmax_cross_entropy_with_logits)


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    MEAN = "weighted_mean"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"


def _reduce(losses, weights, reduction, scope):
    if weights != 1.0:
        losses = multiply(losses, tensor(weights, dtype=losses.dtype))
    if reduction == Reduction.NONE:
        out = losses
    elif reduction == Reduction.SUM:
        out = reduce_sum(losses)
    else:
        out = reduce_mean(losses)
    get_default_graph().add_to_collection(GraphKeys.LOSSES, out)
    return out


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "sparse_softmax_cross_entropy_loss"):
        xent = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return _reduce(xent, weights, reduction, scope)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "softmax_cross_entropy_loss"):
        xent = softmax_cross_entropy_with_logits(labels=onehot_labels, logits=logits)
        return _reduce(xent, weights, reduction, scope)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "mean_squared_error"):
        p = tensor(predictions)
        return _reduce(square(subtract(p, tensor(labels, dtype=p.dtype))), weights, reduction,
                       scope)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_default_graph().get_collection(loss_collection, scope)
