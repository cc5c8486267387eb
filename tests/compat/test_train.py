"""tf.train beyond the first optimizers: RMSProp, Adadelta, Nesterov momentum against their
reference formulas (executor and XLA, the update inside the step's one cluster), slots,
learning-rate schedules, the global step and ExponentialMovingAverage."""

import math

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config

X = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
T = np.random.default_rng(1).standard_normal((6, 2)).astype(np.float32)
W0 = np.random.default_rng(2).standard_normal((3, 2)).astype(np.float32)


def _grad(w):
    r = X @ w - T
    return X.T @ (2 * r / r.size)


def _train(opt, xla, steps=4, global_step=False):
    x = tf.placeholder(tf.float32, [None, 3])
    t = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(W0, name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - t))
    gs = tf.train.get_or_create_global_step() if global_step else None
    train = opt.minimize(loss, global_step=gs)
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    if xla:
        summary = sess.cluster_summary(train, {x: X, t: T})
        assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
        assert "not clustered" not in summary, summary
    for _ in range(steps):
        sess.run(train, {x: X, t: T})
    return sess, w


def _reference(update, state, steps=4):
    w = W0.astype(np.float64)
    for _ in range(steps):
        w = update(w, _grad(w), state)
    return w


XLA = pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])


@XLA
@pytest.mark.parametrize("centered,momentum", [(False, 0.0), (False, 0.5), (True, 0.5)])
def test_rmsprop(xla, centered, momentum):
    lr, rho, eps = 0.01, 0.9, 1e-10
    opt = tf.train.RMSPropOptimizer(lr, decay=rho, momentum=momentum, epsilon=eps,
                                    centered=centered)
    sess, w = _train(opt, xla)

    def update(w, g, s):
        s["ms"] = rho * s["ms"] + (1 - rho) * g * g
        s["mg"] = rho * s["mg"] + (1 - rho) * g
        denom = s["ms"] - s["mg"] ** 2 if centered else s["ms"]
        s["mom"] = momentum * s["mom"] + lr * g / np.sqrt(denom + eps)
        return w - s["mom"]
    want = _reference(update, {"ms": np.ones_like(W0, np.float64), "mg": 0.0, "mom": 0.0})
    np.testing.assert_allclose(sess.run(w), want, rtol=2e-5, atol=2e-6)
    slots = {"rms", "momentum"} | ({"mg"} if centered else set())
    assert set(opt.get_slot_names()) == slots
    assert opt.get_slot(w, "rms").op.name == "w/RMSProp"
    names = {v.op.name for v in tf.global_variables()}
    assert names == {"w", "w/RMSProp", "w/RMSProp_1"} | ({"w/RMSProp_2"} if centered else set())


@XLA
def test_adadelta(xla):
    lr, rho, eps = 1.0, 0.95, 1e-6
    sess, w = _train(tf.train.AdadeltaOptimizer(lr, rho, eps), xla)

    def update(w, g, s):
        s["acc"] = rho * s["acc"] + (1 - rho) * g * g
        upd = np.sqrt(s["upd"] + eps) / np.sqrt(s["acc"] + eps) * g
        s["upd"] = rho * s["upd"] + (1 - rho) * upd * upd
        return w - lr * upd
    np.testing.assert_allclose(sess.run(w), _reference(update, {"acc": 0.0, "upd": 0.0}),
                               rtol=2e-5, atol=2e-6)


@XLA
def test_nesterov_momentum_and_global_step(xla):
    lr, mu = 0.1, 0.9
    opt = tf.train.MomentumOptimizer(lr, mu, use_nesterov=True)
    sess, w = _train(opt, xla, global_step=True)

    def update(w, g, s):
        s["a"] = mu * s["a"] + g
        return w - lr * g - lr * mu * s["a"]
    np.testing.assert_allclose(sess.run(w), _reference(update, {"a": 0.0}), rtol=2e-5,
                               atol=2e-6)
    assert sess.run(tf.train.get_global_step()) == 4
    assert opt.get_slot(w, "momentum").op.name == "w/Momentum"


@XLA
def test_decayed_learning_rate_in_the_training_step(xla):
    # the schedule reads the global step inside the compiled step
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, gs, decay_steps=2, decay_rate=0.5, staircase=True)
    sess, w = _train(tf.train.GradientDescentOptimizer(lr), xla, global_step=True)
    want = W0.astype(np.float64)
    for step in range(4):
        want = want - 0.1 * 0.5 ** (step // 2) * _grad(want)
    np.testing.assert_allclose(sess.run(w), want, rtol=2e-5, atol=2e-6)
    assert sess.run(lr) == pytest.approx(0.1 * 0.5 ** 2)


def test_schedules_match_formulas():
    step = tf.placeholder(tf.int64, [])
    lr0 = 0.5
    sched = {
        "exp": tf.train.exponential_decay(lr0, step, 10, 0.9),
        "exp_stair": tf.train.exponential_decay(lr0, step, 10, 0.9, staircase=True),
        "natural": tf.train.natural_exp_decay(lr0, step, 10, 0.3),
        "inverse": tf.train.inverse_time_decay(lr0, step, 10, 0.5),
        "inverse_stair": tf.train.inverse_time_decay(lr0, step, 10, 0.5, staircase=True),
        "poly": tf.train.polynomial_decay(lr0, step, 20, 0.01, power=2.0),
        "poly_cycle": tf.train.polynomial_decay(lr0, step, 20, 0.01, cycle=True),
        "cosine": tf.train.cosine_decay(lr0, step, 20, alpha=0.1),
        "piecewise": tf.train.piecewise_constant(step, [5, 15], [1.0, 0.5, 0.1]),
    }

    def ref(name, s):
        p = s / 10
        if name == "exp":
            return lr0 * 0.9 ** p
        if name == "exp_stair":
            return lr0 * 0.9 ** math.floor(p)
        if name == "natural":
            return lr0 * math.exp(-0.3 * p)
        if name == "inverse":
            return lr0 / (1 + 0.5 * p)
        if name == "inverse_stair":
            return lr0 / (1 + 0.5 * math.floor(p))
        if name == "poly":
            return (lr0 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01
        if name == "poly_cycle":
            ds = 20 * max(math.ceil(s / 20), 1)
            return (lr0 - 0.01) * (1 - s / ds) + 0.01
        if name == "cosine":
            c = 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20))
            return lr0 * ((1 - 0.1) * c + 0.1)
        return 1.0 if s <= 5 else 0.5 if s <= 15 else 0.1
    sess = tf.Session()
    for s in (0, 3, 5, 6, 10, 15, 19, 20, 25, 47):
        got = sess.run(sched, {step: s})
        for name, value in got.items():
            assert value == pytest.approx(ref(name, s), rel=1e-5), (name, s)
            assert np.asarray(value).dtype == np.float32, name
    with pytest.raises(InvalidArgumentError, match="global_step is required"):
        tf.train.exponential_decay(0.1, None, 10, 0.9)
    with pytest.raises(InvalidArgumentError, match="1 less than the length"):
        tf.train.piecewise_constant(step, [1, 2], [1.0, 2.0])


def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    gs = tf.train.create_global_step()
    assert gs.op.name == "global_step" and gs.dtype == tf.int64 and not gs.trainable
    assert tf.train.get_or_create_global_step() is gs
    with pytest.raises(InvalidArgumentError, match="already exists"):
        tf.train.create_global_step()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    assert tf.train.global_step(sess, gs) == 0
    tf.train.assert_global_step(gs)
    assert gs not in tf.trainable_variables() and gs in tf.global_variables()


def test_optimizer_errors():
    w = tf.Variable(W0)
    with pytest.raises(InvalidArgumentError, match="not a Variable"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(tf.constant(W0), W0)])
    with pytest.raises(InvalidArgumentError, match="initial_accumulator_value"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(InvalidArgumentError, match="No variables"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0), var_list=[])
    assert w.op.name == "Variable"


@XLA
def test_exponential_moving_average(xla):
    v = tf.Variable(np.float32(10.0), name="v")
    step = tf.Variable(0, name="n", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    x = tf.placeholder(tf.float32, [])
    set_v = v.assign(x)
    loss = tf.identity(x * 2.0, name="loss")
    maintain = ema.apply([v, loss])
    with tf.control_dependencies([maintain]):
        inc = step.assign_add(1)
    shadow = ema.average(v)
    assert shadow.op.name == "v/ExponentialMovingAverage"
    assert ema.average_name(v) == "v/ExponentialMovingAverage"
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    assert sess.run(shadow) == 10.0
    avg, lavg, biased, local = 10.0, 0.0, 0.0, 0.0
    for n, value in enumerate([1.0, 2.0, 3.0]):
        sess.run(set_v, {x: value})
        sess.run(inc, {x: value})
        d = min(0.9, (1 + n) / (10 + n))
        avg -= (1 - d) * (avg - value)
        biased -= (1 - d) * (biased - 2 * value)
        local += 1
        lavg = biased / (1 - d ** local)
    assert sess.run(shadow) == pytest.approx(avg, rel=1e-5)
    assert sess.run(ema.average(loss)) == pytest.approx(lavg, rel=1e-5)
    restore = ema.variables_to_restore()
    assert restore["v/ExponentialMovingAverage"] is v and restore["n"] is step
    with pytest.raises(InvalidArgumentError, match="already computed"):
        ema.apply([v])
