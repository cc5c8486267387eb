"""tf.contrib.layers' conv2d / conv2d_transpose / pooling / batch_norm / dropout (values
against JAX, variable names as contrib's, executor and XLA), and the small entry points of
misc_api.py: make_template, report_uninitialized_variables, is_variable_initialized,
numpy_function, get_seed, train.write_graph, io.gfile, contrib.framework."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_both

R = np.random.default_rng(3)
XV = R.standard_normal((2, 8, 8, 3)).astype(np.float32)


def _net():
    x = tf.placeholder(tf.float32, [2, 8, 8, 3], name="x")
    h = tf.contrib.layers.conv2d(x, 4, 3, weights_initializer=tf.constant_initializer(0.1))
    h = tf.contrib.layers.batch_norm(h, is_training=True, updates_collections=None)
    p = tf.contrib.layers.max_pool2d(h, 2)
    a = tf.contrib.layers.avg_pool2d(h, [2, 2], stride=2)
    t = tf.contrib.layers.conv2d_transpose(p, 2, 3, stride=2, activation_fn=None)
    d = tf.contrib.layers.dropout(a, 0.5, is_training=False)
    return [h, p, t, d], {x: XV}


def _jax_net():
    w = jnp.full((3, 3, 3, 4), 0.1, jnp.float32)
    c = jax.lax.conv_general_dilated(XV, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    c = jax.nn.relu(c)  # zero biases
    m, v = c.mean((0, 1, 2)), c.var((0, 1, 2))
    h = (c - m) / jnp.sqrt(v + 0.001)  # contrib's default: no gamma, beta 0
    p = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    a = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return h, p, a


def test_contrib_layers_values_names_executor_and_xla():
    ex, xl, sess, fetches, feed = run_both(_net, seed=7)
    h, p, a = _jax_net()
    for got in (ex, xl):
        assert_close(got[0], h, rtol=1e-4, atol=1e-4)
        assert_close(got[1], p, rtol=1e-4, atol=1e-4)
        assert_close(got[3], a, rtol=1e-4, atol=1e-4)
        assert got[2].shape == (2, 8, 8, 2)
    assert_close(ex[2], xl[2], rtol=1e-4, atol=1e-4)
    with sess.graph.as_default():
        names = [v.op.name for v in tf.global_variables()]
        # updates_collections=None: the moving averages ran with the output
        mm = [v for v in tf.global_variables() if v.op.name == "BatchNorm/moving_mean"][0]
        assert np.abs(sess.run(mm)).sum() > 0
        assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert names == ["Conv/weights", "Conv/biases", "BatchNorm/beta", "BatchNorm/moving_mean",
                     "BatchNorm/moving_variance", "Conv2d_transpose/weights",
                     "Conv2d_transpose/biases"]


def test_contrib_layers_errors():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="rank 4"):
            tf.contrib.layers.conv2d(tf.zeros([2, 3]), 4, 3)
        with pytest.raises(InvalidArgumentError, match="kernel_size"):
            tf.contrib.layers.conv2d(tf.zeros([1, 4, 4, 2]), 4, [3, 3, 3])


def test_make_template_shares_variables():
    with tf.Graph().as_default():
        def scale(x):
            w = tf.get_variable("w", [2], initializer=tf.constant_initializer(3.0))
            return x * w
        t = tf.make_template("scale", scale)
        a, b = t(tf.constant([1.0, 2.0])), t(tf.constant([0.5, 1.0]))
        assert [v.op.name for v in tf.global_variables()] == ["scale/w"]
        assert t.variable_scope_name == "scale"
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(s.run([a, b]), [[3.0, 6.0], [1.5, 3.0]])
    with tf.Graph().as_default():  # a scope made at construction: variables on first call
        t = tf.make_template("early", scale, create_scope_now_=True)
        a, b = t(tf.constant([1.0, 2.0])), t(tf.constant([0.5, 1.0]))
        assert [v.op.name for v in tf.global_variables()] == ["early/w"]


def test_uninitialized_variables_are_reported():
    with tf.Graph().as_default():
        u = tf.get_variable("u", [3])
        tf.Variable(1.0, name="v")
        report = tf.report_uninitialized_variables()
        init_u = tf.is_variable_initialized(u)
        with tf.Session() as s:
            assert list(s.run(report)) == [b"u", b"v"] and not s.run(init_u)
            s.run(tf.variables_initializer([u]))
            assert list(s.run(report)) == [b"v"] and s.run(init_u)
            s.run(tf.global_variables_initializer())
            assert list(s.run(report)) == []
        assert tf.get_seed(None) == (None, None)
        assert tf.get_seed(3) == (87654321, 3)


def test_numpy_function_write_graph_gfile_and_contrib_framework(tmp_path):
    pytest.importorskip("tensorboardX", reason="tf.train.write_graph writes a protobuf "
                                               "with tensorboardX's messages")
    with tf.Graph().as_default() as g:
        y = tf.numpy_function(lambda a: a * 2, [tf.constant([1.0, 4.0])], tf.float32)
        step = tf.contrib.framework.get_or_create_global_step()
        assert tf.contrib.framework.get_global_step() is step
        path = tf.train.write_graph(g.as_graph_def(), str(tmp_path), "g.pbtxt")
        text = open(path).read()
        assert 'op: "PyFunc"' in text or "PyFunc" in text
        bin_path = tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
        assert os.path.getsize(bin_path) > 0
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(y), [2.0, 8.0])
    assert tf.io.gfile.exists(path) and sorted(tf.io.gfile.listdir(str(tmp_path))) == [
        "g.pb", "g.pbtxt"]


def test_slim_arg_scope_repeat_stack():
    slim = tf.contrib.slim
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 16, 16, 3])
        with slim.arg_scope([slim.conv2d, slim.fully_connected],
                            weights_regularizer=slim.l2_regularizer(1e-4)):
            with slim.arg_scope([slim.conv2d], padding="VALID") as sc:
                h = slim.repeat(x, 2, slim.conv2d, 8, [3, 3], scope="conv1")
            h = slim.conv2d(h, 4, [3, 3], scope="same")  # outside sc: SAME
            with slim.arg_scope(sc):
                v = slim.conv2d(h, 4, [3, 3], padding="SAME", scope="given")  # call wins
            h = slim.max_pool2d(h, [2, 2], scope="pool1")
            h = slim.stack(slim.flatten(h), slim.fully_connected, [32, 16], scope="fc")
        assert h.shape.as_list() == [2, 16] and v.shape.as_list() == [2, 12, 12, 4]
        names = [w.op.name for w in slim.get_variables()]
        assert names[:3] == ["conv1/conv1_1/weights", "conv1/conv1_1/biases",
                             "conv1/conv1_2/weights"]
        assert "fc/fc_2/weights" in names
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 6  # 4 convs, 2 fc
        with pytest.raises(InvalidArgumentError, match="add_arg_scope"):
            with slim.arg_scope([tf.nn.relu], x=1):
                pass


def test_block_cells_compute_as_their_cells():
    xs = R.standard_normal((2, 4, 3)).astype(np.float32)
    outs = []
    for make in (lambda: tf.contrib.rnn.LSTMBlockCell(5),
                 lambda: tf.nn.rnn_cell.LSTMCell(5, name="lstm_cell"),
                 lambda: tf.contrib.rnn.GRUBlockCellV2(5),
                 lambda: tf.nn.rnn_cell.GRUCell(5, name="gru_cell")):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            x = tf.constant(xs)
            out, _ = tf.nn.dynamic_rnn(make(), x, dtype=tf.float32)
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                outs.append((s.run(out), [v.op.name for v in tf.global_variables()]))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    np.testing.assert_allclose(outs[2][0], outs[3][0], rtol=1e-6)
    assert outs[0][1] == outs[1][1] and outs[0][1][0].startswith("rnn/lstm_cell/")
