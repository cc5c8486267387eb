"""Lazy compilation (TF's default, --tf_xla_enable_lazy_compilation): a cluster runs the
first execution of a signature on the executor and compiles on the second; clusters that
must compile (XLA_CPU placement) compile at once."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.jit import flags
from xlapy.compat.v1.python.client import timeline

from .conftest import jit_config


@pytest.fixture
def lazy(monkeypatch):
    monkeypatch.setattr(flags, "LAZY_DEFAULT", True)  # the default outside the tests


def _plan(sess, fetches, feed):
    sess.cluster_summary(fetches, feed)
    return list(sess._plans.values())[-1]


def _model():
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    w = tf.Variable(np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3), name="w")
    loss = tf.reduce_mean(tf.square(tf.nn.tanh(tf.matmul(x, w)) - 0.5))
    train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
    return x, w, loss, train


def _train(config, batches):
    """(losses, final weights) of training on the batches."""
    tf.reset_default_graph()
    x, w, loss, train = _model()
    sess = tf.Session(config=config)
    sess.run(tf.global_variables_initializer())
    losses = [sess.run([train, loss], {x: b})[1] for b in batches]
    return np.array(losses), sess.run(w)


def test_first_run_on_the_executor_then_compiled(lazy):
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((5, 6)).astype(np.float32) for _ in range(4)]
    ref_losses, ref_w = _train(tf.ConfigProto(), batches)
    x, w, loss, train = _model()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    cc = _plan(sess, [train, loss], {x: batches[0]}).clusters[0]
    counts = []
    for b in batches:
        sess.run([train, loss], {x: b})
        counts.append(cc.compiles)
    assert counts == [0, 1, 1, 1]
    # the same training as the executor's, whichever ran each step
    losses, w_lazy = _train(jit_config(), batches)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    np.testing.assert_allclose(w_lazy, ref_w, rtol=1e-5, atol=1e-6)


def test_each_signature_counts_its_own_runs(lazy):
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.reduce_sum(tf.exp(x) * 2.0 + 1.0, axis=1)
    sess = tf.Session(config=jit_config())
    cc = _plan(sess, y, {x: 0}).clusters[0]
    seen = []
    for n in (3, 5, 3, 5, 5):
        v = np.arange(n * 4, dtype=np.float32).reshape(n, 4) / 10
        np.testing.assert_allclose(sess.run(y, {x: v}), (np.exp(v) * 2 + 1).sum(1), rtol=1e-6)
        seen.append(cc.compiles)
    assert seen == [0, 0, 1, 2, 2]


def test_a_cluster_run_once_is_never_compiled(lazy):
    x, w, loss, train = _model()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    v = np.ones((2, 6), np.float32)
    assert np.isfinite(sess.run(loss, {x: v}))
    assert _plan(sess, loss, {x: v}).clusters[0].compiles == 0


def test_flag_turns_it_off_and_xla_devices_compile_at_once(lazy, monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_enable_lazy_compilation=false")
    x, w, loss, train = _model()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: np.ones((2, 6), np.float32)})
    assert _plan(sess, train, {x: 0}).clusters[0].compiles == 1

    monkeypatch.delenv("TF_XLA_FLAGS")
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.device("/device:XLA_CPU:0"):
        y = tf.nn.softmax(x * 3.0)
    sess = tf.Session()
    sess.run(y, {x: np.ones((2, 4), np.float32)})
    assert _plan(sess, y, {x: 0}).clusters[0].compiles == 1


def test_the_timeline_shows_the_compile_on_the_second_run(lazy):
    x, w, loss, train = _model()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    names = []
    for _ in range(3):
        md = tf.RunMetadata()
        sess.run(train, {x: np.ones((2, 6), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        trace = timeline.Timeline(md.step_stats).generate_chrome_trace_format()
        names.append([n for n in ("_XlaCompile", "_XlaLaunch") if n in trace])
    assert names == [["_XlaLaunch"], ["_XlaCompile", "_XlaLaunch"], ["_XlaLaunch"]]


def test_bad_flag_value():
    with pytest.raises(InvalidArgumentError, match="tf_xla_enable_lazy_compilation takes"):
        flags.parse("--tf_xla_enable_lazy_compilation=maybe")
    assert flags.parse("--tf_xla_enable_lazy_compilation=0").lazy_compilation is False
    assert flags.parse("").lazy_compilation is None


def test_a_compiled_only_plans_executor_run_keeps_64_bit_types(lazy):
    # a plan of compiled clusters runs its native code without turning jax_enable_x64 on
    # (session.run); the lazy first run of a cluster's ops on the executor turns it on, so
    # that a kernel using xlapy's frontend (LRNGrad: by vjp) keeps float64
    tf.reset_default_graph()
    x = tf.placeholder(tf.float64, [2, 3, 3, 6])
    y = tf.nn.lrn(x, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)
    g = tf.gradients(tf.reduce_sum(y * y), x)[0]
    xv = np.random.default_rng(0).standard_normal((2, 3, 3, 6))
    with tf.Session() as sess:
        want = sess.run(g, {x: xv})
    with tf.Session(config=jit_config()) as sess:
        got = [sess.run(g, {x: xv}) for _ in range(3)]
        plan = _plan(sess, g, {x: xv})
        assert plan.compiled_only and plan.clusters[0].compiles == 1
    for out in got:  # the executor's run, the compiling one, a compiled one
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-14)
