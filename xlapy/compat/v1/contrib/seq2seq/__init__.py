"""tf.contrib.seq2seq: sequence_loss, the weighted cross-entropy of sequence models; the
decoders (decoder.py: BasicDecoder, dynamic_decode), their helpers (helper.py) and the
attention mechanisms and wrapper (attention_wrapper.py).

What xlapy does not have raises UnimplementedError naming it, rather than an
AttributeError.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.contrib.seq2seq.attention_wrapper import (AttentionMechanism,
                                                               AttentionWrapper,
                                                               AttentionWrapperState,
                                                               BahdanauAttention,
                                                               LuongAttention, hardmax)
from xlapy.compat.v1.contrib.seq2seq.beam_search import (BeamSearchDecoder,
                                                         BeamSearchDecoderOutput,
                                                         BeamSearchDecoderState,
                                                         FinalBeamSearchDecoderOutput,
                                                         gather_tree, tile_batch)
from xlapy.compat.v1.contrib.seq2seq.decoder import (BasicDecoder, BasicDecoderOutput,
                                                     Decoder, dynamic_decode)
from xlapy.compat.v1.contrib.seq2seq.helper import (CustomHelper, GreedyEmbeddingHelper, Helper,
                                                    SampleEmbeddingHelper,
                                                    ScheduledEmbeddingTrainingHelper,
                                                    TrainingHelper)


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """Cross-entropy of logits [batch, time, classes] against int targets [batch, time],
    each term weighted by weights [batch, time]; averaged (divided by the sum of the
    weights) or summed (divided by the number of nonzero weights) over time and batch as
    the flags say, as TF 1.15's."""
    from xlapy.compat.v1.ops.array_ops import reshape, shape, stack
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum
    from xlapy.compat.v1.ops.nn_ops import sparse_softmax_cross_entropy_with_logits
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    logits, targets, weights = tensor(logits), tensor(targets), tensor(weights)
    if logits.shape.ndims != 3:
        raise InvalidArgumentError("Logits must be a [batch_size x sequence_length x "
                                   "logits] tensor")
    if targets.shape.ndims != 2:
        raise InvalidArgumentError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.shape.ndims != 2:
        raise InvalidArgumentError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise InvalidArgumentError("average_across_timesteps and sum_over_timesteps cannot "
                                   "be set to True at same time.")
    if average_across_batch and sum_over_batch:
        raise InvalidArgumentError("average_across_batch and sum_over_batch cannot be set "
                                   "to True at same time.")
    with get_default_graph().name_scope(name or "sequence_loss"):
        classes = shape(logits)[2]
        flat_logits = reshape(logits, stack([-1, classes]))
        flat_targets = reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=flat_targets,
                                                                logits=flat_logits)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        crossent = multiply(crossent, reshape(weights, [-1]))
        if average_across_timesteps and average_across_batch:
            return div_no_nan(reduce_sum(crossent), reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            return div_no_nan(reduce_sum(crossent), _count(weights, None, crossent.dtype))
        crossent = reshape(crossent, shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return div_no_nan(reduce_sum(crossent, axis=axis), reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            return div_no_nan(reduce_sum(crossent, axis=axis),
                              _count(weights, axis, crossent.dtype))
        return crossent


def _count(weights, axis, dtype):
    """The nonzero weights (over axis), as the "sum" forms divide by them."""
    from xlapy.compat.v1.ops.api import count_nonzero
    from xlapy.compat.v1.ops.math_ops import cast
    return cast(count_nonzero(weights, axis=axis), dtype)


_MISSING = ("InferenceHelper",)


def __getattr__(name):
    if name in _MISSING:
        raise UnimplementedError(f"tf.contrib.seq2seq.{name} is not part of xlapy (the "
                                 "helpers, BasicDecoder, dynamic_decode and the attention "
                                 "wrappers are); write a CustomHelper")
    raise AttributeError(f"module 'tf.contrib.seq2seq' has no attribute {name!r}")
