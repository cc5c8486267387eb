"""tf.contrib.seq2seq beam search (TF 1.15's beam_search_decoder.py): BeamSearchDecoder,
its state and outputs, gather_tree, tile_batch.

Each step scores every (beam, word) continuation by its total log-probability (finished
beams may only continue with end_token, at no cost), divided by the length penalty
((5 + length) / 6) ** length_penalty_weight, keeps the beam_width best of every batch
entry (top_k over beam_width * vocab), and gathers the cell states of their parent beams.
At the start only beam 0 is live (the others have log-probability -inf). finalize follows
the parent pointers back from the last step (gather_tree) to give the predicted ids.
Everything is ordinary graph ops (top_k, gathers, one While backwards in time for
gather_tree), so decoding compiles with XLA.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import nest
from xlapy.compat.v1.contrib.seq2seq.decoder import Decoder
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _tile_one(t, multiplier):
    tf = _tf()
    t = tf.convert_to_tensor(t, name="t")
    if t.shape.ndims is None:
        raise InvalidArgumentError("t must have statically known rank")
    if t.shape.ndims == 0:
        raise InvalidArgumentError("tile_batch needs tensors of rank >= 1 (a batch axis)")
    tiling = [1, multiplier] + [1] * (t.shape.ndims - 1)
    tiled = tf.tile(tf.expand_dims(t, 1), tiling)
    rest = tf.shape(t)[1:]
    out = tf.reshape(tiled, tf.concat([[-1], rest], 0))
    b = t.shape.dims[0]
    out.set_shape([None if b is None else b * multiplier] + t.shape.as_list()[1:])
    return out


def tile_batch(t, multiplier, name=None):
    """t (a nested structure of [batch, ...] tensors) as [batch * multiplier, ...]: entry b
    repeated multiplier times at rows b * multiplier ... (b + 1) * multiplier - 1."""
    tf = _tf()
    with tf.name_scope(name or "tile_batch"):
        return nest.map_structure(lambda x: _tile_one(x, int(multiplier)), t)


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ["predicted_ids", "beam_search_decoder_output"])):
    """predicted_ids [batch, time, beam_width] (time-major: [time, batch, beam_width]),
    best beam first; beam_search_decoder_output the per-step scores, ids and parents."""

    __slots__ = ()


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full beams [max_time, batch, beam] from the per-step ids and parent beams,
    followed back from each entry's last step (max_sequence_lengths); end_token past it,
    and after a beam's first end_token (as TF's GatherTree)."""
    from xlapy.compat.v1.ops.control_flow_ops import build_while
    tf = _tf()
    with tf.name_scope(name or "GatherTree"):
        step_ids = tf.convert_to_tensor(step_ids, name="step_ids")
        parent_ids = tf.convert_to_tensor(parent_ids, name="parent_ids")
        lens = tf.cast(tf.convert_to_tensor(max_sequence_lengths), tf.int32)
        end = tf.cast(tf.convert_to_tensor(end_token), step_ids.dtype)
        dims = step_ids.shape.dims or [None] * 3
        steps = dims[0] if dims[0] is not None else tf.shape(step_ids)[0]
        batch = dims[1] if dims[1] is not None else tf.shape(step_ids)[1]
        beam = dims[2] if dims[2] is not None else tf.shape(step_ids)[2]
        rows = tf.tile(tf.expand_dims(tf.range(batch), 1), tf.stack([1, beam]))
        start = tf.tile(tf.expand_dims(tf.range(beam), 0), tf.stack([batch, 1]))
        rev = [tf.reverse(step_ids, [0]), tf.reverse(tf.cast(parent_ids, tf.int32), [0])]

        def body(i, carry, xs):
            parent = carry[0]
            t = steps - 1 - i
            live = tf.tile(tf.expand_dims(t < lens, 1), tf.stack([1, beam]))
            idx = tf.stack([rows, parent], -1)
            ids = tf.where(live, tf.gather_nd(xs[0], idx), tf.fill(tf.shape(parent), end))
            nxt = tf.where(live, tf.gather_nd(xs[1], idx), parent)
            return [nxt], [ids]

        _, _, (beams,) = build_while([start], rev, steps, body, name="gather_tree")
        beams = tf.reverse(beams, [0])
        ended = tf.cumsum(tf.cast(tf.equal(beams, end), tf.int32), axis=0, exclusive=True)
        out = tf.where(ended > 0, tf.fill(tf.shape(beams), end), beams)
        out.set_shape(step_ids.shape)
        return out


def _length_penalty(lengths, weight):
    tf = _tf()
    if isinstance(weight, (int, float)) and weight == 0:
        return 1.0
    return ((5.0 + tf.cast(lengths, tf.float32)) / 6.0) ** weight


class BeamSearchDecoder(Decoder):
    """Beam search over cell (its initial_state tiled beam_width times: tile_batch), an
    embedding (a matrix or a function of ids) and an output_layer."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        from xlapy.compat.v1.contrib.seq2seq.helper import _embedding_fn
        tf = _tf()
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise InvalidTypeError(f"cell must be an RNNCell, received: {type(cell)}")
        if coverage_penalty_weight:
            raise InvalidArgumentError("BeamSearchDecoder: xlapy has no coverage penalty "
                                       "(coverage_penalty_weight must be 0)")
        self._cell, self._output_layer = cell, output_layer
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32,
                                                  name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise InvalidArgumentError("start_tokens must be a vector")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise InvalidArgumentError("end_token must be a scalar")
        self._beam_width = int(beam_width)
        self._length_penalty_weight = length_penalty_weight
        b = self._start_tokens.shape.dims[0]
        self._batch_size = b if b is not None else tf.shape(self._start_tokens)[0]
        self._initial_cell_state = nest.map_structure(self._split, initial_state)
        self._start_tokens = tf.tile(tf.expand_dims(self._start_tokens, 1),
                                     [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        k, bw = self._batch_size, self._beam_width
        zeros = tf.zeros(tf.stack([k]) if not isinstance(k, int) else [k], tf.int32)
        self._finished = tf.one_hot(zeros, bw, on_value=False, off_value=True, dtype=tf.bool)

    batch_size = property(lambda self: self._batch_size)

    @property
    def tracks_own_finished(self):
        return True

    @property
    def output_size(self):
        tf = _tf()
        return BeamSearchDecoderOutput(scores=tf.TensorShape([self._beam_width]),
                                       predicted_ids=tf.TensorShape([self._beam_width]),
                                       parent_ids=tf.TensorShape([self._beam_width]))

    def _split(self, t):
        """[batch * beam, ...] -> [batch, beam, ...]."""
        tf = _tf()
        if isinstance(t, tf.TensorArray):
            return t
        t = tf.convert_to_tensor(t)
        if t.shape.ndims is None:
            raise InvalidArgumentError(f"BeamSearchDecoder: the state {t.name} has an unknown "
                                       "rank")
        if t.shape.ndims == 0:   # (AttentionWrapperState.time)
            return t
        out = tf.reshape(t, tf.concat([tf.stack([self._batch_size, self._beam_width]),
                                       tf.shape(t)[1:]], 0))
        b = self._batch_size if isinstance(self._batch_size, int) else None
        if b is not None and t.shape.dims[0] is not None and t.shape.dims[0] != \
                b * self._beam_width:
            raise InvalidArgumentError(
                f"BeamSearchDecoder: the initial state has {t.shape.dims[0]} rows, expected "
                f"batch_size * beam_width = {b * self._beam_width}: tile it with "
                "tf.contrib.seq2seq.tile_batch")
        out.set_shape([b, self._beam_width] + t.shape.as_list()[1:])
        return out

    def _merge(self, t):
        """[batch, beam, ...] -> [batch * beam, ...]."""
        tf = _tf()
        if isinstance(t, tf.TensorArray) or t.shape.ndims == 0:
            return t
        out = tf.reshape(t, tf.concat([[-1], tf.shape(t)[2:]], 0))
        b = self._batch_size if isinstance(self._batch_size, int) else None
        out.set_shape([None if b is None else b * self._beam_width] + t.shape.as_list()[2:])
        return out

    def initialize(self, name=None):
        tf = _tf()
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        k = self._batch_size
        zeros = tf.zeros(tf.stack([k]) if not isinstance(k, int) else [k], tf.int32)
        log_probs = tf.one_hot(zeros, self._beam_width,
                               on_value=tf.constant(0.0, dtype),
                               off_value=tf.constant(-np.inf, dtype), dtype=dtype)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs,
            finished=self._finished, lengths=tf.zeros(tf.shape(self._finished), tf.int64),
            accumulated_attention_probs=())
        return self._finished, self._start_inputs, state

    def _gather_beams(self, t, parents):
        """t [batch, beam, ...] with every beam replaced by its parent's row."""
        tf = _tf()
        if isinstance(t, tf.TensorArray) or t.shape.ndims is None or t.shape.ndims < 2:
            return t
        rows = tf.tile(tf.expand_dims(tf.range(self._batch_size), 1), [1, self._beam_width])
        out = tf.gather_nd(t, tf.stack([rows, parents], -1))
        out.set_shape(t.shape)
        return out

    def step(self, time, inputs, state, name=None):
        tf = _tf()
        with tf.name_scope(name or "BeamSearchDecoderStep"):
            cell_state = nest.map_structure(self._merge, state.cell_state)
            cell_out, next_cell_state = self._cell(self._merge(inputs), cell_state)
            cell_out = self._split(cell_out)
            next_cell_state = nest.map_structure(self._split, next_cell_state)
            if self._output_layer is not None:
                cell_out = self._output_layer(cell_out)
            output, next_state = self._beam_step(cell_out, next_cell_state, state)
            finished = next_state.finished
            sample_ids = output.predicted_ids
            emb = self._embedding_fn(sample_ids)
            all_done = tf.fill(tf.shape(emb), tf.reduce_all(finished))
            next_inputs = tf.where(all_done, self._start_inputs, emb)
        return output, next_state, next_inputs, finished

    def _beam_step(self, logits, next_cell_state, beam_state):
        tf = _tf()
        bw, end = self._beam_width, self._end_token
        vocab = logits.shape.dims[-1]
        if vocab is None:
            raise InvalidArgumentError("BeamSearchDecoder needs the vocabulary size (the "
                                       "last dimension of the logits) known")
        prev_finished = beam_state.finished
        step_lp = tf.nn.log_softmax(logits)
        # finished beams continue only with end_token, at no cost
        finished_row = tf.one_hot(end, vocab, on_value=tf.constant(0.0, step_lp.dtype),
                                  off_value=tf.constant(step_lp.dtype.min, step_lp.dtype),
                                  dtype=step_lp.dtype)
        mask = tf.tile(tf.expand_dims(prev_finished, 2), [1, 1, vocab])
        step_lp = tf.where(mask, tf.zeros_like(step_lp) + finished_row, step_lp)
        total = tf.expand_dims(beam_state.log_probs, 2) + step_lp
        to_add = tf.one_hot(tf.fill(tf.shape(prev_finished), end), vocab,
                            on_value=np.int64(0), off_value=np.int64(1), dtype=tf.int64)
        to_add *= tf.expand_dims(tf.cast(tf.logical_not(prev_finished), tf.int64), 2)
        new_lengths = to_add + tf.expand_dims(beam_state.lengths, 2)
        scores = total / _length_penalty(new_lengths, self._length_penalty_weight)
        flat = tf.reshape(scores, tf.stack([self._batch_size, -1]))
        next_scores, word_indices = tf.nn.top_k(flat, k=bw)
        next_probs = tf.gather_nd(tf.reshape(total, tf.stack([self._batch_size, -1])),
                                  tf.stack([self._rows(), word_indices], -1))
        word_ids = tf.cast(tf.mod(word_indices, vocab), tf.int32)
        parents = tf.cast(word_indices // vocab, tf.int32)
        prev_finished = self._gather_beams(prev_finished, parents)
        next_finished = tf.logical_or(prev_finished, tf.equal(word_ids, end))
        lengths = self._gather_beams(beam_state.lengths, parents) + \
            tf.cast(tf.logical_not(prev_finished), tf.int64)
        cell_state = nest.map_structure(lambda s: self._gather_beams(s, parents),
                                        next_cell_state)
        state = BeamSearchDecoderState(cell_state=cell_state, log_probs=next_probs,
                                       lengths=lengths, finished=next_finished,
                                       accumulated_attention_probs=())
        return BeamSearchDecoderOutput(next_scores, word_ids, parents), state

    def _rows(self):
        tf = _tf()
        return tf.tile(tf.expand_dims(tf.range(self._batch_size), 1), [1, self._beam_width])

    def finalize(self, outputs, final_state, sequence_lengths):
        tf = _tf()
        max_lengths = tf.cast(tf.reduce_max(final_state.lengths, axis=1), tf.int32)
        ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_lengths,
                          self._end_token)
        return FinalBeamSearchDecoderOutput(predicted_ids=ids,
                                            beam_search_decoder_output=outputs), final_state
