"""tf.TensorArray: writes and reads in a tf.while_loop (an RNN collecting its outputs),
unstack/stack/gather/scatter/concat/split, values and gradients against JAX, in the
executor and compiled (one cluster holding the loop); clear errors for what xlapy's
fixed-size arrays cannot be."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_both, single_cluster

R = np.random.default_rng(11)
XV = R.standard_normal((4, 6, 3)).astype(np.float32)   # batch, time, features
WV = (R.standard_normal((8, 5)) * 0.3).astype(np.float32)


def _jax_rnn(x, w):
    h = jnp.zeros((4, 5), jnp.float32)
    outs = []
    for t in range(6):
        h = jnp.tanh(jnp.concatenate([x[:, t], h], 1) @ w)
        outs.append(h)
    ys = jnp.stack(outs)
    return ys, jnp.sum(ys * ys)


def _rnn(element_shape=None):
    x = tf.placeholder(tf.float32, [4, 6, 3], name="x")
    w = tf.Variable(WV, name="w")
    xs = tf.TensorArray(tf.float32, size=6).unstack(tf.transpose(x, [1, 0, 2]))
    out = tf.TensorArray(tf.float32, size=6, element_shape=element_shape)

    def body(t, h, out):
        h = tf.tanh(tf.matmul(tf.concat([xs.read(t), h], 1), w))
        return t + 1, h, out.write(t, h)

    _, _, out = tf.while_loop(lambda t, h, o: t < 6, body, [0, tf.zeros([4, 5]), out])
    ys = out.stack()
    loss = tf.reduce_sum(ys * ys)
    gx, gw = tf.gradients(loss, [x, w])
    return [ys, loss, gx, gw], {x: XV}


@pytest.mark.parametrize("element_shape", [None, [4, 5]])
def test_rnn_outputs_collected_in_a_loop_executor_and_xla(element_shape):
    ex, xl, sess, fetches, feed = run_both(lambda: _rnn(element_shape))
    (ys, loss), (gx, gw) = _jax_rnn(XV, WV), jax.grad(
        lambda x, w: _jax_rnn(x, w)[1], argnums=(0, 1))(XV, WV)
    for got in (ex, xl):
        assert_close(got[0], ys, rtol=1e-5, atol=1e-6)
        assert_close(got[1], loss, rtol=1e-5, atol=1e-5)
        assert_close(got[2], gx, rtol=1e-4, atol=1e-5)
        assert_close(got[3], gw, rtol=1e-4, atol=1e-5)
    assert fetches[0].shape.as_list() == [6, 4, 5]
    single_cluster(sess, fetches, feed)


def test_array_operations_outside_loops():
    def build():
        v = tf.placeholder(tf.float32, [6, 2], name="v")
        ta = tf.TensorArray(tf.float32, size=3)
        ta = ta.write(0, v[0]).write(2, v[1] * 2.0)
        sc = tf.TensorArray(tf.float32, size=4).scatter([3, 1], v[:2])
        sp = tf.TensorArray(tf.float32, size=3).split(v, [2, 2, 2])
        return [ta.stack(), ta.read(2), ta.gather([2, 0]), ta.size(), sc.stack(), sp.stack(),
                sp.concat(), ta.concat()], {v: np.arange(12, dtype=np.float32).reshape(6, 2)}
    ex, xl, *_ = run_both(build)
    v = np.arange(12, dtype=np.float32).reshape(6, 2)
    want = [np.stack([v[0], np.zeros(2), v[1] * 2]), v[1] * 2, np.stack([v[1] * 2, v[0]]), 3,
            np.stack([np.zeros(2), v[1], np.zeros(2), v[0]]), v.reshape(3, 2, 2), v,
            np.stack([v[0], np.zeros(2), v[1] * 2]).reshape(-1)]
    for got in (ex, xl):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_clear_errors():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="fixed size"):
            tf.TensorArray(tf.float32, size=None, dynamic_size=True)
        ta = tf.TensorArray(tf.float32, size=3).write(0, [1.0, 2.0])
        with pytest.raises(InvalidArgumentError, match="incompatible with the TensorArray"):
            ta.write(1, [1.0, 2.0, 3.0])
        with pytest.raises(InvalidArgumentError, match="not yet been written"):
            tf.TensorArray(tf.float32, size=3).read(0)
        with pytest.raises(InvalidArgumentError, match="equal, known lengths"):
            tf.TensorArray(tf.float32, size=2).split(tf.zeros([5]), [2, 3])
        x = tf.placeholder(tf.float32, [None, 2])
        unknown = tf.TensorArray(tf.float32, size=2)
        with pytest.raises(InvalidArgumentError, match="element_shape="):
            tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a.write(i, x)),
                          [0, unknown])
        with pytest.raises(InvalidArgumentError, match="must return a TensorArray"):
            tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a.stack()),
                          [0, tf.TensorArray(tf.float32, size=2, element_shape=[2])])


def test_write_past_the_end_fails_at_run_time():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        ta = tf.TensorArray(tf.float32, size=2).write(i, 1.0)
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(ta.stack(), {i: 1}), [0.0, 1.0])
            with pytest.raises(InvalidArgumentError):
                s.run(ta.stack(), {i: 5})
