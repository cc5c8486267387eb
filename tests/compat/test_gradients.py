"""tf.gradients against central finite differences, for every op with a gradient, in the
executor and compiled (the whole table as one XLA cluster). Cases marked dynamic feed
placeholders whose dimensions are unknown, which exercises the run-time shape ops of the
gradients (Shape, BroadcastGradientArgs, ReducedShape, Size ...)."""

import contextlib

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.gradients import LookupGradientError

R = np.random.default_rng(3)


def a(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape)


def pos(*shape):
    return R.uniform(0.5, 2.0, shape)


def _softmax_labels(n, k):
    lab = R.uniform(0.1, 1.0, (n, k))
    return lab / lab.sum(1, keepdims=True)


# name: (builder, inputs, dynamic); every input is differentiated
CASES = {
    "add_bcast": (tf.add, [a(2, 3), a(3)], False),
    "add_bcast_dyn": (tf.add, [a(2, 3), a(2, 1)], True),
    "add_outer": (tf.add, [a(2, 1), a(1, 3)], False),
    "sub": (tf.subtract, [a(2, 3), a(2, 3)], True),
    "mul_bcast": (tf.multiply, [a(2, 3), a(1, 3)], False),
    "div": (tf.divide, [a(2, 3), pos(2, 3)], False),
    "maximum": (tf.maximum, [a(2, 3), a(2, 3)], False),
    "minimum": (tf.minimum, [a(2, 3), a(3)], False),
    "pow": (tf.pow, [pos(2, 3), a(2, 3)], False),
    "sqdiff": (tf.squared_difference, [a(2, 3), a(2, 3)], False),
    "add_n": (lambda x, y: tf.add_n([x, y, x]), [a(2, 3), a(2, 3)], False),
    "neg": (tf.negative, [a(2, 3)], False),
    "abs": (tf.abs, [a(2, 3)], False),
    "square": (tf.square, [a(2, 3)], False),
    "exp": (tf.exp, [a(2, 3)], False),
    "log": (tf.log, [pos(2, 3)], False),
    "log1p": (tf.log1p, [pos(2, 3)], False),
    "sqrt": (tf.sqrt, [pos(2, 3)], False),
    "rsqrt": (tf.rsqrt, [pos(2, 3)], False),
    "reciprocal": (tf.reciprocal, [pos(2, 3)], False),
    "sin_cos": (lambda x: tf.sin(x) * tf.cos(x), [a(2, 3)], False),
    "tanh": (tf.tanh, [a(2, 3)], False),
    "sigmoid": (tf.sigmoid, [a(2, 3)], False),
    "relu": (tf.nn.relu, [a(2, 3)], False),
    "relu6": (tf.nn.relu6, [a(2, 3) * 4], False),
    "softmax": (tf.nn.softmax, [a(2, 4)], False),
    "log_softmax": (tf.nn.log_softmax, [a(2, 4)], True),
    "l2_loss": (tf.nn.l2_loss, [a(2, 3)], False),
    "matmul": (tf.matmul, [a(2, 3), a(3, 4)], True),
    "matmul_ta": (lambda x, y: tf.matmul(x, y, transpose_a=True), [a(3, 2), a(3, 4)], False),
    "matmul_tb": (lambda x, y: tf.matmul(x, y, transpose_b=True), [a(2, 3), a(4, 3)], False),
    "matmul_tab": (lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True),
                   [a(3, 2), a(4, 3)], False),
    "sum": (lambda x: tf.reduce_sum(x, 1), [a(2, 3)], False),
    "sum_dyn_keep": (lambda x: tf.reduce_sum(x, 0, keepdims=True), [a(2, 3)], True),
    "mean": (lambda x: tf.reduce_mean(x, 0), [a(2, 3)], False),
    "mean_dyn": (lambda x: tf.reduce_mean(x), [a(2, 3)], True),
    "max": (lambda x: tf.reduce_max(x, 1), [a(2, 3)], False),
    "min_dyn": (lambda x: tf.reduce_min(x, 0), [a(2, 3)], True),
    "reshape": (lambda x: tf.reshape(x, [3, 2]) * tf.constant(np.arange(6.).reshape(3, 2)),
                [a(2, 3)], False),
    "reshape_dyn": (lambda x: tf.reshape(x, [-1]), [a(2, 3)], True),
    "transpose": (lambda x: tf.transpose(x, [1, 0]), [a(2, 3)], False),
    "concat": (lambda x, y: tf.concat([x, y], 1), [a(2, 3), a(2, 2)], True),
    "stack": (lambda x, y: tf.stack([x, y], 0), [a(2, 3), a(2, 3)], False),
    "unstack": (lambda x: tf.unstack(x)[1] * 2.0, [a(2, 3)], False),
    "slice": (lambda x: tf.slice(x, [0, 1], [2, 2]), [a(2, 3)], False),
    "strided": (lambda x: x[1, ::2], [a(2, 3)], False),
    "pad": (lambda x: tf.pad(x, [[1, 0], [0, 2]]), [a(2, 3)], False),
    "tile": (lambda x: tf.tile(x, [2, 2]), [a(2, 3)], False),
    "where": (lambda x, y: tf.where(x > y, x, y), [a(2, 3), a(2, 3)], False),
    "expand_squeeze": (lambda x: tf.squeeze(tf.expand_dims(x, 0) * 2.0, [0]), [a(2, 3)], True),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3]), [a(3)], False),
    "identity_cast": (lambda x: tf.cast(tf.identity(x), tf.float64), [a(2, 3)], False),
    "bias_add": (tf.nn.bias_add, [a(2, 3), a(3)], True),
    "fill": (lambda x: tf.fill([2, 2], tf.reduce_sum(x)), [a(3)], False),
    "xent": (lambda x, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=x),
             [a(3, 4), _softmax_labels(3, 4)], False),
    "sparse_xent": (lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([1, 0, 3], tf.int64), logits=x), [a(3, 4)], True),
    "mlp": (lambda x, w: tf.reduce_mean(tf.nn.relu(tf.matmul(x, w)) ** 2), [a(4, 3), a(3, 2)],
            True),
}


def _build(device=None):
    """Every case's loss and its gradients, in one graph; returns per-case records."""
    recs = {}
    def scope():
        return tf.device(device) if device else contextlib.nullcontext()
    with scope():
        for name, (fn, inputs, dynamic) in CASES.items():
            phs = [tf.placeholder(tf.float64, [None] * x.ndim if dynamic else x.shape)
                   for x in inputs]
            out = fn(*phs)
            recs[name] = {"phs": phs, "out": out, "inputs": inputs}
    shapes = tf.Session().run({n: r["out"] for n, r in recs.items()},
                              {p: x for r in recs.values() for p, x in zip(r["phs"], r["inputs"])})
    with scope():
        for name, r in recs.items():
            w_rng = np.random.default_rng(sum(map(ord, name)))  # the same in both builds
            w = w_rng.uniform(0.5, 1.5, np.shape(shapes[name]))
            r["loss"] = tf.reduce_sum(r["out"] * tf.constant(w))
            r["grads"] = tf.gradients(r["loss"], r["phs"])
        tie = tf.group(*[r["loss"] for r in recs.values()],
                       *[g for r in recs.values() for g in r["grads"]])
    return recs, tie


def _feed(recs, perturb=None):
    feed = {}
    for _name, r in recs.items():
        for j, (p, x) in enumerate(zip(r["phs"], r["inputs"])):
            if perturb is not None and perturb[0] == j and perturb[1] < x.size:
                x = x.copy()
                x.flat[perturb[1]] += perturb[2]
            feed[p] = x
    return feed


def _finite_differences(sess, recs, eps=1e-6):
    losses = {n: r["loss"] for n, r in recs.items()}
    fd = {n: [np.zeros_like(x) for x in r["inputs"]] for n, r in recs.items()}
    n_in = max(len(r["inputs"]) for r in recs.values())
    n_el = max(x.size for r in recs.values() for x in r["inputs"])
    for j in range(n_in):
        for k in range(n_el):
            hi = sess.run(losses, _feed(recs, (j, k, eps)))
            lo = sess.run(losses, _feed(recs, (j, k, -eps)))
            for n, r in recs.items():
                if j < len(r["inputs"]) and k < r["inputs"][j].size:
                    fd[n][j].flat[k] = (hi[n] - lo[n]) / (2 * eps)
    return fd


def test_gradients_match_finite_differences_executor_and_xla():
    recs, _ = _build()
    sess = tf.Session()
    got = sess.run({n: r["grads"] for n, r in recs.items()}, _feed(recs))
    fd = _finite_differences(sess, recs)
    for n in recs:
        for j, (g, want) in enumerate(zip(got[n], fd[n])):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{n}: input {j} (executor)")

    tf.reset_default_graph()
    xrecs, tie = _build("/device:XLA_CPU:0")
    xsess = tf.Session()
    fetch = [{n: r["grads"] for n, r in xrecs.items()}, tie]
    assert xsess.cluster_summary(fetch, _feed(xrecs)).startswith("XLA clustering: 1 cluster")
    xgot, _ = xsess.run(fetch, _feed(xrecs))
    for n in xrecs:
        for j, (g, want) in enumerate(zip(xgot[n], got[n])):
            np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{n}: input {j} (XLA vs executor)")


def test_gradient_structure():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(tf.ones([3, 2]))
    y = tf.matmul(x, w)
    (gw,) = tf.gradients(tf.reduce_sum(y), [w])
    assert gw.op.name.startswith("gradients/MatMul_grad/")
    assert gw.shape.as_list() == [3, 2]
    # no path: None, as in TensorFlow
    assert tf.gradients(tf.reduce_sum(y), [tf.placeholder(tf.float32, [3])]) == [None]
    # integer tensors carry no gradient; ops without a gradient function say which
    i = tf.placeholder(tf.int32, [3])
    assert tf.gradients(tf.reduce_sum(tf.cast(i, tf.float32) * tf.reduce_sum(y)), [i]) == [None]
    z = tf.py_func(lambda v: v, [y], tf.float32)
    with pytest.raises(LookupGradientError, match="No gradient defined for operation 'PyFunc'"):
        tf.gradients(tf.reduce_sum(z), [x])
    # stop_gradient and grad_ys
    s = tf.stop_gradient(y) * y
    (gx,) = tf.gradients(s, [x], grad_ys=[tf.ones([2, 2])])
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    yv = xv @ np.ones((3, 2), np.float32)
    np.testing.assert_allclose(sess.run(gx, {x: xv}), yv @ np.ones((2, 3)))
