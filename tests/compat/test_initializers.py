"""tf.glorot_normal_initializer, variance_scaling_initializer, orthogonal_initializer,
uniform_unit_scaling_initializer and tf.initializers: variables initialized in a session
have TF's distributions (standard deviations and bounds from TF's fan rules), orthogonal
ones are orthogonal, and tf.initializers.global_variables() initializes them."""

import math

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError


def _values(specs):
    tf.set_random_seed(7)
    vs = {k: tf.get_variable(k, shape, initializer=init) for k, (shape, init) in specs.items()}
    sess = tf.Session()
    sess.run(tf.initializers.global_variables())
    return sess.run(vs)


def test_distributions_follow_tf_fan_rules():
    shape = [3, 3, 40, 60]          # fan_in 360, fan_out 540
    fan_in, fan_out = 360, 540
    got = _values({
        "glorot_normal": (shape, tf.glorot_normal_initializer()),
        "he_normal": (shape, tf.initializers.he_normal()),
        "vs_untrunc_out": (shape, tf.variance_scaling_initializer(
            2.0, "fan_out", "untruncated_normal")),
        "vs_uniform_avg": (shape, tf.initializers.variance_scaling(
            3.0, "fan_avg", "uniform")),
        "lecun_uniform": (shape, tf.initializers.lecun_uniform()),
        "unit_scaling": ([400, 50], tf.uniform_unit_scaling_initializer(1.5)),
        "glorot_uniform": ([400, 50], tf.initializers.glorot_uniform()),
    })
    std = {"glorot_normal": math.sqrt(2.0 / (fan_in + fan_out)),
           "he_normal": math.sqrt(2.0 / fan_in),
           "vs_untrunc_out": math.sqrt(2.0 / fan_out)}
    for k, s in std.items():
        assert abs(got[k].std() / s - 1) < 0.03, (k, got[k].std(), s)
        assert abs(got[k].mean()) < 0.05 * s, k
    # truncated draws stay within two (untruncated) standard deviations of the scale
    assert np.abs(got["he_normal"]).max() <= 2 * math.sqrt(2.0 / fan_in) / 0.87962566 + 1e-6
    assert np.abs(got["vs_untrunc_out"]).max() > 2.5 * std["vs_untrunc_out"]
    bounds = {"vs_uniform_avg": math.sqrt(3 * 3.0 / ((fan_in + fan_out) / 2)),
              "lecun_uniform": math.sqrt(3.0 / fan_in),
              "unit_scaling": math.sqrt(3.0 / 400) * 1.5,
              "glorot_uniform": math.sqrt(6.0 / 450)}
    for k, b in bounds.items():
        assert np.abs(got[k]).max() <= b * (1 + 1e-6), k
        assert np.abs(got[k]).max() > 0.98 * b, k
        assert abs(got[k].std() / (b / math.sqrt(3)) - 1) < 0.05, k


def test_orthogonal_and_simple_initializers():
    got = _values({
        "tall": ([6, 4], tf.orthogonal_initializer(gain=2.0)),
        "wide": ([3, 5], tf.initializers.orthogonal()),
        "conv": ([2, 2, 3, 4], tf.orthogonal_initializer()),
        "zeros": ([2], tf.initializers.zeros()),
        "ones": ([2], tf.initializers.ones()),
        "const": ([2, 2], tf.initializers.constant(3.0)),
        "ident": ([2, 3], tf.initializers.identity(gain=0.5)),
        "rn": ([5000], tf.initializers.random_normal(1.0, 0.5)),
        "tn": ([5000], tf.initializers.truncated_normal(0.0, 0.5)),
    })
    np.testing.assert_allclose(got["tall"].T @ got["tall"], 4 * np.eye(4), atol=1e-5)
    np.testing.assert_allclose(got["wide"] @ got["wide"].T, np.eye(3), atol=1e-5)
    flat = got["conv"].reshape(12, 4)
    np.testing.assert_allclose(flat.T @ flat, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(got["zeros"], [0, 0])
    np.testing.assert_array_equal(got["ones"], [1, 1])
    np.testing.assert_array_equal(got["const"], np.full((2, 2), 3.0))
    np.testing.assert_array_equal(got["ident"], 0.5 * np.eye(2, 3))
    assert abs(got["rn"].mean() - 1.0) < 0.03 and abs(got["rn"].std() - 0.5) < 0.02
    assert np.abs(got["tn"]).max() <= 1.0


def test_local_variables_initializer_alias_and_errors():
    v = tf.Variable(tf.zeros([2]), collections=[tf.GraphKeys.LOCAL_VARIABLES])
    sess = tf.Session()
    sess.run(tf.initializers.local_variables())
    np.testing.assert_array_equal(sess.run(v), [0, 0])
    with pytest.raises(InvalidArgumentError, match="two-dimensional"):
        tf.orthogonal_initializer()([3])
    with pytest.raises(InvalidArgumentError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(InvalidArgumentError, match="floating-point"):
        tf.glorot_normal_initializer(dtype=tf.int32)


def test_contrib_layers_initializers_fully_connected_flatten():
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 2, 3])
    h = tf.contrib.layers.fully_connected(x, 4,
                                          weights_regularizer=tf.contrib.layers.l2_regularizer(
                                              0.5))
    y = tf.contrib.layers.fully_connected(tf.contrib.layers.flatten(h), 2, activation_fn=None,
                                          biases_initializer=None, scope="out")
    assert h.shape.as_list() == [None, 2, 4] and y.shape.as_list() == [None, 2]
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert names == ["fully_connected/biases", "fully_connected/weights", "out/weights"]
    big = {"xavier_u": ([300, 500], tf.contrib.layers.xavier_initializer()),
           "xavier_n": ([300, 500], tf.contrib.layers.xavier_initializer(uniform=False)),
           "vs": ([3, 3, 40, 60], tf.contrib.layers.variance_scaling_initializer())}
    vs = {k: tf.get_variable(k, s, initializer=i) for k, (s, i) in big.items()}
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    xv = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    w, b, w2 = sess.run([tf.get_default_graph().get_tensor_by_name(n + ":0") for n in
                         ("fully_connected/weights", "fully_connected/biases",
                          "out/weights")])
    hv, yv, reg = sess.run([h, y, tf.losses.get_regularization_loss()], {x: xv})
    np.testing.assert_allclose(hv, np.maximum(xv @ w + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yv, hv.reshape(5, 8) @ w2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reg, 0.5 * (w ** 2).sum() / 2, rtol=1e-5)
    got = sess.run(vs)
    lim = math.sqrt(6.0 / 800)
    assert np.abs(got["xavier_u"]).max() <= lim and np.abs(got["xavier_u"]).max() > 0.98 * lim
    # contrib's truncated normal: stddev parameter sqrt(1.3 * factor / n), drawn within 2 of it
    s = math.sqrt(1.3 / 400)
    assert np.abs(got["xavier_n"]).max() <= 2 * s + 1e-6
    assert abs(got["xavier_n"].std() / (s * 0.87962566) - 1) < 0.03
    s = math.sqrt(1.3 * 2.0 / 360)
    assert abs(got["vs"].std() / (s * 0.87962566) - 1) < 0.03
