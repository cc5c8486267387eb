"""tf.layers: variable names and reuse as TF's, values against NumPy, dropout and batch
normalization in training and inference (moving averages through UPDATE_OPS), and a CNN
training step compiling into one cluster."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config
from .helpers import assert_close, single_cluster

R = np.random.default_rng(31)


def test_names_reuse_and_collections():
    x = tf.placeholder(tf.float32, [None, 4])
    img = tf.placeholder(tf.float32, [None, 6, 6, 2])
    tf.layers.dense(x, 3)
    tf.layers.dense(x, 3)
    a = tf.layers.dense(x, 2, name="head")
    b = tf.layers.dense(x, 2, name="head", reuse=True)
    with tf.variable_scope("block"):
        h = tf.layers.conv2d(img, 5, 3, padding="same", activation=tf.nn.relu)
        h = tf.layers.batch_normalization(h, training=True)
    names = [v.name for v in tf.global_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
                     "head/kernel:0", "head/bias:0", "block/conv2d/kernel:0",
                     "block/conv2d/bias:0", "block/batch_normalization/beta:0",
                     "block/batch_normalization/gamma:0",
                     "block/batch_normalization/moving_mean:0",
                     "block/batch_normalization/moving_variance:0"]
    trainable = [v.name for v in tf.trainable_variables()]
    assert "block/batch_normalization/moving_mean:0" not in trainable
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    assert a.op.name.startswith("head/") and b.op.name.startswith("head_1/")
    assert h.shape.as_list() == [None, 6, 6, 5]
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    xv = R.standard_normal((2, 4)).astype(np.float32)
    av, bv = sess.run([a, b], {x: xv})
    assert_close(av, bv)     # reuse=True shares head's variables
    with pytest.raises(InvalidArgumentError, match="already exists"):
        tf.layers.dense(x, 2, name="head")


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_layer_values(xla):
    xv = R.standard_normal((2, 5, 6, 3)).astype(np.float32)
    seq = R.standard_normal((2, 7, 3)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 5, 6, 3])
        s = tf.placeholder(tf.float32, [None, 7, 3])
        k_init = tf.constant_initializer(R.standard_normal((3, 3, 3, 4)).astype(np.float32))
        out = {
            "dense3": tf.layers.dense(s, 2, activation=tf.nn.relu),
            "conv_valid": tf.layers.conv2d(x, 4, 3, strides=2, kernel_initializer=k_init),
            "conv_first": tf.layers.conv2d(tf.transpose(x, [0, 3, 1, 2]), 4, 3,
                                           padding="same", data_format="channels_first",
                                           kernel_initializer=k_init),
            "conv_last": tf.layers.conv2d(x, 4, 3, padding="same", kernel_initializer=k_init),
            "max": tf.layers.max_pooling2d(x, 2, 2),
            "avg": tf.layers.average_pooling2d(x, [3, 2], [1, 2], padding="same"),
            "flat": tf.layers.flatten(x),
            "conv1d": tf.layers.conv1d(s, 2, 3, padding="same"),
        }
        sess = tf.Session(config=jit_config() if xla else None)
        sess.run(tf.global_variables_initializer())
        got, vs = sess.run([out, {v.name: v for v in tf.global_variables()}], {x: xv, s: seq})
    k, b = vs["dense/kernel:0"], vs["dense/bias:0"]
    assert_close(got["dense3"], np.maximum(seq @ k + b, 0), rtol=1e-5, atol=1e-6)
    kc = vs["conv2d/kernel:0"]
    pad = np.pad(xv, [(0, 0), (1, 1), (1, 1), (0, 0)])
    ref_same = sum(pad[:, i:i + 5, j:j + 6] @ kc[i, j] for i in range(3) for j in range(3))
    ref_valid = sum(xv[:, i:i + 3:2, j:j + 4:2] @ kc[i, j] for i in range(3) for j in range(3))
    assert_close(got["conv_valid"], ref_valid, rtol=1e-4, atol=1e-5)
    assert_close(got["conv_last"], ref_same, rtol=1e-4, atol=1e-5)
    assert_close(got["conv_first"], ref_same.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)
    assert_close(got["max"], xv[:, :4, :6].reshape(2, 2, 2, 3, 2, 3).max((2, 4)))
    assert got["avg"].shape == (2, 5, 3, 3)
    # interior windows: rows i-1..i+1, columns 0..1 (the 2-wide, stride-2 windows need
    # no padding); the border rows average only their real elements
    assert_close(got["avg"][:, 1:4, 0],
                 np.stack([xv[:, i - 1:i + 2, 0:2].mean((1, 2)) for i in range(1, 4)], 1),
                 rtol=1e-5)
    assert_close(got["avg"][:, 0, 0], xv[:, 0:2, 0:2].mean((1, 2)), rtol=1e-5)
    assert_close(got["flat"], xv.reshape(2, -1))
    assert got["conv1d"].shape == (2, 7, 2)


def test_dropout_training_flag():
    x = tf.ones([100, 40])
    t = tf.placeholder(tf.bool, [])
    off = tf.layers.dropout(x, 0.5, training=False)
    on = tf.layers.dropout(x, 0.5, training=True, seed=1)
    flag = tf.layers.dropout(x, 0.5, training=t, seed=2)
    sess = tf.Session(config=jit_config())
    o1, o2, f1 = sess.run([off, on, flag], {t: True})
    f0 = sess.run(flag, {t: False})
    assert_close(o1, np.ones((100, 40)))
    assert_close(f0, np.ones((100, 40)))
    for v in (o2, f1):
        assert set(np.unique(v)) == {0.0, 2.0} and 0.4 < (v > 0).mean() < 0.6
    assert "If" not in [op.type for op in tf.get_default_graph().get_operations()]


@pytest.mark.parametrize("rank", [4, 2])
def test_batch_normalization_moving_averages(rank):
    """Training normalizes with the batch's statistics and moves the moving averages by
    (1 - momentum) towards them (fused path: Bessel-corrected variance; rank 2: biased);
    inference normalizes with the moving averages."""
    shape = (6, 3, 2, 4) if rank == 4 else (10, 4)
    xv = (R.standard_normal(shape) * 3 + 1).astype(np.float32)
    x = tf.placeholder(tf.float32, [None] + list(shape[1:]))
    t = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, momentum=0.9, training=t)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(updates):
        train_y = tf.identity(y)
    mm, mv = [v for v in tf.global_variables() if "moving" in v.name]
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    axes = tuple(range(rank - 1))
    n = int(np.prod([shape[a] for a in axes]))
    yv = sess.run(train_y, {x: xv, t: True})
    assert_close(yv, (xv - xv.mean(axes)) / np.sqrt(xv.var(axes) + 1e-3), rtol=1e-4, atol=1e-4)
    var = xv.var(axes) * (n / (n - 1) if rank == 4 else 1.0)
    assert_close(sess.run(mm), 0.1 * xv.mean(axes), rtol=1e-5, atol=1e-6)
    assert_close(sess.run(mv), 0.9 + 0.1 * var, rtol=1e-5)
    m0, v0 = sess.run([mm, mv])
    yi = sess.run(train_y, {x: xv, t: False})      # inference: no update, moving stats used
    assert_close(sess.run(mm), m0)
    assert_close(yi, (xv - m0) / np.sqrt(v0 + 1e-3), rtol=1e-4, atol=1e-4)


def _deep_mnist_step(xla):
    """mnist_deep.py's model, small: conv-pool-conv-pool-dense-dropout-dense, Adam."""
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 64])
        y_ = tf.placeholder(tf.float32, [None, 10])
        keep = tf.placeholder(tf.float32)

        def weight(shape):
            return tf.Variable(tf.truncated_normal(shape, stddev=0.1))

        def bias(shape):
            return tf.Variable(tf.constant(0.1, shape=shape))
        img = tf.reshape(x, [-1, 8, 8, 1])
        h1 = tf.nn.relu(tf.nn.conv2d(img, weight([3, 3, 1, 4]), [1, 1, 1, 1], "SAME") +
                        bias([4]))
        p1 = tf.nn.max_pool(h1, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h2 = tf.nn.relu(tf.nn.conv2d(p1, weight([3, 3, 4, 8]), [1, 1, 1, 1], "SAME") +
                        bias([8]))
        p2 = tf.nn.max_pool(h2, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        fc = tf.nn.relu(tf.matmul(tf.reshape(p2, [-1, 2 * 2 * 8]), weight([32, 16])) +
                        bias([16]))
        drop = tf.nn.dropout(fc, keep)
        logits = tf.matmul(drop, weight([16, 10])) + bias([10])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_,
                                                                         logits=logits))
        train = tf.train.AdamOptimizer(1e-2).minimize(loss)
        sess = tf.Session(graph=g, config=jit_config() if xla else None)
        sess.run(tf.global_variables_initializer())
        return sess, x, y_, keep, loss, train


def test_cnn_training_step_is_one_cluster_and_matches_the_executor():
    xs = R.uniform(0, 1, (16, 64)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[R.integers(0, 10, 16)]
    losses = []
    for xla in (False, True):
        sess, x, y_, keep, loss, train = _deep_mnist_step(xla)
        feed = {x: xs, y_: ys, keep: 0.5}
        if xla:
            summary = single_cluster(sess, train, feed)
            assert "Conv2DBackpropFilter" in summary and "MaxPoolGrad" in summary
            assert "RandomUniform" in summary   # dropout's mask: drawn on the host, passed in
        losses.append([sess.run([loss, train], feed)[0] for _ in range(5)])
    assert_close(losses[1], losses[0], rtol=1e-4, atol=1e-5)
    assert losses[1][-1] < losses[1][0]


def test_regularizers_add_one_loss_per_variable():
    x = tf.placeholder(tf.float32, [None, 3])

    def reg(w):
        return tf.reduce_sum(w * w)
    tf.layers.dense(x, 2, kernel_regularizer=reg, name="d")
    tf.layers.dense(x, 2, kernel_regularizer=reg, name="d", reuse=True)   # shares, no new loss
    tf.layers.conv2d(tf.placeholder(tf.float32, [None, 4, 4, 1]), 2, 3, kernel_regularizer=reg)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    k = sess.run(tf.get_default_graph().get_tensor_by_name("d/kernel:0"))
    assert_close(sess.run(losses[0]), (k * k).sum(), rtol=1e-6)


def test_unnamed_layers_in_a_reentered_scope_reuse_the_first_entrys_variables():
    """The GAN idiom: discriminator(x) then discriminator(fake, reuse=True), tf.layers
    without names inside: re-entering the scope by name makes them conv2d, conv2d_1 ...
    again (TF closes a scope's default-name counts when it is left)."""
    def disc(x, reuse=False):
        with tf.variable_scope("discriminator", reuse=reuse):
            h = tf.layers.conv2d(x, 2, 3)
            h = tf.layers.conv2d(h, 2, 3)
            return tf.layers.dense(tf.layers.flatten(h), 1)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    a, b = disc(x), disc(x * 2.0, reuse=True)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["discriminator/conv2d/bias", "discriminator/conv2d/kernel",
                     "discriminator/conv2d_1/bias", "discriminator/conv2d_1/kernel",
                     "discriminator/dense/bias", "discriminator/dense/kernel"]
    with tf.variable_scope("other"):
        tf.layers.dense(x[:, 0, 0, :], 1)
        tf.layers.dense(x[:, 0, 0, :], 1)
    assert {"other/dense/kernel", "other/dense_1/kernel"} <= {
        v.op.name for v in tf.global_variables()}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xv = np.ones([1, 8, 8, 1], np.float32)
        av, bv = s.run([a, b], {x: xv})
        assert np.isfinite(av).all() and not np.allclose(av, bv)
