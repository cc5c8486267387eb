"""tf.contrib.seq2seq: Decoder, BasicDecoder (BasicDecoderOutput) and dynamic_decode.

dynamic_decode is one While (control_flow_ops.build_while): the decoder's state, next
inputs, finished flags and sequence lengths are its loop carry, the step's outputs its
stacked outputs (TF writes them to TensorArrays), and it runs while some sequence is not
finished, at most maximum_iterations steps. The outputs are the rows of the steps run:
[batch, steps, ...] (time-major with output_time_major). With impute_finished, finished
sequences emit zeros and keep their state, as TF.

The stacked outputs are sized by the bound: maximum_iterations, else the decoder's own
(a TrainingHelper's number of input steps). With neither (greedy decoding with no
maximum_iterations) the cluster holding the loop falls back to the executor, as XLA needs
the size at compile time.
"""

from __future__ import annotations

import collections

from xlapy.compat.v1 import nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


def _tf():
    import xlapy.compat.v1 as tf
    return tf


class Decoder:
    """The interface dynamic_decode drives (abstract)."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    @property
    def output_dtype(self):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        return False

    def initialize(self, name=None):
        """(finished, initial inputs, initial state)."""
        raise NotImplementedError

    def step(self, time, inputs, state, name=None):
        """(outputs, next_state, next_inputs, finished)."""
        raise NotImplementedError

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    __slots__ = ()


class BasicDecoder(Decoder):
    """cell(inputs, state), then output_layer (a tf.layers.Dense), then the helper's sample
    and next inputs."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        from xlapy.compat.v1.contrib.seq2seq.helper import Helper
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise InvalidTypeError(f"cell must be an RNNCell, received: {type(cell)}")
        if not isinstance(helper, Helper):
            raise InvalidTypeError(f"helper must be a Helper, received: {type(helper)}")
        if output_layer is not None and not callable(output_layer):
            raise InvalidTypeError(f"output_layer must be a Layer, received: "
                                   f"{type(output_layer)}")
        self._cell, self._helper = cell, helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    batch_size = property(lambda self: self._helper.batch_size)

    @property
    def output_size(self):
        size = self._cell.output_size
        if self._output_layer is not None:
            size = getattr(self._output_layer, "units", size)
        return BasicDecoderOutput(rnn_output=size, sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(dtype, self._helper.sample_ids_dtype)

    @property
    def _max_iterations_hint(self):
        return getattr(self._helper, "_max_iterations_hint", None)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        tf = _tf()
        with tf.name_scope(name or "BasicDecoderStep"):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs,
                                             state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def _rows(finished, cur, new):
    """where(finished[batch], cur, new) row by row for a [batch, ...] tensor."""
    tf = _tf()
    mask = finished
    for _ in range((new.shape.ndims or 1) - 1):
        mask = tf.expand_dims(mask, -1)
    if new.shape.ndims:
        mask = tf.logical_and(mask, tf.ones_like(new, dtype=tf.bool))
    return tf.where(mask, cur, new)


def _size_arrays(state, bound):
    """The state with each TensorArray made as TF's growing arrays (size 0, dynamic_size:
    AttentionWrapper's alignment_history) sized to the loop's bound."""
    from xlapy.compat.v1.ops.tensor_array_ops import TensorArray
    tf = _tf()

    def size(v):
        if not (isinstance(v, TensorArray) and v.dynamic_size and v._buffer is None and
                isinstance(v._spec.size, int) and v._spec.size == 0):
            return v
        if bound is None:
            raise InvalidArgumentError(
                "dynamic_decode: the decoder state holds a TensorArray written at every "
                "step (alignment_history); xlapy's arrays have a fixed size: give "
                "maximum_iterations")
        es = v.element_shape
        if not es.is_fully_defined():
            raise InvalidArgumentError(f"dynamic_decode: the TensorArray {v._spec.name} of "
                                       f"the state needs a known element shape, has {es}")
        out = TensorArray(v.dtype, size=bound, element_shape=es)
        dims = [bound] + es.as_list()
        out = out._with(tf.zeros(dims if isinstance(bound, int) else tf.stack(dims), v.dtype))
        out._spec.per_step = True
        return out
    return nest.map_structure(size, state) if nest.is_sequence(state) else size(state)


def _first_rows(ta, n):
    from xlapy.compat.v1.ops.tensor_array_ops import TensorArray
    buf = _tf().gather(ta.stack(), _tf().range(n))
    return TensorArray(ta.dtype, size=n, element_shape=ta.element_shape).unstack(buf)


def _swap01(x):
    tf = _tf()
    r = x.shape.ndims
    if r is None or r < 2:
        return x
    return tf.transpose(x, [1, 0] + list(range(2, r)))


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """(final_outputs, final_state, final_sequence_lengths): see the module doc."""
    from xlapy.compat.v1.ops import tensor_array_ops as tas
    from xlapy.compat.v1.ops.control_flow_ops import build_while
    tf = _tf()
    if not isinstance(decoder, Decoder):
        raise InvalidTypeError(f"Expected decoder to be type Decoder, but saw: "
                               f"{type(decoder)}")
    with tf.variable_scope(scope or "decoder"):
        finished, inputs, state = decoder.initialize()
        finished = tf.convert_to_tensor(finished)
        if maximum_iterations is not None:
            maximum_iterations = tf.convert_to_tensor(maximum_iterations, dtype=tf.int32,
                                                      name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise InvalidArgumentError("maximum_iterations must be a scalar")
            finished = tf.logical_or(finished, 0 >= maximum_iterations)
        bound = maximum_iterations if maximum_iterations is not None else \
            getattr(decoder, "_max_iterations_hint", None)
        state = _size_arrays(state, bound)
        lengths = tf.zeros_like(finished, dtype=tf.int32)
        in_flat = [tf.convert_to_tensor(x) for x in nest.flatten(inputs)]
        st_leaves = nest.flatten(state)
        st_flat = tas.loop_carried(st_leaves)
        n_in = len(in_flat)
        struct = {}

        def body(time, carry, _rows_in):
            fin, lens = carry[0], carry[1]
            x = nest.pack_sequence_as(inputs, carry[2:2 + n_in])
            st_now = tas.rewrap(st_leaves, carry[2 + n_in:])
            st = nest.pack_sequence_as(state, st_now)
            outputs, next_state, next_inputs, dec_finished = decoder.step(time, x, st)
            dec_finished = tf.convert_to_tensor(dec_finished)
            next_finished = dec_finished if decoder.tracks_own_finished else \
                tf.logical_or(dec_finished, fin)
            next_lens = tf.where(tf.logical_not(fin), tf.fill(tf.shape(lens), time + 1), lens)
            if decoder.tracks_own_finished and getattr(next_state, "lengths", None) is not None:
                next_lens = tf.cast(next_state.lengths, tf.int32)   # (beam search's, as TF)
            nest.assert_same_structure(state, next_state, check_types=False)
            nest.assert_same_structure(inputs, next_inputs, check_types=False)
            if maximum_iterations is not None:
                next_finished = tf.logical_or(next_finished, time + 1 >= maximum_iterations)
            out_flat = [tf.convert_to_tensor(o) for o in nest.flatten(outputs)]
            if impute_finished:
                out_flat = [_rows(fin, tf.zeros_like(o), o) for o in out_flat]
            struct["out"] = outputs
            new_leaves = nest.flatten(next_state)
            new_st = []
            for cur_leaf, cur, new in zip(st_leaves, st_now, new_leaves):
                if isinstance(cur_leaf, tas.TensorArray):
                    new_st.append(new)
                    continue
                new = tf.convert_to_tensor(new)
                new.set_shape(cur.shape)
                if impute_finished and new.shape.ndims != 0:
                    new = _rows(fin, cur, new)
                new_st.append(new)
            nx = [tf.convert_to_tensor(v) for v in nest.flatten(next_inputs)]
            for old, v in zip(carry[2:2 + n_in], nx):
                v.set_shape(old.shape)
            return [next_finished, next_lens, *nx, *tas.loop_carried(new_st)], out_flat

        def cond(time, carry):
            return tf.logical_not(tf.reduce_all(carry[0]))

        n, final, ys = build_while([finished, lengths, *in_flat, *st_flat], [], bound, body,
                                   cond, name="while")
        if bound is not None:
            steps = tf.range(n)   # (a gather, not a slice: its gradient has a static shape)
            ys = [tf.gather(y, steps) for y in ys]
        final_lengths = final[1]
        final_leaves = tas.rewrap(st_leaves, final[2 + n_in:], known_shape=True)
        if bound is not None:   # the arrays written once a step hold the steps run
            final_leaves = [_first_rows(v, n) if isinstance(v, tas.TensorArray) and
                            getattr(v._spec, "per_step", False) else v for v in final_leaves]
        final_state = nest.pack_sequence_as(state, final_leaves)
        final_outputs = nest.pack_sequence_as(struct["out"], ys)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(_swap01, final_outputs)
        return final_outputs, final_state, final_lengths
