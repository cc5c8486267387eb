"""tf.while_loop, tf.cond, tf.case, map_fn, scan, foldl/foldr: values and gradients against
JAX, in the executor and compiled (one HLO while loop / conditional inside the cluster)."""

import collections
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (InvalidArgumentError, InvalidTypeError,
                                    UnimplementedError)

from .conftest import jit_config
from .helpers import assert_close, run_both, single_cluster

R = np.random.default_rng(5)
XV = R.uniform(-1, 1, 3).astype(np.float32)
WV = np.array([0.5, -1.0, 1.5], np.float32)


def _recurrence(max_iter):
    x = tf.placeholder(tf.float32, [3], name="x")
    w = tf.Variable(WV, name="w")
    n, h = tf.while_loop(lambda i, h: i < 4, lambda i, h: (i + 1, tf.tanh(h * w + x)),
                         [tf.constant(0), x], maximum_iterations=max_iter)
    loss = tf.reduce_sum(h * h)
    gx, gw = tf.gradients(loss, [x, w])
    return x, [n, h, loss, gx, gw]


def _jax_recurrence(x, w):
    h = x
    for _ in range(4):
        h = jnp.tanh(h * w + x)
    return jnp.sum(h * h)


_JAX_RECURRENCE = jax.jit(lambda x, w: (_jax_recurrence(x, w),
                                         *jax.grad(_jax_recurrence, (0, 1))(x, w)))


def test_while_loop_values_and_gradients_executor_and_xla():
    def build():
        x, f = _recurrence(10)
        return f, {x: XV}
    ex, xl, sess, fetches, feed = run_both(build)
    loss, gx, gw = _JAX_RECURRENCE(XV, WV)
    for got in (ex, xl):
        assert got[0] == 4
        assert_close(got[2], loss, rtol=1e-5)
        assert_close(got[3:], [gx, gw], rtol=1e-4, atol=1e-6)
    summary = single_cluster(sess, fetches, feed)
    assert "While" in summary and "WhileGrad" in summary
    plan = list(sess._plans.values())[-1]
    hlo = plan.clusters[0].modules[0]
    assert hlo.count(" while(") >= 2  # the forward and the backward loop, not unrolled


def test_while_grad_without_maximum_iterations_falls_back_under_xla(caplog):
    x, f = _recurrence(None)
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    with caplog.at_level(logging.WARNING, logger="xlapy.compat.v1.jit"):
        got = sess.run(f, {x: XV})
    assert "maximum_iterations" in caplog.text and "executor instead" in caplog.text
    assert_close(got[3:], _JAX_RECURRENCE(XV, WV)[1:], rtol=1e-4, atol=1e-6)


Pair = collections.namedtuple("Pair", "a b")


def test_while_loop_structures_and_limits():
    x = tf.placeholder(tf.float32, [2])
    # a namedtuple and a dict as loop variables, structure kept
    out = tf.while_loop(lambda a, b: a[0] < 10.0, lambda a, b: Pair(a * 2.0, b + 1),
                        Pair(x, tf.constant(0)))
    assert isinstance(out, Pair)
    d = tf.while_loop(lambda s: s["k"] < 3, lambda s: [{"k": s["k"] + 1, "v": s["v"] * x}],
                      [{"k": tf.constant(0), "v": tf.ones([2])}], return_same_structure=True)
    assert isinstance(d, list) and set(d[0]) == {"k", "v"}
    # a single tensor (or a list of one) comes back as a tensor; maximum_iterations stops it
    single = tf.while_loop(lambda v: v < 100, lambda v: v + 1, tf.constant(0),
                           maximum_iterations=7)
    one = tf.while_loop(lambda v: v < 5, lambda v: [v + 2], [tf.constant(0)])
    # growing shapes need a shape invariant (executor)
    grow = tf.while_loop(lambda v: tf.size(v) < 5, lambda v: tf.concat([v, v[:1]], 0),
                         [tf.constant([1.0])], shape_invariants=[tf.TensorShape([None])])
    sess = tf.Session()
    p, dv, s, o, g = sess.run([out, d, single, one, grow], {x: [1.5, 2.0]})
    assert_close(p.a, [12.0, 16.0])
    assert p.b == 3
    assert dv[0]["k"] == 3
    assert_close(dv[0]["v"], [1.5 ** 3, 8.0])
    assert s == 7 and o == 6
    assert_close(g, np.ones(5, np.float32))
    assert grow.shape.as_list() == [None]


def test_while_loop_errors():
    with pytest.raises(InvalidArgumentError, match="enters the loop with shape"):
        tf.while_loop(lambda v: tf.size(v) < 5, lambda v: tf.concat([v, v], 0),
                      [tf.constant([1.0])])
    with pytest.raises(InvalidTypeError, match="enters the loop with type int32"):
        tf.while_loop(lambda v: v < 5, lambda v: tf.cast(v, tf.float32), [tf.constant(0)])
    with pytest.raises(InvalidArgumentError, match="boolean scalar"):
        tf.while_loop(lambda v: v, lambda v: v + 1, [tf.constant(0)])
    with pytest.raises(InvalidArgumentError, match="structure of loop_vars"):
        tf.while_loop(lambda a, b: a < 5, lambda a, b: a + 1, [tf.constant(0), tf.constant(1)])
    v = tf.Variable(1.0)
    with pytest.raises(UnimplementedError, match="updates variable"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.identity(i + tf.cast(
            tf.assign(v, 2.0) > 0, tf.int32)), [tf.constant(0)])


def test_nested_loops_capture_through_levels_and_differentiate():
    def build():
        x = tf.placeholder(tf.float32, [3])

        def outer(i, acc):
            def inner(j, a):
                return j + 1, a + tf.sin(x * tf.cast(j + i, tf.float32))
            _, s = tf.while_loop(lambda j, a: j < 3, inner, [tf.constant(0), acc],
                                 maximum_iterations=3)
            return i + 1, s * 0.5
        _, y = tf.while_loop(lambda i, a: i < 2, outer, [tf.constant(0), x],
                             maximum_iterations=2)
        loss = tf.reduce_sum(y * y)
        return [loss, tf.gradients(loss, x)[0]], {x: XV}
    ex, xl, sess, fetches, feed = run_both(build)

    def ref(x):
        acc = x
        for i in range(2):
            for j in range(3):
                acc = acc + jnp.sin(x * (i + j))
            acc = acc * 0.5
        return jnp.sum(acc * acc)
    for got in (ex, xl):
        assert_close(got[0], ref(XV), rtol=1e-5)
        assert_close(got[1], jax.jit(jax.grad(ref))(XV), rtol=1e-4, atol=1e-6)
    single_cluster(sess, fetches, feed)


def test_cond_and_case_values_and_gradients():
    def build():
        x = tf.placeholder(tf.float32, [3])
        p = tf.placeholder(tf.bool, [])
        w = tf.Variable(WV)
        y = tf.cond(p, lambda: tf.exp(x) * w, lambda: x - w * w)
        k = tf.placeholder(tf.int32, [])
        c = tf.case([(tf.equal(k, 0), lambda: x * 2.0), (tf.equal(k, 1), lambda: x * 3.0)],
                    default=lambda: -x)
        loss = tf.reduce_sum(y * y) + tf.reduce_sum(c)
        return [y, c] + tf.gradients(loss, [x, w]), {x: XV, p: True, k: 1}
    ex, xl, sess, fetches, feed = run_both(build)

    def ref(x, w):
        return jnp.sum((jnp.exp(x) * w) ** 2) + jnp.sum(x * 3.0)
    for got in (ex, xl):
        assert_close(got[0], np.exp(XV) * WV, rtol=1e-6)
        assert_close(got[1], XV * 3.0)
        assert_close(got[2:], jax.jit(jax.grad(ref, (0, 1)))(XV, WV), rtol=1e-5, atol=1e-6)
    single_cluster(sess, fetches, feed)
    # the other branches, same session (a feed, not a new compile)
    p_, k_ = [t for t in feed if t.dtype in (tf.bool, tf.int32)]
    x_ = next(t for t in feed if t.dtype == tf.float32)
    y_, c_, gx, gw = sess.run(fetches, {x_: XV, p_: False, k_: 7})
    assert_close(y_, XV - WV * WV)
    assert_close(c_, -XV)
    assert_close(gw, -4 * WV * (XV - WV * WV), rtol=1e-5)


def test_cond_errors_and_structure():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(InvalidTypeError, match="must not be a Python bool"):
        tf.cond(True, lambda: x, lambda: x)
    with pytest.raises(InvalidTypeError, match="same type"):
        tf.cond(x[0] > 0, lambda: x, lambda: tf.constant([1, 2]))
    with pytest.raises(InvalidArgumentError, match="same nested structure"):
        tf.cond(x[0] > 0, lambda: (x, x), lambda: x)
    a, b = tf.cond(x[0] > 0, lambda: (x, x * 2), lambda: (x * 3, x))
    single = tf.cond(x[0] > 0, lambda: [x], lambda: [x * 2])  # unpacked unless strict
    strict = tf.cond(x[0] > 0, lambda: [x], lambda: [x * 2], strict=True)
    assert isinstance(single, tf.Tensor) and isinstance(strict, list)
    sess = tf.Session()
    assert_close(sess.run([a, b]), [[1.0, 2.0], [2.0, 4.0]])


def test_map_fn_scan_fold_values_and_gradients():
    E = R.uniform(-1, 1, (4, 3)).astype(np.float32)

    def build():
        e = tf.placeholder(tf.float32, [None, 3])
        m = tf.map_fn(lambda r: tf.reduce_sum(r * r), e)
        m2 = tf.map_fn(lambda r: (r * 2.0, tf.cast(tf.argmax(r), tf.int32)), e,
                       dtype=(tf.float32, tf.int32))
        s = tf.scan(lambda a, r: a * 0.5 + r, e, initializer=tf.zeros([3]))
        s0 = tf.scan(lambda a, r: a + r, e)                      # starts from e[0]
        sr = tf.scan(lambda a, r: a * r, e, reverse=True)
        fl = tf.foldl(lambda a, r: a * 0.5 + r, e, initializer=tf.zeros([3]))
        fr = tf.foldr(lambda a, r: a * 0.5 + r, e, initializer=tf.zeros([3]))
        loss = tf.reduce_sum(m) + tf.reduce_sum(s * s) + tf.reduce_sum(sr) + tf.reduce_sum(fr)
        return [m, m2, s, s0, sr, fl, fr, tf.gradients(loss, e)[0]], {e: E}
    ex, xl, sess, fetches, feed = run_both(build)

    def scan_ref(f, init, xs, reverse=False):
        out, a = [], init
        for r in (xs[::-1] if reverse else xs):
            a = f(a, r)
            out.append(a)
        out = jnp.stack(out)
        return out[::-1] if reverse else out

    def loss_ref(e):
        s = scan_ref(lambda a, r: a * 0.5 + r, jnp.zeros(3), e)
        sr = jnp.concatenate([scan_ref(lambda a, r: a * r, e[-1], e[:-1], True), e[-1:]])
        fr = scan_ref(lambda a, r: a * 0.5 + r, jnp.zeros(3), e, True)[0]
        return jnp.sum(e * e) + jnp.sum(s * s) + jnp.sum(sr) + jnp.sum(fr)
    s_ref = np.asarray(scan_ref(lambda a, r: a * 0.5 + r, np.zeros(3, np.float32), E))
    for got in (ex, xl):
        assert_close(got[0], (E * E).sum(1), rtol=1e-6)
        assert_close(got[1], (E * 2, E.argmax(1).astype(np.int32)))
        assert_close(got[2], s_ref, rtol=1e-6)
        assert_close(got[3], np.cumsum(E, 0), rtol=1e-6)
        assert_close(got[4], np.cumprod(E[::-1], 0)[::-1], rtol=1e-6)
        assert_close(got[5], s_ref[-1], rtol=1e-6)
        assert_close(got[6], np.asarray(scan_ref(lambda a, r: a * 0.5 + r,
                                                 np.zeros(3, np.float32), E, True))[0])
        assert_close(got[7], jax.jit(jax.grad(loss_ref))(E), rtol=1e-4, atol=1e-6)
    summary = sess.cluster_summary(fetches, feed)
    assert "While x4" in summary and "WhileGrad x4" in summary, summary  # the loss's loops


def test_random_op_in_loop_body_runs_in_executor_and_gradient_reuses_its_values():
    """The gradient reads the forward pass's dropout mask (stacked by the forward loop),
    it does not draw a new one."""
    xs = tf.placeholder(tf.float32, [6, 50])
    c = tf.constant(R.uniform(1, 2, 50).astype(np.float32))
    _, acc = tf.while_loop(lambda i, a: i < 6,
                           lambda i, a: (i + 1, a + tf.nn.dropout(xs[i], keep_prob=0.5)),
                           [tf.constant(0), tf.zeros([50])], maximum_iterations=6)
    g = tf.gradients(tf.reduce_sum(acc * c), xs)[0]
    sess = tf.Session(config=jit_config())
    xv = R.uniform(1, 2, (6, 50)).astype(np.float32)
    summary = sess.cluster_summary([acc, g], {xs: xv})
    assert "an op it calls (in a loop body or cond branch) has no XLA lowering" in summary
    av, gv = sess.run([acc, g], {xs: xv})
    mask = gv / (2.0 * c.op.get_attr("value"))     # d acc / d x = mask / keep_prob
    assert set(np.unique(np.round(mask, 5))) <= {0.0, 1.0} and 0 < mask.mean() < 1
    assert_close(av, (2.0 * mask * xv).sum(0), rtol=1e-5)


def test_variables_made_in_a_loop_body_live_in_the_outer_graph():
    x = tf.placeholder(tf.float32, [2])

    def body(i, h):
        with tf.variable_scope("cell", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        return i + 1, h * w + 1.0
    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), x])
    (w,) = tf.global_variables()
    assert w.name == "cell/w:0" and w.graph is tf.get_default_graph()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    assert_close(sess.run(h, {x: [0.0, 1.0]}), [3.0, 4.0])


def test_cond_inside_while_and_jit_scope():
    """A cond in a loop body (its gradient inside the loop's gradient), compiled through
    jit_scope instead of auto-jit: the scope's attributes reach the While and, through
    tf.gradients, the WhileGrad."""
    x = tf.placeholder(tf.float32, [3])
    with tf.contrib.compiler.jit.experimental_jit_scope():
        def body(i, h):
            h2 = tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(h) * x, lambda: h * h + x)
            return i + 1, h2
        _, h = tf.while_loop(lambda i, h: i < 4, body, [tf.constant(0), x],
                             maximum_iterations=4)
        loss = tf.reduce_sum(h)
    (g,) = tf.gradients(loss, x)
    sess = tf.Session()
    summary = single_cluster(sess, [loss, g], {x: XV})
    assert "While" in summary and "WhileGrad" in summary

    def ref(v):
        a = v
        for i in range(4):
            a = jnp.sin(a) * v if i % 2 == 0 else a * a + v
        return jnp.sum(a)
    lv, gv = sess.run([loss, g], {x: XV})
    assert_close(lv, ref(XV), rtol=1e-5)
    assert_close(gv, jax.jit(jax.grad(ref))(XV), rtol=1e-5)
