"""The losses of tf.losses and their weighting and reduction, as TF 1.x's losses_impl.py.

compute_weighted_loss multiplies the per-element losses by `weights` (broadcast to them)
and reduces with `reduction`: NONE keeps them; SUM sums; MEAN divides the sum by the sum
of the broadcast weights; SUM_OVER_BATCH_SIZE by the number of elements; the default
SUM_BY_NONZERO_WEIGHTS by the number of elements with a nonzero weight. Empty
denominators give 0. The result goes to `loss_collection` (tf.GraphKeys.LOSSES), which
get_total_loss sums with the regularization losses.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import ones_like, size, zeros_like
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (abs, add, add_n, cast, equal, greater, log,
                                          maximum, minimum, multiply, negative, reduce_sum,
                                          square, subtract)
from xlapy.compat.v1.ops.nn_ops import (relu, sigmoid_cross_entropy_with_logits,
                                        softmax_cross_entropy_with_logits,
                                        sparse_softmax_cross_entropy_with_logits)
from xlapy.compat.v1.ops.special_math_ops import div_no_nan


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise InvalidArgumentError(f"Invalid Reduction Key {key}.")


def _f32(x):
    return cast(tensor(x), dtypes.float32)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    Reduction.validate(reduction)
    losses = tensor(losses)
    in_dtype = losses.dtype
    with get_default_graph().name_scope(scope or "weighted_loss"):
        losses = _f32(losses)
        w = _f32(weights)
        weighted = multiply(losses, w)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = div_no_nan(loss, reduce_sum(multiply(ones_like(losses), w)), name="value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                present = where(equal(w, 0.0), zeros_like(w), ones_like(w))
                n = reduce_sum(multiply(present, ones_like(losses)))
                loss = div_no_nan(loss, n, name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = div_no_nan(loss, cast(size(losses), dtypes.float32), name="value")
        loss = cast(loss, in_dtype)
        add_loss(loss, loss_collection)
        return loss


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return tensor(np.float32(0.0))


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    losses = list(get_losses(scope))
    if add_regularization_losses:
        losses += get_regularization_losses(scope)
    if not losses:
        raise InvalidArgumentError("get_total_loss: no losses in the LOSSES (or "
                                   "REGULARIZATION_LOSSES) collection")
    return add_n(losses, name=name)


def _pair(labels, predictions, what):
    p = _f32(predictions)
    lab = _f32(labels)
    if p.shape.is_fully_defined() and lab.shape.is_fully_defined() and \
            not p.shape.is_compatible_with(lab.shape):
        raise InvalidArgumentError(f"{what}: labels shape {lab.shape.tf_str()} and "
                                   f"predictions shape {p.shape.tf_str()} differ")
    return lab, p


def _loss(default_name, fn):
    def loss(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, **kw):
        if labels is None or predictions is None:
            raise InvalidArgumentError(f"{default_name}: labels and predictions must not be "
                                       "None")
        with get_default_graph().name_scope(scope or default_name) as s:
            lab, p = _pair(labels, predictions, default_name)
            return compute_weighted_loss(fn(lab, p, **kw), weights, s, loss_collection,
                                         reduction)
    loss.__name__ = default_name
    return loss


def _absolute(lab, p):
    return abs(subtract(p, lab))


def _squared(lab, p):
    return square(subtract(p, lab))


def _huber(lab, p, delta=1.0):
    err = abs(subtract(p, lab))
    quad = minimum(err, tensor(np.float32(delta)))
    lin = subtract(err, quad)
    return add(multiply(tensor(np.float32(0.5)), multiply(quad, quad)),
               multiply(tensor(np.float32(delta)), lin))


def _log(lab, p, epsilon=1e-7):
    eps = tensor(np.float32(epsilon))
    one = tensor(np.float32(1.0))
    return subtract(negative(multiply(lab, log(add(p, eps)))),
                    multiply(subtract(one, lab), log(add(subtract(one, p), eps))))


absolute_difference = _loss("absolute_difference", _absolute)
mean_squared_error = _loss("mean_squared_error", _squared)
_huber_loss = _loss("huber_loss", _huber)
_log_loss = _loss("log_loss", _log)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta); e = predictions - labels."""
    return _huber_loss(labels, predictions, weights, scope, loss_collection, reduction,
                       delta=delta)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-labels log(p + eps) - (1 - labels) log(1 - p + eps)."""
    return _log_loss(labels, predictions, weights, scope, loss_collection, reduction,
                     epsilon=epsilon)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - y * logits) with y = 2 * labels - 1 (labels in {0, 1})."""
    with get_default_graph().name_scope(scope or "hinge_loss") as s:
        lab, lg = _pair(labels, logits, "hinge_loss")
        one = ones_like(lab)
        signed = subtract(multiply(tensor(np.float32(2.0)), lab), one)
        return compute_weighted_loss(relu(subtract(one, multiply(signed, lg))), weights, s,
                                     loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) of unit-normalized inputs."""
    axis = dim if axis is None else axis
    if axis is None:
        raise InvalidArgumentError("You must specify 'axis'.")
    with get_default_graph().name_scope(scope or "cosine_distance_loss") as s:
        lab, p = _pair(labels, predictions, "cosine_distance")
        losses = subtract(tensor(np.float32(1.0)),
                          reduce_sum(multiply(p, lab), [axis], keepdims=True))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "sigmoid_cross_entropy_loss") as s:
        lg = tensor(logits)
        lab = cast(tensor(multi_class_labels), lg.dtype)
        if label_smoothing > 0:
            lab = add(multiply(lab, 1.0 - label_smoothing), 0.5 * label_smoothing)
        xent = sigmoid_cross_entropy_with_logits(labels=lab, logits=lg, name="xentropy")
        return compute_weighted_loss(xent, weights, s, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "softmax_cross_entropy_loss") as s:
        lg = tensor(logits)
        lab = cast(tensor(onehot_labels), lg.dtype)
        if label_smoothing > 0:
            k = lab.shape.dims[-1] if lab.shape.dims else None
            if k is None:
                raise InvalidArgumentError("softmax_cross_entropy: label_smoothing needs the "
                                           "number of classes to be known")
            lab = add(multiply(lab, 1.0 - label_smoothing), label_smoothing / k)
        xent = softmax_cross_entropy_with_logits(labels=lab, logits=lg)
        return compute_weighted_loss(xent, weights, s, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with get_default_graph().name_scope(scope or "sparse_softmax_cross_entropy_loss") as s:
        xent = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(xent, weights, s, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """For each batch row, the mean over pairs of its elements of
    ((p_i - l_i) - (p_j - l_j))^2, i.e. 2 sum(d^2) / (n - 1) - 2 (sum d)^2 / (n (n - 1))
    with d = predictions - labels and n the row's number of elements with a nonzero weight;
    the rows' values times `weights` (a scalar or [batch_size, 1, ...]) are summed. No
    reduction argument: the result is that sum (0 when no weight is nonzero)."""
    with get_default_graph().name_scope(scope or "mean_pairwise_squared_error"):
        lab, p = _pair(labels, predictions, "mean_pairwise_squared_error")
        w = _f32(weights)
        rank = p.shape.ndims
        if rank is None:
            raise InvalidArgumentError("mean_pairwise_squared_error: the rank of predictions "
                                       "must be known")
        if w.shape.ndims not in (None, 0):
            if w.shape.ndims != rank or any(
                    a is not None and b is not None and a not in (1, b)
                    for a, b in zip(w.shape.dims, p.shape.dims)):
                raise InvalidArgumentError(
                    f"mean_pairwise_squared_error: weights shape {w.shape.as_list()} can not "
                    f"be broadcast to values shape {p.shape.as_list()}")
        diffs = subtract(p, lab)
        axes = list(range(1, rank))
        present = multiply(where(equal(w, 0.0), zeros_like(w), ones_like(w)), ones_like(diffs))

        def per_row(x):
            return reduce_sum(x, axes, keepdims=True) if axes else x
        n = per_row(present)
        one, two = tensor(np.float32(1.0)), tensor(np.float32(2.0))
        zero = tensor(np.float32(0.0))
        term1 = multiply(two, div_no_nan(per_row(square(diffs)), maximum(subtract(n, one), zero)))
        term2 = multiply(two, div_no_nan(square(per_row(diffs)),
                                         maximum(multiply(n, subtract(n, one)), zero)))
        loss = reduce_sum(multiply(subtract(term1, term2), w))
        loss = where(greater(reduce_sum(n), zero), loss, zeros_like(loss), name="value")
        add_loss(loss, loss_collection)
        return loss
