"""Optimizers against their reference formulas, with and without XLA."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config

X = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
T = np.random.default_rng(1).standard_normal((6, 2)).astype(np.float32)
W0 = np.random.default_rng(2).standard_normal((3, 2)).astype(np.float32)
B0 = np.array([0.1, -0.2], np.float32)


def _grads(w, b):
    """d/d(w,b) of mean((X w + b - T)^2)."""
    r = X @ w + b - T
    g = 2 * r / r.size
    return X.T @ g, g.sum(0)


def _model(opt_factory, global_step=False):
    x = tf.placeholder(tf.float32, [None, 3])
    t = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(W0, name="w")
    b = tf.Variable(B0, name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - t))
    step = tf.train.get_or_create_global_step() if global_step else None
    train = opt_factory().minimize(loss, global_step=step)
    return x, t, w, b, train, step


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_sgd_step_equals_manual_update(xla):
    x, t, w, b, train, step = _model(lambda: tf.train.GradientDescentOptimizer(0.1), True)
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    wv, bv = W0.copy(), B0.copy()
    for _ in range(3):
        sess.run(train, {x: X, t: T})
        gw, gb = _grads(wv, bv)
        wv, bv = wv - 0.1 * gw, bv - 0.1 * gb
    np.testing.assert_allclose(sess.run(w), wv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(b), bv, rtol=1e-5, atol=1e-6)
    assert sess.run(step) == 3
    assert train.type in ("AssignAdd", "NoOp")


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_adam_matches_reference_formula(xla):
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    x, t, w, b, train, _ = _model(lambda: tf.train.AdamOptimizer(lr, b1, b2, eps))
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    params = [W0.astype(np.float64), B0.astype(np.float64)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for step in range(1, 5):
        sess.run(train, {x: X, t: T})
        grads = _grads(*params)
        lr_t = lr * np.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            params[i] = params[i] - lr_t * m[i] / (np.sqrt(v[i]) + eps)
    np.testing.assert_allclose(sess.run(w), params[0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(sess.run(b), params[1], rtol=2e-5, atol=2e-6)
    names = {v.op.name for v in tf.global_variables()}
    assert {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power"} <= names


def test_momentum_and_adagrad():
    x, t, w, b, train, _ = _model(lambda: tf.train.MomentumOptimizer(0.1, 0.9))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    wv, bv = W0.astype(np.float64), B0.astype(np.float64)
    aw, ab = np.zeros_like(wv), np.zeros_like(bv)
    for _ in range(3):
        sess.run(train, {x: X, t: T})
        gw, gb = _grads(wv, bv)
        aw, ab = 0.9 * aw + gw, 0.9 * ab + gb
        wv, bv = wv - 0.1 * aw, bv - 0.1 * ab
    np.testing.assert_allclose(sess.run(w), wv, rtol=1e-5, atol=1e-6)

    tf.reset_default_graph()
    x, t, w, b, train, _ = _model(lambda: tf.train.AdagradOptimizer(0.5))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    wv, bv = W0.astype(np.float64), B0.astype(np.float64)
    acc = [np.full_like(wv, 0.1), np.full_like(bv, 0.1)]
    for _ in range(3):
        sess.run(train, {x: X, t: T})
        gw, gb = _grads(wv, bv)
        acc = [acc[0] + gw * gw, acc[1] + gb * gb]
        wv, bv = wv - 0.5 * gw / np.sqrt(acc[0]), bv - 0.5 * gb / np.sqrt(acc[1])
    np.testing.assert_allclose(sess.run(w), wv, rtol=1e-5, atol=1e-6)


def test_compute_apply_gradients_and_var_list():
    x, t, w, b, _, _ = _model(lambda: tf.train.GradientDescentOptimizer(0.1))
    loss = tf.reduce_sum(tf.matmul(x, w))
    opt = tf.train.GradientDescentOptimizer(1.0)
    gv = opt.compute_gradients(loss, var_list=[w, b])
    assert gv[1][0] is None and gv[1][1] is b  # b does not affect this loss
    train = opt.apply_gradients(gv)
    assert train.name == "GradientDescent_1" or train.name.startswith("GradientDescent")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: X})
    np.testing.assert_allclose(sess.run(w), W0 - X.sum(0)[:, None], rtol=1e-5)
    with pytest.raises(InvalidArgumentError, match="No gradients provided"):
        opt.minimize(tf.reduce_sum(x), var_list=[w])


@pytest.mark.parametrize("make", [lambda: tf.train.AdamOptimizer(0.1),
                                  lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                                  lambda: tf.train.RMSPropOptimizer(0.1)])
def test_slots_made_under_update_ops_need_no_feed(make):
    """The batch-norm idiom: apply_gradients under control_dependencies(UPDATE_OPS), whose
    update ops read the fed batch. The slots' (and Adam's beta powers') initializers must
    not inherit those dependencies (TF's init_scope), or the global initializer would need
    the batch fed."""
    x = tf.placeholder(tf.float32, [None, 3])
    h = tf.layers.batch_normalization(tf.layers.dense(x, 4), training=True)
    loss = tf.reduce_mean(tf.square(h))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = make().minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())   # no feed
        s.run(train, {x: np.ones([2, 3], np.float32)})
