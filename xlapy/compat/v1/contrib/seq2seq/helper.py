"""tf.contrib.seq2seq helpers: what a BasicDecoder feeds its cell at each step and how it
samples, as TF 1.15's helper.py.

  TrainingHelper                    reads the ground-truth inputs (teacher forcing)
  GreedyEmbeddingHelper             feeds the embedding of the argmax of the last output
  SampleEmbeddingHelper             ... of a class sampled from the last output's logits
  ScheduledEmbeddingTrainingHelper  the ground truth, or with probability
                                    sampling_probability a sampled class's embedding

The inputs of TrainingHelper are read with the time index clamped to the last step (and
zeros once every sequence has finished, as TF), so the read is a plain gather that XLA
compiles; TF reads them through a tf.cond of a TensorArray.
"""

from __future__ import annotations

from xlapy.compat.v1 import nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _static_or_dynamic(x, axis):
    d = x.shape.dims[axis] if x.shape.dims is not None else None
    return d if d is not None else _tf().shape(x)[axis]


def _embedding_fn(embedding):
    if callable(embedding):
        return embedding
    tf = _tf()
    params = tf.convert_to_tensor(embedding, name="embedding") \
        if not hasattr(embedding, "_to_tensor") else embedding
    return lambda ids: tf.nn.embedding_lookup(params, ids)


class Helper:
    """The interface BasicDecoder drives (abstract)."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def sample_ids_shape(self):
        raise NotImplementedError

    @property
    def sample_ids_dtype(self):
        raise NotImplementedError

    def initialize(self, name=None):
        """(initial finished [batch] bool, initial inputs)."""
        raise NotImplementedError

    def sample(self, time, outputs, state, name=None):
        raise NotImplementedError

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """(finished, next_inputs, next_state)."""
        raise NotImplementedError


class CustomHelper(Helper):
    """A Helper from three functions: initialize_fn() -> (finished, next_inputs),
    sample_fn(time, outputs, state) -> sample_ids, next_inputs_fn(time, outputs, state,
    sample_ids) -> (finished, next_inputs, next_state)."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        tf = _tf()
        self._initialize_fn, self._sample_fn = initialize_fn, sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tf.TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = tf.as_dtype(sample_ids_dtype or tf.int32)

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise InvalidArgumentError("batch_size accessed before initialize was called")
        return self._batch_size

    sample_ids_shape = property(lambda self: self._sample_ids_shape)
    sample_ids_dtype = property(lambda self: self._sample_ids_dtype)

    def initialize(self, name=None):
        finished, next_inputs = self._initialize_fn()
        if self._batch_size is None:
            self._batch_size = _static_or_dynamic(_tf().convert_to_tensor(finished), 0)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                    sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Feeds inputs[:, t] (time-major: inputs[t]); a sequence finishes at its length."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        tf = _tf()
        with tf.name_scope(name or "TrainingHelper"):
            inputs = nest.map_structure(tf.convert_to_tensor, inputs)
            if not time_major:
                inputs = nest.map_structure(
                    lambda x: tf.transpose(x, [1, 0] + list(range(2, x.shape.ndims))), inputs)
            self._inputs = inputs
            self._sequence_length = tf.convert_to_tensor(sequence_length,
                                                         name="sequence_length")
            if self._sequence_length.shape.ndims not in (None, 1):
                raise InvalidArgumentError(f"Expected sequence_length to be a vector, but "
                                           f"received shape: {self._sequence_length.shape}")
            self._sequence_length = tf.cast(self._sequence_length, tf.int32)
            first = nest.flatten(inputs)[0]
            self._max_time = _static_or_dynamic(first, 0)
            self._zero_inputs = nest.map_structure(lambda x: tf.zeros_like(x[0]), inputs)
            self._batch_size = _static_or_dynamic(self._sequence_length, 0)

    inputs = property(lambda self: self._inputs)
    sequence_length = property(lambda self: self._sequence_length)
    batch_size = property(lambda self: self._batch_size)

    @property
    def sample_ids_shape(self):
        return _tf().TensorShape([])

    @property
    def sample_ids_dtype(self):
        return _tf().int32

    @property
    def _max_iterations_hint(self):
        """The loop runs at most max_time steps (a bound that sizes the outputs)."""
        return self._max_time if isinstance(self._max_time, int) else None

    def _read(self, time, finished):
        tf = _tf()
        last = self._max_time - 1
        idx = tf.minimum(time, last)
        all_finished = tf.reduce_all(finished)
        return nest.map_structure(
            lambda x, z: tf.where(tf.fill(tf.shape(z), all_finished), z, tf.gather(x, idx)),
            self._inputs, self._zero_inputs)

    def initialize(self, name=None):
        tf = _tf()
        with tf.name_scope(name or "TrainingHelperInitialize"):
            finished = tf.equal(0, self._sequence_length)
            return finished, self._read(0, finished)

    def sample(self, time, outputs, state, name=None):
        tf = _tf()
        with tf.name_scope(name or "TrainingHelperSample"):
            return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)

    def next_inputs(self, time, outputs, state, sample_ids=None, name=None, **unused):
        tf = _tf()
        with tf.name_scope(name or "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            return finished, self._read(next_time, finished), state


class GreedyEmbeddingHelper(Helper):
    """Feeds embedding(argmax(outputs)); a sequence finishes when it emits end_token."""

    def __init__(self, embedding, start_tokens, end_token):
        tf = _tf()
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32,
                                                  name="start_tokens")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise InvalidArgumentError("start_tokens must be a vector")
        if self._end_token.shape.ndims != 0:
            raise InvalidArgumentError("end_token must be a scalar")
        self._batch_size = _static_or_dynamic(self._start_tokens, 0)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    batch_size = property(lambda self: self._batch_size)

    @property
    def sample_ids_shape(self):
        return _tf().TensorShape([])

    @property
    def sample_ids_dtype(self):
        return _tf().int32

    def initialize(self, name=None):
        tf = _tf()
        return tf.zeros_like(self._start_tokens, dtype=tf.bool), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        tf = _tf()
        if not outputs.dtype.is_floating:
            raise InvalidTypeError(f"Expected outputs to be a float Tensor, got "
                                   f"{outputs.dtype.name}")
        return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        tf = _tf()
        finished = tf.equal(sample_ids, self._end_token)
        all_finished = tf.reduce_all(finished)
        emb = self._embedding_fn(sample_ids)
        next_inputs = tf.where(tf.fill(tf.shape(emb), all_finished), self._start_inputs, emb)
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Like GreedyEmbeddingHelper, sampling from softmax(outputs / softmax_temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        tf = _tf()
        logits = outputs if self._softmax_temperature is None else \
            outputs / self._softmax_temperature
        return tf.cast(tf.reshape(tf.random.categorical(logits, 1, seed=self._seed), [-1]),
                       tf.int32)


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """A TrainingHelper that, with probability sampling_probability at each step, feeds the
    embedding of a class sampled from the outputs instead of the ground truth (sample_ids
    -1 where it does not)."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        tf = _tf()
        self._embedding_fn = _embedding_fn(embedding)
        self._sampling_probability = tf.convert_to_tensor(sampling_probability,
                                                          name="sampling_probability")
        if self._sampling_probability.shape.ndims not in (0, 1):
            raise InvalidArgumentError("sampling_probability must be either a scalar or a "
                                       f"vector. saw shape: {self._sampling_probability.shape}")
        self._seed, self._scheduling_seed = seed, scheduling_seed
        super().__init__(inputs, sequence_length, time_major, name)

    def sample(self, time, outputs, state, name=None):
        tf = _tf()
        u = tf.random_uniform([self.batch_size] if isinstance(self.batch_size, int)
                              else tf.stack([self.batch_size]), seed=self._scheduling_seed)
        select = u < self._sampling_probability
        drawn = tf.cast(tf.reshape(tf.random.categorical(outputs, 1, seed=self._seed), [-1]),
                        tf.int32)
        return tf.where(select, drawn, tf.fill(tf.shape(drawn), -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        tf = _tf()
        finished, base, state = super().next_inputs(time, outputs, state)
        sampled = self._embedding_fn(tf.maximum(sample_ids, 0))
        use = tf.tile(tf.expand_dims(sample_ids > -1, 1), tf.stack([1, tf.shape(base)[1]]))
        return finished, tf.where(use, sampled, base), state
