"""Complex adjoints (tf.matmul's adjoint flags, tf.linalg.adjoint, matrix_transpose's
conjugate) and the gradients TF gives Prod and Sign: against NumPy and JAX, on the
executor and under XLA."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf

RNG = np.random.default_rng(7)


def _c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _config(xla: bool):
    cfg = tf.ConfigProto()
    if xla:
        cfg.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    return cfg


def _run(fetches, xla=False):
    with tf.Session(config=_config(xla)) as sess:
        return sess.run(fetches)


def _h(a):
    return np.conj(np.swapaxes(a, -1, -2))


def test_complex_adjoints_conjugate():
    a, b, c, v = _c(3, 3), _c(3, 2), _c(2, 3), _c(3)
    a3, b3 = _c(2, 3, 3), _c(2, 3, 2)
    with tf.Graph().as_default():
        got = _run([tf.matmul(a, b, adjoint_a=True), tf.matmul(c, a, adjoint_b=True),
                    tf.matmul(a3, b3, adjoint_a=True), tf.linalg.adjoint(a3),
                    tf.matrix_transpose(a, conjugate=True), tf.matrix_transpose(a),
                    tf.linalg.matvec(a, v, adjoint_a=True)])
    want = [_h(a) @ b, c @ _h(a), _h(a3) @ b3, _h(a3), _h(a), a.T, _h(a) @ v]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_real_adjoints_are_transposes():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    with tf.Graph().as_default():
        got = _run([tf.linalg.adjoint(a), tf.matmul(a, a, adjoint_a=True)])
    np.testing.assert_array_equal(got[0], a.T)
    np.testing.assert_allclose(got[1], a.T @ a, rtol=1e-5)


@pytest.mark.parametrize("xla", [False, True])
@pytest.mark.parametrize("axes, keep", [([1], False), ([0, 2], True), (None, False),
                                        ([-1, 0], False)])
def test_prod_gradient_with_zeros(axes, keep, xla):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    x[1, 2, 3] = 0.0                       # one zero: the others' product flows to it
    x[2, 0, 0] = x[2, 0, 1] = 0.0          # two in one reduction: all zero there
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.reduce_prod(xt, axis=axes, keepdims=keep)
        w = RNG.standard_normal(y.shape.as_list()).astype(np.float32)
        gx, = tf.gradients(tf.reduce_sum(y * w), [xt])
        got = _run(gx, xla)
    ax = None if axes is None else tuple(axes)
    want = jax.grad(lambda v: jnp.sum(jnp.prod(v, axis=ax, keepdims=keep) * w))(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("xla", [False, True])
def test_sign_has_a_zero_gradient(xla):
    x = np.array([-2.0, 0.0, 3.0], np.float32)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        g, = tf.gradients(tf.reduce_sum(tf.sign(xt) * xt), [xt])
        got = _run(g, xla)
    np.testing.assert_array_equal(got, np.sign(x))   # only the product's own term


def test_prod_gradient_needs_known_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.reduce_prod(x, axis=1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Prod.*shape"):
            tf.gradients(y, [x])
