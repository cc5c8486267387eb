"""tf.contrib.losses.metric_learning: the embedding losses of TF 1.15's metric_learning.py,
as it computes them (graph ops only: they compile under XLA and are differentiable). None
of them adds to tf.GraphKeys.LOSSES.

  pairwise_distance(f, squared)     D[i, j] = |f_i - f_j| (or its square), computed as
                                    |f_i|^2 + |f_j|^2 - 2 f_i.f_j clamped at 0; the diagonal 0
  contrastive_loss                  mean(y d^2 + (1 - y) max(margin - d, 0)^2), d = |a - p|
  triplet_semihard_loss             for each anchor a and positive p (same label, p != a):
                                    max(margin + D2[a, p] - D2[a, n], 0), n the semi-hard
                                    negative (the closest one farther than p; without one
                                    the farthest negative), D2 squared distances; the mean
                                    over the (a, p) pairs
  lifted_struct_loss                over the positive pairs (i, j), i != j:
                                    J = log(sum_{k neg of i} exp(margin - D[i, k]) +
                                    sum_{k neg of j} exp(margin - D[j, k])) + D[i, j]
                                    (computed shifted by the larger of the two rows' maxima);
                                    sum(max(J, 0)^2) / (2 * number of ordered pairs)
  npairs_loss                       softmax cross-entropy of the similarities a_i.p_j against
                                    the rows of same-label indicators (each row normalized)
                                    + reg_lambda / 4 (mean |a|^2 + mean |p|^2)
  npairs_loss_multilabel            the same, the indicators being the numbers of labels two
                                    examples share (from one SparseTensor of labels each)
  masked_maximum / masked_minimum   the max / min of each row over the masked entries

cluster_loss (the structured facility-location loss: a greedy loss-augmented facility
search, PAM refinement and scikit-learn's NMI / AMI scores) is not provided: calling it
raises UnimplementedError.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, UnimplementedError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import (expand_dims, ones_like, reshape, stack, transpose,
                                           zeros_like)
from xlapy.compat.v1.ops.diag_ops import diag, matrix_diag_part
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.logging_ops import Print
from xlapy.compat.v1.ops.math_ops import (add, cast, equal, exp, greater, log, logical_and,
                                          logical_not, less_equal, matmul, maximum, minimum,
                                          multiply, realdiv, reduce_any, reduce_max,
                                          reduce_mean, reduce_min, reduce_sum, sqrt, square,
                                          squared_difference, subtract)
from xlapy.compat.v1.ops.nn_ops import softmax_cross_entropy_with_logits
from xlapy.compat.v1.ops.sparse_ops import sparse_tensor_to_dense

__all__ = ["contrastive_loss", "lifted_struct_loss", "masked_maximum", "masked_minimum",
           "npairs_loss", "npairs_loss_multilabel", "pairwise_distance",
           "triplet_semihard_loss"]


def _float_matrix(x, what):
    x = tensor(x)
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"{what} must be floating point, got {x.dtype.name}")
    if x.shape.ndims not in (None, 2):
        raise InvalidArgumentError(f"{what} must be 2-D [batch_size, dim], got shape "
                                   f"{x.shape.tf_str()}")
    return x


def _label_column(labels):
    """[batch_size] labels as a [batch_size, 1] column."""
    labels = tensor(labels)
    if labels.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"labels must be a vector [batch_size], got shape "
                                   f"{labels.shape.tf_str()}")
    return reshape(labels, [-1, 1])


def _off_diagonal(like: Tensor) -> Tensor:
    """Ones off the diagonal of the square matrix `like`, zeros on it."""
    ones = ones_like(like)
    return subtract(ones, diag(matrix_diag_part(ones)))


def pairwise_distance(feature, squared=False):
    """[batch, batch] distances between the rows of feature [batch, dim] (squared ones with
    squared=True); exact zeros on the diagonal and where the squared distance rounds to
    <= 0."""
    f = _float_matrix(feature, "feature")
    with get_default_graph().name_scope("pairwise_distance"):
        sq = reduce_sum(square(f), axis=1, keepdims=True)
        d2 = subtract(add(sq, transpose(sq)), multiply(2.0, matmul(f, f, transpose_b=True)))
        d2 = maximum(d2, 0.0)
        is_zero = less_equal(d2, 0.0)
        zero_f = cast(is_zero, f.dtype)
        d = d2 if squared else sqrt(add(d2, multiply(zero_f, 1e-16)))
        d = multiply(d, cast(logical_not(is_zero), f.dtype))
        return multiply(d, _off_diagonal(d))


def masked_maximum(data, mask, dim=1):
    """The maximum of data over the entries where mask is 1, along dim (kept)."""
    data = tensor(data)
    mask = cast(tensor(mask), data.dtype)
    lo = reduce_min(data, dim, keepdims=True)
    return add(reduce_max(multiply(subtract(data, lo), mask), dim, keepdims=True), lo)


def masked_minimum(data, mask, dim=1):
    """The minimum of data over the entries where mask is 1, along dim (kept)."""
    data = tensor(data)
    mask = cast(tensor(mask), data.dtype)
    hi = reduce_max(data, dim, keepdims=True)
    return add(reduce_min(multiply(subtract(data, hi), mask), dim, keepdims=True), hi)


def contrastive_loss(labels, embeddings_anchor, embeddings_positive, margin=1.0):
    """mean(y d^2 + (1 - y) max(margin - d, 0)^2) over the pairs, d = |anchor - positive|,
    y = labels (1: similar, 0: dissimilar)."""
    a = _float_matrix(embeddings_anchor, "embeddings_anchor")
    p = _float_matrix(embeddings_positive, "embeddings_positive")
    with get_default_graph().name_scope("contrastive_loss"):
        d = sqrt(reduce_sum(squared_difference(a, p), 1))
        y = cast(tensor(labels), a.dtype)
        pos = multiply(y, square(d))
        neg = multiply(subtract(1.0, y), square(maximum(subtract(margin, d), 0.0)))
        return reduce_mean(add(pos, neg), name="contrastive_loss")


def triplet_semihard_loss(labels, embeddings, margin=1.0):
    """The triplet loss with semi-hard negatives (see the module doc) of labels [batch] and
    l2-normalized embeddings [batch, dim]."""
    emb = _float_matrix(embeddings, "embeddings")
    with get_default_graph().name_scope("triplet_semihard_loss"):
        col = _label_column(labels)
        d2 = pairwise_distance(emb, squared=True)  # [anchor, other]
        same = equal(col, transpose(col))
        negative = logical_not(same)
        # farther[a, p, n]: n is a negative of a farther from a than p is
        d_an = expand_dims(d2, 1)  # [a, 1, n]
        farther = logical_and(expand_dims(negative, 1), greater(d_an, expand_dims(d2, 2)))
        has_farther = reduce_any(farther, 2)  # [a, p]
        # the closest such negative (masked_minimum over n, for each (a, p))
        row_max = reduce_max(d2, 1, keepdims=True)[:, :, None]  # [a, 1, 1]
        outside = add(reduce_min(multiply(subtract(d_an, row_max), cast(farther, emb.dtype)),
                                 2), row_max[:, :, 0])
        # else the farthest negative
        inside = masked_maximum(d2, cast(negative, emb.dtype))  # [a, 1]
        semi_hard = where(has_farther, outside, add(zeros_like(outside), inside))
        loss_mat = add(subtract(d2, semi_hard), margin)
        positives = multiply(cast(same, emb.dtype), _off_diagonal(d2))
        total = reduce_sum(maximum(multiply(loss_mat, positives), 0.0))
        return realdiv(total, reduce_sum(positives), name="triplet_semihard_loss")


def lifted_struct_loss(labels, embeddings, margin=1.0):
    """The lifted structured loss (see the module doc) of labels [batch] and embeddings
    [batch, dim] (not normalized)."""
    emb = _float_matrix(embeddings, "embeddings")
    with get_default_graph().name_scope("lifted_struct_loss"):
        col = _label_column(labels)
        d = pairwise_distance(emb)
        same = equal(col, transpose(col))
        neg = cast(logical_not(same), emb.dtype)
        diff = subtract(margin, d)
        # each row's largest margin - D over its negatives (masked_maximum of diff)
        row_max = masked_maximum(diff, neg)  # [i, 1]
        m = maximum(row_max, transpose(row_max))  # [i, j]
        # e[i, j] = sum_k neg[i, k] exp(diff[i, k] - m[i, j])
        e = reduce_sum(multiply(exp(subtract(expand_dims(diff, 1), expand_dims(m, 2))),
                                expand_dims(neg, 1)), 2)
        loss_mat = add(add(m, log(add(e, transpose(e)))), d)
        positives = multiply(cast(same, emb.dtype), _off_diagonal(d))
        n_pairs = realdiv(reduce_sum(positives), 2.0)
        total = multiply(0.25, reduce_sum(square(maximum(multiply(loss_mat, positives), 0.0))))
        return realdiv(total, n_pairs, name="liftedstruct_loss")


def _npairs(targets, a, p, reg_lambda, print_losses):
    reg = add(reduce_mean(reduce_sum(square(a), 1)), reduce_mean(reduce_sum(square(p), 1)))
    l2loss = multiply(0.25 * reg_lambda, reg, name="l2loss")
    sims = matmul(a, p, transpose_b=True)
    targets = realdiv(targets, reduce_sum(targets, 1, keepdims=True))
    xent = reduce_mean(softmax_cross_entropy_with_logits(labels=targets, logits=sims),
                       name="xentropy")
    if print_losses:
        xent = Print(xent, ["cross entropy:", xent, "l2loss:", l2loss])
    return add(l2loss, xent)


def npairs_loss(labels, embeddings_anchor, embeddings_positive, reg_lambda=0.002,
                print_losses=False):
    """The N-pairs loss of labels [batch], anchors and positives [batch, dim] (see the
    module doc)."""
    a = _float_matrix(embeddings_anchor, "embeddings_anchor")
    p = _float_matrix(embeddings_positive, "embeddings_positive")
    with get_default_graph().name_scope("npairs_loss"):
        col = _label_column(labels)
        return _npairs(cast(equal(col, transpose(col)), a.dtype), a, p, reg_lambda,
                       print_losses)


def npairs_loss_multilabel(sparse_labels, embeddings_anchor, embeddings_positive,
                           reg_lambda=0.002, print_losses=False):
    """The N-pairs loss with several labels per example: sparse_labels is a list (one per
    example) of SparseTensors of 0/1 label indicators, all of one dense shape."""
    if not isinstance(sparse_labels, (list, tuple)) or not all(
            getattr(s, "_is_sparse_tensor", False) for s in sparse_labels):
        raise InvalidTypeError(f"sparse_labels must be a list of SparseTensors, but got "
                               f"{sparse_labels!r}")
    a = _float_matrix(embeddings_anchor, "embeddings_anchor")
    p = _float_matrix(embeddings_positive, "embeddings_positive")
    with get_default_graph().name_scope("NpairsLossMultiLabel"):
        dense = [cast(sparse_tensor_to_dense(s), a.dtype) for s in sparse_labels]
        # shared[i, j]: the sum of min(l_i, l_j) (TF's sparse_minimum then sparse_reduce_sum)
        rows = [stack([reduce_sum(minimum(li, lj)) for lj in dense]) for li in dense]
        return _npairs(stack(rows), a, p, reg_lambda, print_losses)


def __getattr__(name):
    if name == "cluster_loss":
        raise UnimplementedError("tf.contrib.losses.metric_learning.cluster_loss: the "
                                 "facility-location clustering loss (greedy loss-augmented "
                                 "search, PAM refinement, scikit-learn NMI / AMI scores) is "
                                 "not part of xlapy")
    raise AttributeError(f"module 'tf.contrib.losses.metric_learning' has no attribute "
                         f"{name!r}")

