"""tf.nn.raw_rnn: a plain loop_fn reading the inputs from a TensorArray gives dynamic_rnn's
outputs, state and gradients; unbounded its cluster falls back to the executor, bounded
(xlapy's maximum_iterations) it compiles; loop_state carries a TensorArray."""

import logging

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .conftest import jit_config
from .helpers import all_compiled, assert_close

R = np.random.default_rng(3)
B, T, D = 3, 5, 2
XS = R.standard_normal((B, T, D)).astype(np.float32)
SEQ = np.array([5, 2, 3], np.int32)


@pytest.mark.parametrize("bound", [None, T], ids=["unbounded", "bounded"])
def test_raw_rnn_equals_dynamic_rnn(bound, caplog):
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [B, T, D])
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(tf.transpose(x, [1, 0, 2]))

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            cell_state = cell.zero_state(B, tf.float32)
            loop_state = tf.TensorArray(tf.int32, size=T + 1, element_shape=[])
        finished = time >= SEQ
        nxt = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([B, D]),
                      lambda: inputs_ta.read(tf.minimum(time, T - 1)))
        return finished, nxt, cell_state, cell_output, loop_state.write(time, time * 10)

    emit_ta, final_state, times = tf.nn.raw_rnn(cell, loop_fn, maximum_iterations=bound)
    outputs = tf.transpose(emit_ta.stack(), [1, 0, 2])
    ref_out, ref_state = tf.nn.dynamic_rnn(cell, x, sequence_length=SEQ, dtype=tf.float32)
    loss, ref_loss = (tf.reduce_sum(o * o) + tf.reduce_sum(s.h) for o, s in
                      ((outputs, final_state), (ref_out, ref_state)))
    grads = tf.gradients(loss, cell.variables + [x])
    ref_grads = tf.gradients(ref_loss, cell.variables + [x])
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    if bound is not None:
        assert "While" in all_compiled(sess, [outputs, grads], {x: XS})
    with caplog.at_level(logging.WARNING, logger="xlapy.compat.v1.jit"):
        got, want, g, gw, tv = sess.run([(outputs, final_state), (ref_out, ref_state), grads,
                                         ref_grads, times.stack()], {x: XS})
    # unbounded, the loop stacks an unknown number of rows: the executor runs it
    assert ("executor instead" in caplog.text) == (bound is None)
    assert got[0].shape == (B, T, 4) and emit_ta.dtype == tf.float32
    assert_close(got, want, rtol=1e-6, atol=1e-6)
    assert_close(g, gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(tv, np.arange(T + 1) * 10)


def test_raw_rnn_emit_structure_and_early_stop():
    """emit_output of its own structure; the loop stops when every entry is finished."""
    cell = tf.nn.rnn_cell.GRUCell(3)
    x = tf.constant(XS)

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            return (time >= SEQ, x[:, 0], cell.zero_state(B, tf.float32),
                    (tf.zeros([B]), tf.zeros([B, 1], tf.int32)), None)
        emit = (tf.reduce_sum(cell_output, 1), tf.fill([B, 1], time))
        return time >= SEQ, x[:, tf.minimum(time, T - 1)], cell_state, emit, None

    emit_ta, _, ls = tf.nn.raw_rnn(cell, loop_fn)
    assert ls is None
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    (sums, steps), n = sess.run([(emit_ta[0].stack(), emit_ta[1].stack()), emit_ta[0].size()])
    assert n == SEQ.max() and sums.shape == (n, B) and steps.shape == (n, B, 1)
    for b, length in enumerate(SEQ):   # finished entries emit zeros
        np.testing.assert_array_equal(steps[:, b, 0], np.where(np.arange(n) < length,
                                                               np.arange(1, n + 1), 0))
        assert np.all(sums[length:, b] == 0) and np.all(sums[:length, b] != 0)
