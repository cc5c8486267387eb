"""tf.train.FtrlOptimizer (with and without l2 shrinkage, lr_power -0.5 and another),
tf.contrib.opt.AdamWOptimizer, tf.nn.conv2d_backprop_input / _filter and
tf.layers.separable_conv2d: against NumPy/JAX, in the executor and compiled (one cluster
per training step)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config
from .helpers import assert_close, single_cluster

R = np.random.default_rng(8)
X = R.standard_normal((8, 3)).astype(np.float32)
Y = R.standard_normal((8, 1)).astype(np.float32)
W0 = R.standard_normal((3, 1)).astype(np.float32)


def _np_ftrl(steps, lr, l1, l2, shrink, p, init=0.1):
    w, acc, lin = W0.astype(np.float64), np.full_like(W0, init, np.float64), 0 * W0
    for _ in range(steps):
        g = 2 * X.T @ (X @ w - Y) / len(X)
        new = acc + g * g
        gs = g + 2 * shrink * w
        lin = lin + gs - ((new ** -p) - (acc ** -p)) / lr * w
        x = l1 * np.sign(lin) - lin
        y = new ** -p / lr + 2 * l2
        w = np.where(np.abs(lin) > l1, x / y, 0.0)
        acc = new
    return w


def _np_prox(steps, lr, l1, l2, adagrad=False, init=0.1):
    w, acc = W0.astype(np.float64), np.full_like(W0, init, np.float64)
    for _ in range(steps):
        g = 2 * X.T @ (X @ w - Y) / len(X)
        if adagrad:
            acc = acc + g * g
            eff = lr / np.sqrt(acc)
        else:
            eff = lr
        v = w - eff * g
        w = np.sign(v) * np.maximum(np.abs(v) - eff * l1, 0) / (1 + eff * l2)
    return w


def _np_adamw(steps, wd, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    w, m, v = W0.astype(np.float64), 0 * W0, 0 * W0
    for t in range(1, steps + 1):
        g = 2 * X.T @ (X @ w - Y) / len(X)
        w = w - wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    return w


@pytest.mark.parametrize("jit", [False, True])
def test_ftrl_and_adamw_match_numpy(jit):
    cases = {"ftrl": (lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01,
                                                     l2_regularization_strength=0.1),
                      _np_ftrl(5, 0.5, 0.01, 0.1, 0.0, -0.5)),
             "ftrl_v2": (lambda: tf.train.FtrlOptimizer(
                 0.3, learning_rate_power=-0.7, l1_regularization_strength=0.5,
                 l2_shrinkage_regularization_strength=0.2, initial_accumulator_value=0.5),
                 _np_ftrl(5, 0.3, 0.5, 0.0, 0.2, -0.7, init=0.5)),
             "adamw": (lambda: tf.contrib.opt.AdamWOptimizer(0.05, learning_rate=0.1),
                       _np_adamw(5, 0.05)),
             "prox_gd": (lambda: tf.train.ProximalGradientDescentOptimizer(
                 0.1, l1_regularization_strength=0.3, l2_regularization_strength=0.2),
                 _np_prox(5, 0.1, 0.3, 0.2)),
             "prox_adagrad": (lambda: tf.train.ProximalAdagradOptimizer(
                 0.5, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
                 _np_prox(5, 0.5, 0.05, 0.1, adagrad=True))}
    for name, (make_opt, want) in cases.items():
        g = tf.Graph()
        with g.as_default():
            w = tf.Variable(W0, name="w")
            x, y = tf.placeholder(tf.float32, [8, 3]), tf.placeholder(tf.float32, [8, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            opt = make_opt()
            step = opt.minimize(loss)
            sess = tf.Session(config=jit_config() if jit else None)
            sess.run(tf.global_variables_initializer())
            if jit:
                single_cluster(sess, step, {x: X, y: Y})
            for _ in range(5):
                sess.run(step, {x: X, y: Y})
            assert_close(sess.run(w), want.astype(np.float32), rtol=2e-5, atol=2e-6,
                         what=f"{name}: ")
            if name == "ftrl":
                assert [v.op.name for v in opt.variables()] == ["w/Ftrl", "w/Ftrl_1"]
    with pytest.raises(InvalidArgumentError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)


def test_conv2d_backprops_and_separable_layer():
    xv = R.standard_normal((2, 6, 6, 3)).astype(np.float32)
    fv = R.standard_normal((3, 3, 3, 4)).astype(np.float32)
    gv = R.standard_normal((2, 3, 3, 4)).astype(np.float32)

    def conv(x, f):
        return jax.lax.conv_general_dilated(x, f, (2, 2), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
    _, vjp = jax.vjp(conv, xv, fv)
    want_x, want_f = vjp(gv)
    outs = []
    for cfg in (None, jit_config()):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            f = tf.placeholder(tf.float32, [3, 3, 3, 4])
            gp = tf.placeholder(tf.float32, [2, 3, 3, 4])
            x = tf.placeholder(tf.float32, [2, 6, 6, 3])
            bi = tf.nn.conv2d_backprop_input([2, 6, 6, 3], f, gp, [1, 2, 2, 1], "SAME")
            bf = tf.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], gp, [1, 2, 2, 1], "SAME")
            assert bi.shape.as_list() == [2, 6, 6, 3] and bf.shape.as_list() == [3, 3, 3, 4]
            sep = tf.layers.separable_conv2d(x, 5, 3, strides=(1, 1), padding="same",
                                             depth_multiplier=2, activation=tf.nn.relu)
            assert sep.shape.as_list() == [2, 6, 6, 5]
            names = sorted(v.op.name for v in tf.trainable_variables())
            assert names == ["separable_conv2d/bias", "separable_conv2d/depthwise_kernel",
                             "separable_conv2d/pointwise_kernel"]
            dk, pk, b = (tf.get_default_graph().get_tensor_by_name(f"separable_conv2d/{n}:0")
                         for n in ("depthwise_kernel", "pointwise_kernel", "bias"))
            (gsep,) = tf.gradients(tf.reduce_sum(sep), [dk])
            sess = tf.Session(config=cfg)
            sess.run(tf.global_variables_initializer())
            outs.append(sess.run([bi, bf, sep, dk, pk, b, gsep], {f: fv, gp: gv, x: xv}))
    for bi_v, bf_v, sep_v, dk_v, pk_v, b_v, gsep_v in outs:
        assert_close(bi_v, np.asarray(want_x), rtol=1e-4, atol=1e-4)
        assert_close(bf_v, np.asarray(want_f), rtol=1e-4, atol=1e-4)

        def sep_ref(dk_, pk_v=pk_v, b_v=b_v):
            d = jax.lax.conv_general_dilated(xv, dk_.reshape(3, 3, 1, 6), (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                             feature_group_count=3)
            return jax.nn.relu(jnp.einsum("nhwc,cf->nhwf", d, pk_v[0, 0]) + b_v)
        assert_close(sep_v, np.asarray(sep_ref(dk_v)), rtol=1e-4, atol=1e-4)
        assert_close(gsep_v, np.asarray(jax.grad(lambda k: sep_ref(k).sum())(dk_v)),
                     rtol=1e-4, atol=1e-4)


def test_more_learning_rate_schedules():
    import math
    gs = tf.placeholder(tf.int64, [])
    sched = {"sgdr": tf.train.cosine_decay_restarts(0.1, gs, 10, t_mul=2.0, m_mul=0.5,
                                                    alpha=0.1),
             "sgdr1": tf.train.cosine_decay_restarts(0.1, gs, 7, t_mul=1.0),
             "lin_cos": tf.train.linear_cosine_decay(0.2, gs, 30, num_periods=1.5, alpha=0.1,
                                                     beta=0.01),
             "noisy": tf.train.noisy_linear_cosine_decay(0.2, gs, 30)}

    def sgdr(step, first, t_mul, m_mul, alpha):
        frac, i = step / first, 0
        while frac >= (t_mul ** i):  # walk the periods: lengths first * t_mul^i
            frac -= t_mul ** i
            i += 1
        frac /= t_mul ** i
        return 0.1 * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * frac)) + alpha)

    def lin_cos(step):
        s = min(step, 30)
        cosine = 0.5 * (1 + math.cos(math.pi * 2 * 1.5 * s / 30))
        return 0.2 * ((0.1 + (30 - s) / 30) * cosine + 0.01)
    sess = tf.Session()
    for step in (0, 3, 10, 15, 29, 30, 45, 70, 100):
        got = sess.run(sched, {gs: step})
        assert abs(got["sgdr"] - sgdr(step, 10, 2.0, 0.5, 0.1)) < 1e-6, step
        assert abs(got["sgdr1"] - sgdr(step, 7, 1.0, 1.0, 0.0)) < 1e-6, step
        assert abs(got["lin_cos"] - lin_cos(step)) < 1e-6, step
    late = [sess.run(sched["noisy"], {gs: 29}) for _ in range(50)]
    assert np.std(late) > 0  # noise is drawn on every run
    assert abs(np.mean(late) - 0.2 * (1 / 30 * 0.5 * (1 + math.cos(math.pi * 29 / 30)) +
                                      0.001)) < 0.05
