"""XLA in the session: auto-clustering decisions, no cycles, jit_scope, XLA_CPU placement,
fallback and strict mode, the compile cache, TF_XLA_FLAGS and dumps."""

import logging

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.jit.flags import parse
from xlapy.compat.v1.jit.mark_for_compilation import mark_for_compilation
from xlapy.compat.v1.op_registry import register_op, registered_ops
from xlapy.compat.v1.ops._common import same_as_input

from .conftest import jit_config

# test-only op types: one without an XLA lowering, one whose lowering fails
if "TestNoLowering" not in registered_ops():
    register_op("TestNoLowering", infer=same_as_input(0), lowering=None)(
        lambda m, x: m.multiply(x, x))

    def _broken(m, x):
        raise RuntimeError("this lowering always fails")
    register_op("TestBrokenLowering", infer=same_as_input(0), lowering=_broken)(
        lambda m, x: m.add(x, x))


def _op(op_type, x, name=None):
    return tf.get_default_graph().create_op(op_type, [x], name=name).outputs[0]


def _plan(sess, fetches, feed):
    sess.cluster_summary(fetches, feed)  # builds (and caches) the plan
    return list(sess._plans.values())[-1]


def _clusters_by_op(plan):
    return {op.name: cc.cluster.name for cc in plan.clusters for op in cc.cluster.ops}


def _softmax_regression():
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    w = tf.Variable(tf.zeros([784, 10]), name="W")
    b = tf.Variable(tf.zeros([10]), name="b")
    y = tf.matmul(x, w) + b
    y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return x, y_, w, b, y, train


def _batch(n, rng):
    return (rng.random((n, 784), dtype=np.float32),
            np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)])


def test_whole_training_step_is_one_cluster(rng):
    x, y_, w, b, y, train = _softmax_regression()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    bx, by = _batch(8, rng)
    plan = _plan(sess, train, {x: bx, y_: by})
    assert len(plan.clusters) == 1 and len(plan.steps) == 1
    c = plan.clusters[0].cluster
    assert {t.op.name for t in c.inputs} == {"x", "y_"}
    assert [v.name for v in c.variables] == ["W", "b"] and [v.name for v in c.writes] == ["W", "b"]
    assert {op.type for op in c.ops} >= {"MatMul", "SoftmaxCrossEntropyWithLogits",
                                          "ApplyGradientDescent", "NoOp"}
    assert not plan.clustering.reasons  # every op of the step compiled
    # the same step without XLA gives the same variables
    ref = tf.Session()
    ref.run(tf.global_variables_initializer())
    for _ in range(3):
        bx, by = _batch(8, rng)
        sess.run(train, {x: bx, y_: by})
        ref.run(train, {x: bx, y_: by})
    np.testing.assert_allclose(sess.run(w), ref.run(w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(b), ref.run(b), rtol=1e-5, atol=1e-6)


def test_unknown_batch_compiles_once_per_shape(rng):
    x, y_, w, b, y, train = _softmax_regression()
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    for n in (4, 7, 4, 7, 4):
        sess.run(train, dict(zip((x, y_), _batch(n, rng))))
    cc = _plan(sess, train, {x: 0, y_: 0}).clusters[0]
    assert cc.compiles == 2 and len(cc.cache) == 2


def test_unsupported_ops_stay_in_the_executor_and_no_cycle_is_created(monkeypatch):
    x = tf.placeholder(tf.float32, [4], name="x")
    a = tf.exp(x * 2.0, name="a")                       # clusterable
    p = tf.py_func(lambda v: v + 1, [a], tf.float32, name="py")  # not clusterable
    q = _op("TestNoLowering", a, name="nolower")       # registered without a lowering
    c = tf.add(a * 3.0, p * q, name="c")                # consumes a directly and via py/nolower
    sess = tf.Session(config=jit_config())
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_min_cluster_size=1")
    plan = _plan(sess, c, {x: 0})
    where = _clusters_by_op(plan)
    # merging a's cluster with c's would put the cluster on a cycle through py and nolower
    assert where["a"] != where["c"], where
    assert plan.clustering.reasons[tf.get_default_graph().get_operation_by_name("py")] \
        .startswith("no XLA lowering for op type PyFunc")
    assert "TestNoLowering" in plan.clustering.reasons[
        tf.get_default_graph().get_operation_by_name("nolower")]
    assert plan.clustering.cycle_refusals
    summary = sess.cluster_summary(c, {x: 0})
    assert "not clustered" in summary and "py (PyFunc): no XLA lowering" in summary
    xv = np.arange(4, dtype=np.float32) / 4
    av = np.exp(xv * 2)
    np.testing.assert_allclose(sess.run(c, {x: xv}), av * 3 + (av + 1) * av * av, rtol=1e-6)


def test_clusters_are_convex_on_random_graphs():
    """Property: no path leaves a cluster and comes back (the contracted graph is a DAG)."""
    rng = np.random.default_rng(5)
    for trial in range(25):
        tf.reset_default_graph()
        ts = [tf.placeholder(tf.float32, [3])]
        for _ in range(30):
            k = int(rng.integers(1, 3))
            ins = [ts[int(j)] for j in rng.integers(max(0, len(ts) - 6), len(ts), k)]
            if rng.random() < 0.25:
                ts.append(_op("TestNoLowering", ins[0]))
            elif k == 2:
                ts.append(tf.add(ins[0], ins[1]))
            else:
                ts.append(tf.exp(ins[0]))
        ops = [t.op for t in ts[1:]]
        preds = {op: [t.op for t in op.inputs if t.op in ops] for op in ops}
        res = mark_for_compilation(ops, preds, True, set(), min_size=1)
        of = {op: i for i, c in enumerate(res.clusters) for op in c}
        succ = {op: [c for t in op.outputs for c in t._consumers] for op in ops}
        for i, cluster in enumerate(res.clusters):
            # from every member, walk out of the cluster; must never re-enter it
            stack = [s for op in cluster for s in succ[op] if of.get(s) != i]
            seen = set()
            while stack:
                op = stack.pop()
                assert of.get(op) != i, f"trial {trial}: cluster {i} is on a cycle"
                if op not in seen:
                    seen.add(op)
                    stack.extend(succ[op])


def test_min_cluster_size_and_strict_mode(monkeypatch):
    x = tf.placeholder(tf.float32, [3])
    y = tf.exp(x) * 2.0
    sess = tf.Session(config=jit_config())
    plan = _plan(sess, y, {x: 0})
    assert not plan.clusters
    assert "fewer than --tf_xla_min_cluster_size=4" in sess.cluster_summary(y, {x: 0})
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=2")
    assert len(_plan(tf.Session(), y, {x: 0}).clusters) == 1  # auto-jit from the flag alone
    z = tf.py_func(lambda v: v, [y], tf.float32)
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_strict")
    with pytest.raises(UnimplementedError, match="strict.*PyFunc"):
        tf.Session().run(z, {x: np.ones(3, np.float32)})
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=-1")  # forces off
    assert not _plan(tf.Session(config=jit_config()), y, {x: 0}).clusters


def test_jit_scope_marks_ops_and_their_gradients():
    jit_scope = tf.contrib.compiler.jit.experimental_jit_scope
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(tf.ones([3, 2]), name="w")
    with jit_scope():
        h = tf.nn.relu(tf.matmul(x, w), name="h")
    with jit_scope():
        out = tf.reduce_sum(h * h, name="out")
    plain = tf.identity(out, name="plain")
    (gw,) = tf.gradients(plain, [w])
    assert h.op.get_attr("_XlaCompile") is True and "_XlaCompile" not in plain.op.attr
    assert gw.op.get_attr("_XlaCompile") is True  # gradient ops inherit the scope
    sess = tf.Session()  # no global jit: only scoped ops compile, without a minimum size
    sess.run(w.initializer)
    plan = _plan(sess, [plain, gw], {x: 0})
    where = _clusters_by_op(plan)
    assert where["h"] != where["out"]  # two scopes, two clusters
    assert "plain" not in where and "x" not in where
    xv = np.array([[1, -2, 3], [0.5, 0.5, -4]], np.float32)
    hv = np.maximum(xv @ np.ones((3, 2)), 0)
    o, g = sess.run([plain, gw], {x: xv})
    np.testing.assert_allclose(o, (hv * hv).sum(), rtol=1e-6)
    np.testing.assert_allclose(g, xv.T @ (2 * hv * (hv > 0)), rtol=1e-5)
    with jit_scope(compile_ops=False):
        off = tf.exp(x, name="off")
    with jit_scope(compile_ops=lambda node_def: node_def.type == "Exp"):
        picked = tf.exp(tf.negative(x, name="neg"), name="picked")
    assert off.op.get_attr("_XlaCompile") is False
    assert picked.op.get_attr("_XlaCompile") is True
    assert picked.op.inputs[0].op.get_attr("_XlaCompile") is False
    auto = tf.Session(config=jit_config())
    reasons = _plan(auto, off, {x: 0}).clustering.reasons
    assert any(op.name == "off" and "_XlaCompile=False" in why for op, why in reasons.items())


def test_best_effort_fallback_and_xla_device_failures(caplog):
    jit_scope = tf.contrib.compiler.jit.experimental_jit_scope
    x = tf.placeholder(tf.float32, [3])
    with jit_scope():
        y = _op("TestBrokenLowering", x * 2.0) + 1.0
    sess = tf.Session()
    with caplog.at_level(logging.WARNING, logger="xlapy.compat.v1.jit"):
        np.testing.assert_array_equal(sess.run(y, {x: np.ones(3, np.float32)}), [5, 5, 5])
    assert "this lowering always fails" in caplog.text and "executor instead" in caplog.text
    with tf.device("/device:XLA_CPU:0"):
        z = _op("TestBrokenLowering", x * 2.0)
    with pytest.raises(InvalidArgumentError, match="XLA compilation of cluster_.*failed"):
        sess.run(z, {x: np.ones(3, np.float32)})
    with tf.device("/device:XLA_CPU:0"):
        p = tf.py_func(lambda v: v, [x], tf.float32)
    with pytest.raises(UnimplementedError, match="No registered 'PyFunc' OpKernel for "
                                                 "XLA_CPU_JIT devices"):
        sess.run(p, {x: np.ones(3, np.float32)})
    soft = tf.Session(config=tf.ConfigProto(allow_soft_placement=True))
    np.testing.assert_array_equal(soft.run(p, {x: np.ones(3, np.float32)}), [1, 1, 1])
    assert "soft placement" in soft.cluster_summary(p, {x: 0})


def test_xla_cpu_placement_compiles_and_matches():
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.device("/job:localhost/replica:0/task:0/device:XLA_CPU:0"):
        y = tf.nn.softmax(x * 3.0)
    z = y + 1.0  # on the CPU device: not compiled
    sess = tf.Session()
    plan = _plan(sess, z, {x: 0})
    assert len(plan.clusters) == 1
    assert plan.clusters[0].cluster.device.endswith("XLA_CPU:0")
    assert all(op.type != "Add" for op in plan.clusters[0].cluster.ops)
    xv = np.random.default_rng(1).random((5, 4), dtype=np.float32)
    e = np.exp(3 * xv - (3 * xv).max(1, keepdims=True))
    np.testing.assert_allclose(sess.run(z, {x: xv}), e / e.sum(1, keepdims=True) + 1, rtol=1e-6)


def test_compile_time_constant_inputs_key_the_cache():
    x = tf.placeholder(tf.float32, [None])
    shape = tf.py_func(lambda v: np.array([2, v.size // 2], np.int32), [x], tf.int32)
    with tf.device("/device:XLA_CPU:0"):
        y = tf.reshape(x, shape) * 2.0
    sess = tf.Session()
    for n in (4, 6, 4):
        v = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(sess.run(y, {x: v}), (v * 2).reshape(2, -1))
    cc = _plan(sess, y, {x: 0}).clusters[0]
    assert cc.cluster.const_inputs == [1] and cc.compiles == 2


def test_tf_xla_flags_parsing_and_dumps(tmp_path, monkeypatch, caplog):
    f = parse("--tf_xla_auto_jit=single-gpu(2) --tf_xla_clustering_debug "
              "--tf_xla_min_cluster_size=3 --xla_dump_to=/tmp/d")
    assert (f.auto_jit, f.clustering_debug, f.min_cluster_size) == (2, True, 3)
    assert f.xla_flags == ("--xla_dump_to=/tmp/d",)
    with pytest.raises(InvalidArgumentError, match="unknown flag --tf_xla_bogus"):
        parse("--tf_xla_bogus=1")
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.reduce_sum(tf.exp(x) * 2.0 + 1.0, axis=1) - 3.0
    monkeypatch.setenv("TF_XLA_FLAGS", f"--tf_xla_auto_jit=1 --tf_xla_clustering_debug "
                                       f"--xla_dump_to={tmp_path / 'hlo'} --xla_dump_hlo_as_text")
    monkeypatch.setenv("TF_DUMP_GRAPH_PREFIX", str(tmp_path / "clusters"))
    with caplog.at_level(logging.WARNING, logger="xlapy.compat.v1.jit"):
        tf.Session().run(y, {x: np.ones((2, 3), np.float32)})
    assert "XLA clustering: 1 cluster(s)" in caplog.text
    dumped = sorted(p.name for p in (tmp_path / "hlo").iterdir())
    assert any("cluster_0" in n and n.endswith("before_optimizations.txt") for n in dumped)
    assert (tmp_path / "clusters" / "cluster_0.0.hlo.txt").read_text().startswith("HloModule")


def test_compiled_module_texts_are_printed_when_read():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(tf.exp(x) * 2.0 + 1.0, axis=1) - 3.0
    sess = tf.Session(config=jit_config())
    feed = {x: np.ones((2, 3), np.float32)}
    for _ in range(2):  # (lazy compilation: the second run compiles)
        sess.run(y, feed)
    cc = list(sess._plans.values())[-1].clusters[0]
    texts = cc.modules
    assert len(texts) == 1 and not isinstance(texts._items[0], str)  # not printed yet
    module = texts._items[0]
    text = texts[0]
    assert text.startswith("HloModule") and text == module.to_string()
    assert texts._items[0] is text  # printed once, then kept
    assert texts[-1] is text and texts[:] == [text] and list(texts) == [text]
    sess.run(y, {x: np.ones((4, 3), np.float32)})  # a new signature: a second module
    sess.run(y, {x: np.ones((4, 3), np.float32)})
    assert len(cc.modules) == 2 and "f32[4,3]" in cc.modules[1]


def test_a_const_input_computed_from_data_splits_the_cluster(caplog):
    """A Slice whose size is computed from run-time data in the same graph region: its
    producer and the Slice go to different clusters (the size enters the Slice's cluster
    as a compile-time constant), and both compile; a size from static shapes folds."""
    x = tf.placeholder(tf.float32, [6, 3])
    n = tf.reduce_sum(tf.cast(tf.reduce_sum(x, 1) > 0, tf.int32))
    y = tf.tanh(x * 2.0 + 1.0)
    head = tf.slice(y, [0, 0], tf.stack([n, -1]))
    static = tf.slice(y, [0, 0], tf.stack([tf.shape(x)[0] - 1, -1]))
    out = [tf.reduce_sum(head * head), tf.reduce_sum(static), head]
    xv = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)
    sess = tf.Session(config=jit_config())
    summary = sess.cluster_summary(out, {x: xv})
    assert summary.startswith("XLA clustering: 2 cluster(s)"), summary
    with caplog.at_level(logging.WARNING, logger="xlapy.compat.v1.jit"):
        a, b, h = sess.run(out, {x: xv})
    assert "executor instead" not in caplog.text
    want = np.tanh(xv * 2 + 1)
    k = int((xv.sum(1) > 0).sum())
    assert h.shape == (k, 3)
    np.testing.assert_allclose(a, (want[:k] ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(b, want[:5].sum(), rtol=1e-5)
