"""Gradients a script defines: RegisterGradient + gradient_override_map, custom_gradient,
NotDifferentiable, hessians, and tf.test.compute_gradient(_error); executor and XLA."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .helpers import all_compiled, assert_close, run_both

XV = np.array([1.0, 2.0, -3.0, 4.0], np.float32)
UP = np.array([1.0, -1.0, 1.0, -1.0], np.float32)


@tf.RegisterGradient("TestGuidedRelu")
def _guided_relu(op, grad):
    # guided backprop: only positive gradients, through positive activations
    return tf.where(grad > 0.0, grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.0,
                                                                     tf.float32)


def test_gradient_override_map_guided_relu():
    def build():
        x = tf.placeholder(tf.float32, [4])
        with tf.get_default_graph().gradient_override_map({"Relu": "TestGuidedRelu"}):
            y = tf.nn.relu(x)
        plain = tf.nn.relu(x)   # outside the block: Relu's own gradient
        g = tf.gradients(tf.reduce_sum(y * UP), x)[0]
        gp = tf.gradients(tf.reduce_sum(plain * UP), x)[0]
        return [g, gp], {x: XV}
    ex, xla, sess, fetches, feed = run_both(build)
    for got in (ex, xla):
        assert_close(got[0], np.float32([1, 0, 0, 0]))
        assert_close(got[1], np.float32([1, -1, 0, -1]))
    all_compiled(sess, fetches, feed)   # (two independent gradients: two clusters)


def test_register_gradient_errors():
    with pytest.raises(KeyError, match="Registering two gradient"):
        tf.RegisterGradient("TestGuidedRelu")(lambda op, g: g)
    with pytest.raises(InvalidTypeError, match="op_type must be a string"):
        tf.RegisterGradient(3)
    with pytest.raises(InvalidTypeError, match="mapping strings to strings"):
        with tf.get_default_graph().gradient_override_map({"Relu": 1}):
            pass
    x = tf.placeholder(tf.float32, [2])
    with tf.get_default_graph().gradient_override_map({"Square": "NoSuchGradient"}):
        y = tf.square(x)
    with pytest.raises(LookupError, match="NoSuchGradient"):
        tf.gradients(y, x)


def test_py_func_gradient_through_an_override():
    """The TF 1.x recipe for a differentiable py_func."""
    @tf.RegisterGradient("TestPyCubeGrad")
    def _cube_grad(op, grad):
        return grad * 3.0 * tf.square(op.inputs[0])
    x = tf.placeholder(tf.float32, [4])
    with tf.get_default_graph().gradient_override_map({"PyFunc": "TestPyCubeGrad"}):
        y = tf.py_func(lambda a: a ** 3, [x], tf.float32)
    y.set_shape([4])
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    with tf.Session() as s:
        yv, gv = s.run([y, g], {x: XV})
    assert_close(yv, XV ** 3)
    assert_close(gv, 3 * XV ** 2)


def test_custom_gradient_clips_and_is_compiled():
    @tf.custom_gradient
    def clip_gradient(v):
        def grad(dy):
            return tf.clip_by_value(dy, -0.1, 0.1)
        return tf.identity(v), grad

    @tf.custom_gradient
    def log1pexp(v):   # TF's documentation example: a numerically stable gradient
        e = tf.exp(v)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    def build():
        x = tf.placeholder(tf.float32, [4])
        z = clip_gradient(x) * 3.0
        w = log1pexp(x * 30.0)
        gz, gw = tf.gradients([tf.reduce_sum(z)], x)[0], tf.gradients(tf.reduce_sum(w), x)[0]
        return [z, gz, gw], {x: XV}
    ex, xla, sess, fetches, feed = run_both(build)
    for got in (ex, xla):
        assert_close(got[0], XV * 3)
        assert_close(got[1], np.full(4, 0.1, np.float32))
        want = 30 / (1 + np.exp(-30 * XV.astype(np.float64)))
        assert_close(got[2], want.astype(np.float32), rtol=1e-5)
    all_compiled(sess, fetches, feed)


def test_custom_gradient_with_variables_and_several_outputs():
    w = tf.Variable(np.float32(2.0))

    @tf.custom_gradient
    def scaled(v):
        def grad(dy1, dy2, variables=None):
            return [dy1 * 10.0 + dy2], [tf.reduce_sum(dy1) * 100.0]
        return (v * w, v + 1.0), grad

    x = tf.placeholder(tf.float32, [4])
    a, b = scaled(x)
    gx, gw = tf.gradients(tf.reduce_sum(a) + tf.reduce_sum(b), [x, w])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        av, gxv, gwv = s.run([a, gx, gw], {x: XV})
    assert_close(av, XV * 2)
    assert_close(gxv, np.full(4, 11.0, np.float32))
    assert_close(gwv, np.float32(400.0))

    @tf.custom_gradient
    def no_vars_kw(v):
        return v * w, lambda dy: dy
    with pytest.raises(InvalidTypeError, match="keyword argument 'variables'"):
        no_vars_kw(x)


def test_not_differentiable_and_hessians():
    x = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(x ** 3 + tf.square(x[0] * x[1]))
    (h,) = tf.hessians(y, x)
    v = tf.Variable(np.float32([1.0, 2.0]))
    (hv,) = tf.hessians(tf.reduce_sum(v * v * v), v)
    xv = np.float32([1.0, 2.0, 3.0])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        hx, hvv = s.run([h, hv], {x: xv})
    # (the scalar (x0 x1)^2 is broadcast to 3 elements, then summed: 3 of it)
    want = np.diag(6 * xv)
    want[0, 0] += 3 * 2 * xv[1] ** 2
    want[1, 1] += 3 * 2 * xv[0] ** 2
    want[0, 1] = want[1, 0] = 3 * 4 * xv[0] * xv[1]
    assert_close(hx, want)
    assert_close(hvv, np.diag([6.0, 12.0]).astype(np.float32))
    with pytest.raises(InvalidArgumentError, match="must be known"):
        tf.hessians(tf.reduce_sum(tf.placeholder(tf.float32, [None]) ** 2),
                    tf.placeholder(tf.float32, [None]))
    tf.NotDifferentiable("TestNotDiff")   # an unknown op type: the registry says so
    assert tf.no_gradient is tf.NotDifferentiable


def test_compute_gradient_error():
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.reduce_sum(tf.sin(x) * x, axis=1)
    with tf.Session():
        theo, num = tf.test.compute_gradient(x, [2, 3], y, [2],
                                             x_init_value=np.ones([2, 3], np.float32))
        err = tf.test.compute_gradient_error(x, [2, 3], y, [2])
    assert theo.shape == (6, 2) and num.shape == (6, 2)
    assert_close(theo[:3, 0], np.full(3, np.sin(1) + np.cos(1), np.float32), rtol=1e-5)
    assert np.allclose(theo, num, atol=1e-2) and err < 1e-2
    with pytest.raises(InvalidArgumentError, match="default session"):
        tf.test.compute_gradient(x, [2, 3], y, [2])


def test_second_derivatives_through_slices_and_mirror_pads():
    """Gradient ops are differentiable where TF's are (a gradient penalty differentiates
    a gradient): StridedSliceGrad and MirrorPadGrad; FusedBatchNormGrad raises instead of
    giving a silent zero."""
    x = tf.placeholder(tf.float32, [4])
    y = tf.reduce_sum(tf.square(x[1:3]) * x[0])
    g = tf.gradients(y, x)[0]
    gg = tf.gradients(tf.reduce_sum(g * g), x)[0]
    m = tf.pad(tf.reshape(x, [1, 4]), [[0, 0], [2, 2]], mode="REFLECT")
    gm = tf.gradients(tf.reduce_sum(tf.square(m)), x)[0]
    gmm = tf.gradients(tf.reduce_sum(gm * gm), x)[0]
    xv = np.float32([2.0, 1.0, 3.0, 5.0])
    with tf.Session() as s:
        ggv, gmmv = s.run([gg, gmm], {x: xv})
    # g = [x1^2 + x2^2, 2 x0 x1, 2 x0 x2, 0]; sum g^2 differentiated
    a, b, c = xv[0], xv[1], xv[2]
    want = [8 * a * (b * b + c * c),
            4 * b * (b * b + c * c) + 8 * a * a * b,
            4 * c * (b * b + c * c) + 8 * a * a * c, 0.0]
    assert_close(ggv, np.float32(want), rtol=1e-5)
    # reflect padding by 2 of [x0..x3]: x2 x1 | x0 x1 x2 x3 | x2 x1; counts 1,3,3,1
    counts = np.float32([1, 3, 3, 1])
    assert_close(gmmv, 8 * counts ** 2 * xv, rtol=1e-5)
    t = tf.placeholder(tf.float32, [2, 2, 2, 3])
    bn, _, _ = tf.nn.fused_batch_norm(t, tf.ones([3]), tf.zeros([3]))
    gbn = tf.gradients(tf.reduce_sum(bn * bn), t)[0]
    with pytest.raises(LookupError, match="FusedBatchNormGrad"):
        tf.gradients(tf.reduce_sum(gbn), t)
