"""tf.contrib.legacy_seq2seq: the loss functions of the TF 1.0-era sequence models (the PTB
language model, char-rnn): sequence_loss_by_example and sequence_loss over lists of
per-timestep logits [batch, classes], int targets [batch] and weights [batch]."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """[batch]: the weighted cross-entropies summed over the timesteps (divided by the sum
    of the weights + 1e-12 when average_across_timesteps)."""
    from xlapy.compat.v1.ops.math_ops import add_n, multiply
    from xlapy.compat.v1.ops.nn_ops import sparse_softmax_cross_entropy_with_logits
    logits, targets, weights = list(logits), list(targets), list(weights)
    if not (len(logits) == len(targets) == len(weights)):
        raise InvalidArgumentError(f"Lengths of logits, weights, and targets must be the "
                                   f"same {len(logits)}, {len(weights)}, {len(targets)}.")
    with get_default_graph().name_scope(name or "sequence_loss_by_example"):
        terms = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                from xlapy.compat.v1.ops.array_ops import reshape
                loss = sparse_softmax_cross_entropy_with_logits(
                    labels=reshape(tensor(target), [-1]), logits=tensor(logit))
            else:
                loss = softmax_loss_function(labels=target, logits=logit)
            terms.append(multiply(loss, tensor(weight)))
        total = add_n(terms)
        if average_across_timesteps:
            size = add_n([tensor(w) for w in weights]) + 1e-12
            total = total / size
        return total


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """sequence_loss_by_example summed over the batch (divided by the batch size when
    average_across_batch)."""
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.math_ops import cast, reduce_sum
    with get_default_graph().name_scope(name or "sequence_loss"):
        cost = reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            return cost / cast(shape(tensor(targets[0]))[0], cost.dtype)
        return cost


_MODELS = ("basic_rnn_seq2seq", "tied_rnn_seq2seq", "embedding_rnn_seq2seq",
           "embedding_tied_rnn_seq2seq", "embedding_attention_seq2seq", "attention_decoder",
           "embedding_attention_decoder", "rnn_decoder", "embedding_rnn_decoder",
           "model_with_buckets", "one2many_rnn_seq2seq")


def __getattr__(name):
    if name in _MODELS:
        raise UnimplementedError(f"tf.contrib.legacy_seq2seq.{name}: the legacy seq2seq "
                                 "models are not part of xlapy (the losses are)")
    raise AttributeError(f"module 'tf.contrib.legacy_seq2seq' has no attribute {name!r}")
