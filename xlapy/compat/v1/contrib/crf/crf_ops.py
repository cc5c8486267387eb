"""The CRF functions and cells of tf.contrib.crf, as TF 1.15's crf.py computes them.

Shapes: inputs / potentials [batch, max_seq_len, num_tags] (unary scores), tag_indices
[batch, max_seq_len], sequence_lengths [batch], transition_params [num_tags, num_tags]
(transition_params[i, j]: the score of tag j following tag i). Positions at or past a
sequence's length add nothing; a sequence of length 0 scores 0 and has log norm 0.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.framework import convert_to_tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, reshape, shape, squeeze,
                                           stack, zeros_like)
from xlapy.compat.v1.ops.clip_ops import reduce_logsumexp
from xlapy.compat.v1.ops.gather_ops import gather, gather_nd
from xlapy.compat.v1.ops.index_ops import slice_, where
from xlapy.compat.v1.ops.manip_ops import range_, reverse_sequence, sequence_mask
from xlapy.compat.v1.ops.math_ops import (argmax, cast, less_equal, maximum, multiply,
                                          reduce_max, reduce_sum)
from xlapy.compat.v1.ops.rnn_cell import RNNCell
from xlapy.compat.v1.ops.rnn_ops import dynamic_rnn


def _num_tags(x):
    dims = x.shape.dims
    return None if not dims else dims[-1]


def _single_step(inputs) -> bool:
    """TF's smart_cond on max_seq_len == 1, taken statically (the general path gives the
    same values when the length is only known at run time)."""
    dims = inputs.shape.dims
    return bool(dims) and len(dims) > 1 and dims[1] == 1


def _mask_empty(values, sequence_lengths):
    return where(less_equal(sequence_lengths, 0), zeros_like(values), values)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of each tag sequence: unary plus binary scores, [batch]."""
    inputs, tag_indices = convert_to_tensor(inputs), convert_to_tensor(tag_indices)
    sequence_lengths = convert_to_tensor(sequence_lengths)
    transition_params = convert_to_tensor(transition_params)
    if _single_step(inputs):
        batch = shape(inputs, out_type=tag_indices.dtype)[0]
        rows = reshape(range_(batch, dtype=tag_indices.dtype), [-1, 1])
        scores = gather_nd(squeeze(inputs, [1]), concat([rows, tag_indices], axis=1))
        return _mask_empty(scores, sequence_lengths)
    return crf_unary_score(tag_indices, sequence_lengths, inputs) + \
        crf_binary_score(tag_indices, sequence_lengths, transition_params)


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """The log-sum-exp of the scores of every tag sequence allowed by tag_bitmap
    ([batch, max_seq_len, num_tags] booleans)."""
    from xlapy.compat.v1.ops.array_ops import fill
    inputs = convert_to_tensor(inputs)
    bitmap = cast(convert_to_tensor(tag_bitmap), dtypes.bool)
    sequence_lengths = cast(convert_to_tensor(sequence_lengths), dtypes.int32)
    filtered = where(bitmap, inputs, fill(shape(inputs),
                                          np.asarray(-np.inf, inputs.dtype.np)))
    if _single_step(inputs):
        return reduce_logsumexp(squeeze(filtered, [1]), axis=[1])
    return crf_log_norm(filtered, sequence_lengths, transition_params)


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """log Z: the log-sum-exp of the scores of all tag sequences (forward algorithm)."""
    inputs = convert_to_tensor(inputs)
    sequence_lengths = convert_to_tensor(sequence_lengths)
    transition_params = convert_to_tensor(transition_params)
    first = squeeze(slice_(inputs, [0, 0, 0], [-1, 1, -1]), [1])
    if _single_step(inputs):
        return _mask_empty(reduce_logsumexp(first, [1]), sequence_lengths)
    rest = slice_(inputs, [0, 1, 0], [-1, -1, -1])
    less_one = maximum(convert_to_tensor(0, dtype=sequence_lengths.dtype),
                       sequence_lengths - 1)
    _, alphas = dynamic_rnn(CrfForwardRnnCell(transition_params), rest,
                            sequence_length=less_one, initial_state=first,
                            dtype=dtypes.float32)
    return _mask_empty(reduce_logsumexp(alphas, [1]), sequence_lengths)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """(log-likelihood of each tag sequence [batch], transition_params); without
    transition_params, creates the variable "transitions" [num_tags, num_tags] in the
    current variable scope."""
    from xlapy.compat.v1.variables import get_variable
    inputs = convert_to_tensor(inputs)
    if transition_params is None:
        n = _num_tags(inputs)
        transition_params = get_variable("transitions", [n, n])
    scores = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    log_norm = crf_log_norm(inputs, sequence_lengths, transition_params)
    return scores - log_norm, transition_params


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """The sum of inputs[b, t, tag_indices[b, t]] over each sequence's length."""
    tag_indices, inputs = convert_to_tensor(tag_indices), convert_to_tensor(inputs)
    sequence_lengths = convert_to_tensor(sequence_lengths)
    s = shape(inputs)
    batch, max_len, num_tags = s[0], s[1], s[2]
    flat = reshape(inputs, [-1])
    offsets = expand_dims(range_(batch) * max_len * num_tags, 1) + \
        expand_dims(range_(max_len) * num_tags, 0)
    if tag_indices.dtype == dtypes.int64:
        offsets = cast(offsets, dtypes.int64)
    unary = reshape(gather(flat, reshape(offsets + tag_indices, [-1])),
                    stack([batch, max_len]))
    masks = sequence_mask(sequence_lengths, maxlen=shape(tag_indices)[1],
                          dtype=dtypes.float32)
    return reduce_sum(multiply(unary, masks), 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """The sum of transition_params[tag[t-1], tag[t]] over each sequence's length."""
    tag_indices = convert_to_tensor(tag_indices)
    sequence_lengths = convert_to_tensor(sequence_lengths)
    transition_params = convert_to_tensor(transition_params)
    num_tags = transition_params.shape.dims[0]
    if num_tags is None:
        num_tags = shape(transition_params, out_type=tag_indices.dtype)[0]
    n = shape(tag_indices)[1] - 1
    start = slice_(tag_indices, [0, 0], stack([-1, n]))
    end = slice_(tag_indices, [0, 1], stack([-1, n]))
    binary = gather(reshape(transition_params, [-1]), start * num_tags + end)
    masks = sequence_mask(sequence_lengths, maxlen=shape(tag_indices)[1],
                          dtype=dtypes.float32)
    return reduce_sum(multiply(binary, slice_(masks, [0, 1], [-1, -1])), 1)


class _CrfCell(RNNCell):
    """A cell of fixed size without variables (TF's CRF cells override __call__)."""

    def __init__(self, num_tags):
        super().__init__()
        self._num_tags = num_tags

    @property
    def state_size(self):
        return self._num_tags

    @property
    def output_size(self):
        return self._num_tags


class CrfForwardRnnCell(_CrfCell):
    """One step of the forward algorithm: alphas' = inputs + logsumexp_i(alphas_i +
    transitions[i, :])."""

    def __init__(self, transition_params):
        transition_params = convert_to_tensor(transition_params)
        super().__init__(_num_tags(transition_params))
        self._transition_params = expand_dims(transition_params, 0)

    def __call__(self, inputs, state, scope=None):
        scores = expand_dims(convert_to_tensor(state), 2) + self._transition_params
        new_alphas = convert_to_tensor(inputs) + reduce_logsumexp(scores, [1])
        return new_alphas, new_alphas


class CrfDecodeForwardRnnCell(_CrfCell):
    """One Viterbi step: (backpointers [batch, num_tags] int32, new best scores)."""

    def __init__(self, transition_params):
        transition_params = convert_to_tensor(transition_params)
        super().__init__(_num_tags(transition_params))
        self._transition_params = expand_dims(transition_params, 0)

    def __call__(self, inputs, state, scope=None):
        scores = expand_dims(convert_to_tensor(state), 2) + self._transition_params
        new_state = convert_to_tensor(inputs) + reduce_max(scores, [1])
        backpointers = cast(argmax(scores, 1), dtypes.int32)
        return backpointers, new_state


class CrfDecodeBackwardRnnCell(_CrfCell):
    """One step of the Viterbi backtrace: the previous tag, from the backpointers."""

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return 1

    def __call__(self, inputs, state, scope=None):
        inputs = convert_to_tensor(inputs)
        tag = squeeze(convert_to_tensor(state), axis=[1])
        rows = range_(shape(inputs)[0])
        new_tags = expand_dims(gather_nd(inputs, stack([rows, tag], axis=1)), axis=-1)
        return new_tags, new_tags


def crf_decode(potentials, transition_params, sequence_length):
    """(decode_tags [batch, max_seq_len] int32, best_score [batch]): the highest scoring
    tag sequences (Viterbi), 0 past each sequence's length."""
    potentials = convert_to_tensor(potentials)
    transition_params = convert_to_tensor(transition_params)
    sequence_length = convert_to_tensor(sequence_length)
    if _single_step(potentials):
        p = squeeze(potentials, [1])
        tags = expand_dims(argmax(p, axis=1), 1)
        return cast(tags, dtypes.int32), reduce_max(p, axis=1)
    initial = squeeze(slice_(potentials, [0, 0, 0], [-1, 1, -1]), axis=[1])
    rest = slice_(potentials, [0, 1, 0], [-1, -1, -1])
    less_one = maximum(convert_to_tensor(0, dtype=sequence_length.dtype),
                       sequence_length - 1)
    backpointers, last_score = dynamic_rnn(CrfDecodeForwardRnnCell(transition_params), rest,
                                           sequence_length=less_one, initial_state=initial,
                                           dtype=dtypes.int32)
    backpointers = reverse_sequence(backpointers, less_one, seq_axis=1)
    start = expand_dims(cast(argmax(last_score, axis=1), dtypes.int32), axis=-1)
    tags, _ = dynamic_rnn(CrfDecodeBackwardRnnCell(_num_tags(potentials)), backpointers,
                          sequence_length=less_one, initial_state=start,
                          dtype=dtypes.int32)
    tags = concat([start, squeeze(tags, axis=[2])], axis=1)
    tags = reverse_sequence(tags, sequence_length, seq_axis=1)
    return tags, reduce_max(last_score, axis=1)


def viterbi_decode(score, transition_params):
    """(viterbi: the best tag sequence as a list of ints, viterbi_score) for one sequence's
    score [seq_len, num_tags] (NumPy, outside the graph, as TF's)."""
    score = np.asarray(score)
    transition_params = np.asarray(transition_params)
    trellis = np.zeros_like(score)
    backpointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        v = np.expand_dims(trellis[t - 1], 1) + transition_params
        trellis[t] = score[t] + np.max(v, 0)
        backpointers[t] = np.argmax(v, 0)
    viterbi = [np.argmax(trellis[-1])]
    for bp in reversed(backpointers[1:]):
        viterbi.append(bp[viterbi[-1]])
    viterbi.reverse()
    return viterbi, np.max(trellis[-1])
