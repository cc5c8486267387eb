"""tf.contrib.seq2seq attention (TF 1.15's attention_wrapper.py): BahdanauAttention,
LuongAttention, AttentionWrapper, AttentionWrapperState, hardmax.

A mechanism holds the memory (rows past memory_sequence_length zeroed) and its keys
(memory_layer(memory), a Dense without bias named "memory_layer", built where the mechanism
is made). Called with a query, it scores every memory step

    Bahdanau  score_j = v^T tanh(keys_j + query_layer(query))          ("attention_v")
              normalize: v -> g v / |v| ("attention_g"), plus a bias ("attention_b")
    Luong     score_j = query . keys_j        scale: times a scalar "attention_g"

masks the steps past memory_sequence_length with -inf, and returns the softmax (the
alignments). AttentionWrapper runs its cell on concat(inputs, previous attention), and
attention = attention_layer(concat(cell_output, context)), context = alignments . memory
(attention = context without an attention_layer_size). Its variables live under
"attention_wrapper/" (the cell's, "attention_layer/kernel", and the mechanism's under
"bahdanau_attention/" or "luong_attention/"). With alignment_history, the state holds a
TensorArray of the alignments of every step, made as TF's (size 0, dynamic_size);
dynamic_decode gives it the size of its loop's bound, as xlapy's arrays have a fixed
size.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.ops.rnn_cell import RNNCell


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _dim(x, i):
    d = x.shape.dims[i] if x.shape.dims is not None else None
    return d if d is not None else _tf().shape(x)[i]


def hardmax(logits, name=None):
    """One-hot of the argmax along the last axis."""
    tf = _tf()
    logits = tf.convert_to_tensor(logits)
    depth = _dim(logits, -1)
    return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype, name=name)


class AttentionMechanism:
    pass


def _prepare_memory(memory, memory_sequence_length):
    tf = _tf()
    memory = tf.convert_to_tensor(memory, name="memory")
    if memory.shape.ndims is not None and memory.shape.ndims < 3:
        raise InvalidArgumentError(f"memory must be [batch, max_time, depth], got shape "
                                   f"{memory.shape}")
    if memory_sequence_length is None:
        return memory, None
    seq = tf.cast(tf.convert_to_tensor(memory_sequence_length), tf.int32)
    mask = tf.sequence_mask(seq, maxlen=_dim(memory, 1), dtype=memory.dtype)
    for _ in range(memory.shape.ndims - 2):
        mask = tf.expand_dims(mask, -1)
    return memory * mask, seq


class _BaseAttentionMechanism(AttentionMechanism):
    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, score_mask_value=None, name=None):
        tf = _tf()
        if not callable(probability_fn):
            raise InvalidTypeError(f"probability_fn must be callable, saw type: "
                                   f"{type(probability_fn).__name__}")
        self._query_layer, self._memory_layer = query_layer, memory_layer
        self._scope_name = None
        self._name = name
        with tf.name_scope(name or "BaseAttentionMechanismInit"):
            self._values, self._seq = _prepare_memory(memory, memory_sequence_length)
            self._keys = self._memory_layer(self._values) if self._memory_layer is not None \
                else self._values
        dt = self._values.dtype
        mask_value = np.asarray(-np.inf if score_mask_value is None else score_mask_value,
                                dt.np)
        seq = self._seq

        def masked_probability(score, prev):
            if seq is not None:
                mask = tf.sequence_mask(seq, maxlen=_dim(score, 1))
                score = tf.where(mask, score, tf.fill(tf.shape(score), tf.constant(mask_value)))
            return probability_fn(score, prev)
        self._probability_fn = masked_probability
        self.dtype = dt

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: _dim(self._keys, 0))
    alignments_size = property(lambda self: _dim(self._keys, 1))
    state_size = alignments_size

    def initial_alignments(self, batch_size, dtype):
        tf = _tf()
        return tf.zeros(tf.stack([batch_size, self.alignments_size]), dtype=dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)

    def _scope(self, default):
        """The mechanism's variable scope: made on the first call, re-entered later."""
        tf = _tf()
        from xlapy.compat.v1.variables import VariableScope
        if self._scope_name is None:
            return tf.variable_scope(None, default_name=default)
        return tf.variable_scope(VariableScope(self._scope_name), reuse=True)

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state)."""
        with self._scope(self._scope_default) as vs:
            self._scope_name = vs.name
            score = self._score(query)
            alignments = self._probability_fn(score, state)
        return alignments, alignments


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention: score = query . keys (times attention_g when scale)."""

    _scope_default = "luong_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 name="LuongAttention"):
        tf = _tf()
        prob = probability_fn or tf.nn.softmax
        super().__init__(None, memory, lambda score, _: prob(score), memory_sequence_length,
                         tf.layers.Dense(num_units, name="memory_layer", use_bias=False),
                         score_mask_value, name)
        self._num_units, self._scale = num_units, scale

    def _score(self, query):
        tf = _tf()
        depth, key_units = query.shape.dims[-1], self._keys.shape.dims[-1]
        if depth is not None and key_units is not None and depth != key_units:
            raise InvalidArgumentError(
                f"Incompatible or unknown inner dimensions between query and keys. Query "
                f"({query}) has units: {depth}. Keys ({self._keys}) have units: {key_units}. "
                "Perhaps you need to set num_units to the keys' dimension ({depth})?")
        score = tf.squeeze(tf.matmul(tf.expand_dims(query, 1), self._keys, transpose_b=True),
                           [1])
        if self._scale:
            g = tf.get_variable("attention_g", dtype=query.dtype, shape=(),
                                initializer=tf.ones_initializer())
            score = g * score
        return score


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention: score = v^T tanh(keys + query_layer(query) [+ b])."""

    _scope_default = "bahdanau_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 name="BahdanauAttention"):
        tf = _tf()
        prob = probability_fn or tf.nn.softmax
        super().__init__(tf.layers.Dense(num_units, name="query_layer", use_bias=False),
                         memory, lambda score, _: prob(score), memory_sequence_length,
                         tf.layers.Dense(num_units, name="memory_layer", use_bias=False),
                         score_mask_value, name)
        self._num_units, self._normalize = num_units, normalize

    def _score(self, query):
        tf = _tf()
        processed = tf.expand_dims(self._query_layer(query), 1)
        dt = processed.dtype
        n = self._num_units
        v = tf.get_variable("attention_v", [n], dtype=dt)
        if self._normalize:
            g = tf.get_variable("attention_g", dtype=dt, shape=(),
                                initializer=tf.constant_initializer(np.sqrt(1.0 / n)))
            b = tf.get_variable("attention_b", [n], dtype=dt,
                                initializer=tf.zeros_initializer())
            normed_v = g * v * tf.rsqrt(tf.reduce_sum(tf.square(v)))
            return tf.reduce_sum(normed_v * tf.tanh(self._keys + processed + b), [2])
        return tf.reduce_sum(v * tf.tanh(self._keys + processed), [2])


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The AttentionWrapper's state; clone(**kwargs) replaces fields."""

    __slots__ = ()

    def clone(self, **kwargs):
        def with_shape(old, new):
            if hasattr(old, "shape") and hasattr(new, "set_shape") and \
                    old.shape.is_compatible_with(new.shape):
                new.set_shape(old.shape)
            return new
        out = self._replace(**kwargs)
        if "cell_state" in kwargs:
            try:
                nest.assert_same_structure(self.cell_state, out.cell_state, check_types=False)
                out = out._replace(cell_state=nest.map_structure(
                    with_shape, self.cell_state, out.cell_state))
            except InvalidArgumentError:
                pass
        return out


def _compute_attention(mechanism, cell_output, attention_state, attention_layer):
    tf = _tf()
    alignments, next_state = mechanism(cell_output, state=attention_state)
    context = tf.squeeze(tf.matmul(tf.expand_dims(alignments, 1), mechanism.values), [1])
    attention = attention_layer(tf.concat([cell_output, context], 1)) \
        if attention_layer is not None else context
    return attention, alignments, next_state


class AttentionWrapper(RNNCell):
    """A cell with attention over one mechanism (or a list of them)."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None,
                 attention_fn=None):
        super().__init__(name=name)
        tf = _tf()
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechs = list(attention_mechanism) if self._is_multi else [attention_mechanism]
        for m in mechs:
            if not isinstance(m, AttentionMechanism):
                raise InvalidTypeError(f"attention_mechanism must be an AttentionMechanism "
                                       f"or list of multiple AttentionMechanism instances, "
                                       f"saw type: {type(m).__name__}")
        self._mechs = mechs
        self._cell_input_fn = cell_input_fn or (lambda inputs, attention: tf.concat(
            [inputs, attention], -1))
        if attention_layer_size is not None and attention_layer is not None:
            raise InvalidArgumentError("Only one of attention_layer_size and attention_layer "
                                       "should be set")
        if attention_layer_size is not None:
            sizes = list(attention_layer_size) if isinstance(attention_layer_size,
                                                             (list, tuple)) \
                else [attention_layer_size]
            if len(sizes) != len(mechs):
                raise InvalidArgumentError(
                    f"If provided, attention_layer_size must contain exactly one integer per "
                    f"attention_mechanism, saw: {len(sizes)} vs {len(mechs)}")
            self._layers = [tf.layers.Dense(s, name="attention_layer", use_bias=False)
                            for s in sizes]
            self._attention_size = sum(sizes)
        elif attention_layer is not None:
            self._layers = list(attention_layer) if isinstance(attention_layer,
                                                               (list, tuple)) \
                else [attention_layer]
            self._attention_size = sum(layer.units for layer in self._layers)
        else:
            self._layers = None
            self._attention_size = sum(int(m.values.shape.dims[-1]) for m in mechs)
        self._attention_fn = attention_fn or _compute_attention
        self._cell = cell
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = None if initial_cell_state is None else \
            nest.map_structure(tf.identity, initial_cell_state)

    def _item_or_tuple(self, seq):
        seq = tuple(seq)
        return seq if self._is_multi else seq[0]

    @property
    def output_size(self):
        return self._attention_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        tf = _tf()
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=tf.TensorShape([]),
            attention=self._attention_size,
            alignments=self._item_or_tuple(m.alignments_size for m in self._mechs),
            attention_state=self._item_or_tuple(m.state_size for m in self._mechs),
            alignment_history=self._item_or_tuple(() for _ in self._mechs))

    def zero_state(self, batch_size, dtype):
        tf = _tf()
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            cell_state = nest.map_structure(tf.identity, cell_state)
            initial_alignments = [m.initial_alignments(batch_size, dtype) for m in self._mechs]
            return AttentionWrapperState(
                cell_state=cell_state, time=tf.zeros([], tf.int32),
                attention=tf.zeros(tf.stack([batch_size, self._attention_size]), dtype),
                alignments=self._item_or_tuple(initial_alignments),
                attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                    for m in self._mechs),
                alignment_history=self._item_or_tuple(
                    tf.TensorArray(dtype, size=0, dynamic_size=True,
                                   element_shape=a.shape)
                    if self._alignment_history else () for a in initial_alignments))

    def build(self, input_depth, dtype):
        pass

    def call(self, inputs, state):
        tf = _tf()
        if not isinstance(state, AttentionWrapperState):
            raise InvalidTypeError(f"Expected state to be instance of AttentionWrapperState. "
                                   f"Received type {type(state)} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        prev = state.attention_state if self._is_multi else [state.attention_state]
        history = state.alignment_history if self._is_multi else [state.alignment_history]
        attentions, alignments, states = [], [], []
        for i, m in enumerate(self._mechs):
            a, al, st = self._attention_fn(m, cell_output, prev[i],
                                           self._layers[i] if self._layers else None)
            attentions.append(a)
            alignments.append(al)
            states.append(st)
        attention = tf.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states),
            alignments=self._item_or_tuple(alignments),
            alignment_history=self._item_or_tuple(
                history[i].write(state.time, al) if self._alignment_history else ()
                for i, al in enumerate(alignments)))
        return (attention if self._output_attention else cell_output), next_state
