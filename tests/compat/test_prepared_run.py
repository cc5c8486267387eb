"""Session.run's prepared runs: a repeated run(fetches, {tensor: value}) skips resolving its
fetches and feeds and finding its plan, and must behave exactly as the first run did."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, SessionClosedError

from .conftest import jit_config


def _graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    k = tf.placeholder(tf.int32, [], name="k")
    y = tf.reduce_sum(x * x, axis=1) * tf.cast(k, tf.float32)
    return x, k, y


def test_repeated_runs_check_every_feed():
    x, k, y = _graph()
    sess = tf.Session()
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):  # the second run is the prepared one
        np.testing.assert_array_equal(sess.run(y, {x: v, k: 2}), (v * v).sum(1) * 2)
    assert len(sess._fast) == 1
    with pytest.raises(InvalidArgumentError, match=r"shape \(2, 4\).*'\(\?, 3\)'"):
        sess.run(y, {x: np.zeros((2, 4), np.float32), k: 2})
    with pytest.raises(InvalidArgumentError, match="Cannot feed value of dtype float64"):
        sess.run(y, {x: v, k: np.float64(2.5)})
    with pytest.raises(InvalidTypeError, match="cannot be a tf.Tensor"):
        sess.run(y, {x: y, k: 2})
    # as the first run: every value's type is checked before any value's dtype and shape
    with pytest.raises(InvalidTypeError, match=r"feeding k:0"):
        sess.run(y, {x: np.zeros((2, 4), np.float32), k: y})
    # another batch, a list, a float64 array (converted), an array changed in place
    w = np.ones((5, 3), np.float32)
    np.testing.assert_array_equal(sess.run(y, {x: w, k: 1}), np.full(5, 3, np.float32))
    np.testing.assert_array_equal(sess.run(y, {x: [[1, 2, 3]], k: 1}), [14])
    np.testing.assert_array_equal(sess.run(y, {x: v.astype(np.float64), k: 1}), (v * v).sum(1))
    w[0] = 2
    np.testing.assert_array_equal(sess.run(y, {x: w, k: 1}), [12, 3, 3, 3, 3])
    assert len(sess._fast) == 1  # all the same prepared run


def test_prepared_runs_keep_the_fetch_structure():
    x, k, y = _graph()
    z = tf.reduce_sum(y, name="z")
    noop = tf.no_op()
    sess = tf.Session()
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(3):
        out_list = sess.run([y, z, noop], {x: v, k: 1})
        out_tuple = sess.run((z, y), {x: v, k: 1})
        assert sess.run(noop, {x: v, k: 1}) is None
        assert sess.run(z, {x: v, k: 1}) == 55.0
        assert isinstance(out_list, list) and out_list[2] is None
        assert isinstance(out_tuple, tuple) and out_tuple[0] == 55.0
        np.testing.assert_array_equal(out_list[0], (v * v).sum(1))
    # the order of the feed keys is part of the key: the other order is right too
    np.testing.assert_array_equal(sess.run(y, {k: 3, x: v}), (v * v).sum(1) * 3)
    # names as keys take the general path every time
    np.testing.assert_array_equal(sess.run(y, {"x:0": v, "k:0": 3}), (v * v).sum(1) * 3)
    assert len(sess._fast) == 5


def test_a_closed_session_refuses_a_prepared_run():
    x, k, y = _graph()
    sess = tf.Session()
    feed = {x: np.ones((1, 3), np.float32), k: 1}
    sess.run(y, feed)
    sess.run(y, feed)
    sess.close()
    with pytest.raises(SessionClosedError):
        sess.run(y, feed)


def test_the_jit_flags_select_the_prepared_run(monkeypatch):
    x, k, y = _graph()
    sess = tf.Session()
    feed = {x: np.ones((2, 3), np.float32), k: 2}
    want = sess.run(y, feed)
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=1 "
                                       "--tf_xla_enable_lazy_compilation=false")
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(y, feed), want)
    plans = [p for p in sess._plans.values() if p.clusters]
    assert len(plans) == 1 and plans[0].clusters[0].compiles == 1
    assert len(sess._fast) == 2


def test_a_compiled_step_switches_programs_with_the_batch(rng):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.ones((4, 2), np.float32))
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess, ref = tf.Session(config=jit_config()), tf.Session()
    for s in (sess, ref):
        s.run(tf.global_variables_initializer())
    for n in (3, 3, 3, 5, 5, 3, 5):
        bx = rng.standard_normal((n, 4)).astype(np.float32)
        sess.run(train, {x: bx})
        ref.run(train, {x: bx})
        np.testing.assert_allclose(sess.run(w), ref.run(w), rtol=1e-5, atol=1e-6)
    cc = [p for p in sess._plans.values() if p.clusters][0].clusters[0]
    assert cc.compiles == 2 and len(cc.cache) == 2
