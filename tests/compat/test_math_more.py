"""Trigonometric / hyperbolic functions, rint, xlogy / xdivy / multiply_no_nan /
reciprocal_no_nan, reduce_variance / std / euclidean_norm, bincount, confusion_matrix
(values against NumPy executor and compiled; gradients against JAX) and the run-time
checks (tf.Assert, check_numerics, assert_*)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(31)
U = (R.random((3, 4)) * 1.6 - 0.8).astype(np.float32)    # in (-0.8, 0.8)
P = (R.random((3, 4)) * 2 + 1.2).astype(np.float32)       # > 1
Z = np.array([[0.0, 1.0, 2.0, 0.0]], np.float32)


CASES = {  # name: (xlapy of (u, p), numpy, jax of (u, p) for the gradient or None)
    "tan": (lambda u, p: tf.tan(u), np.tan(U), lambda u, p: jnp.tan(u)),
    "atan": (lambda u, p: tf.atan(p), np.arctan(P), lambda u, p: jnp.arctan(p)),
    "asin": (lambda u, p: tf.asin(u), np.arcsin(U), lambda u, p: jnp.arcsin(u)),
    "acos": (lambda u, p: tf.acos(u), np.arccos(U), lambda u, p: jnp.arccos(u)),
    "sinh": (lambda u, p: tf.sinh(p), np.sinh(P), lambda u, p: jnp.sinh(p)),
    "cosh": (lambda u, p: tf.cosh(u), np.cosh(U), lambda u, p: jnp.cosh(u)),
    "asinh": (lambda u, p: tf.asinh(u), np.arcsinh(U), lambda u, p: jnp.arcsinh(u)),
    "acosh": (lambda u, p: tf.acosh(p), np.arccosh(P), lambda u, p: jnp.arccosh(p)),
    "atanh": (lambda u, p: tf.atanh(u), np.arctanh(U), lambda u, p: jnp.arctanh(u)),
    "atan2": (lambda u, p: tf.atan2(u, p[0] - 2.0), np.arctan2(U, P[0] - 2),
              lambda u, p: jnp.arctan2(u, p[0] - 2.0)),
    "rint": (lambda u, p: tf.rint(tf.constant([0.5, 1.5, -2.5, 2.6])),
             np.array([0.0, 2.0, -2.0, 3.0], np.float32), None),
    "xlogy": (lambda u, p: tf.math.xlogy(u * Z, p), np.where(U * Z == 0, 0, U * Z * np.log(P)),
              lambda u, p: jax.scipy.special.xlogy(u * Z, p)),
    "xlogy_zero_nan": (lambda u, p: tf.math.xlogy(tf.zeros([2]), tf.constant([0.0, -1.0])),
                       np.zeros(2, np.float32), None),
    "xdivy": (lambda u, p: tf.math.xdivy(u * Z, p), U * Z / P,
              lambda u, p: u * Z / p),
    "mul_no_nan": (lambda u, p: tf.math.multiply_no_nan(tf.constant([np.inf, np.nan, 2.0]),
                                                        tf.constant([0.0, 0.0, 3.0])),
                   np.array([0.0, 0.0, 6.0], np.float32), None),
    "mul_no_nan_g": (lambda u, p: tf.math.multiply_no_nan(u, p * Z), U * P * Z,
                     lambda u, p: u * p * Z),
    "recip_no_nan": (lambda u, p: tf.math.reciprocal_no_nan(tf.constant([0.0, 4.0])),
                     np.array([0.0, 0.25], np.float32), None),
    "variance": (lambda u, p: tf.math.reduce_variance(u, 1), U.var(1),
                 lambda u, p: jnp.var(u, 1)),
    "std": (lambda u, p: tf.math.reduce_std(p, keepdims=True), P.std(keepdims=True),
            lambda u, p: jnp.std(p, keepdims=True)),
    "euclid": (lambda u, p: tf.math.reduce_euclidean_norm(u, 0), np.linalg.norm(U, axis=0),
               lambda u, p: jnp.linalg.norm(u, axis=0)),
}


def test_values_and_gradients():
    keys = sorted(CASES)
    with_grad = [k for k in keys if CASES[k][2] is not None]

    def build():
        u, p = tf.placeholder(tf.float32, [3, 4]), tf.placeholder(tf.float32, [3, 4])
        out = {k: CASES[k][0](u, p) for k in keys}
        for k in with_grad:
            out["d" + k] = [tf.zeros_like(u) if g is None else g for g in
                            tf.gradients(tf.reduce_sum(CASES[k][0](u, p)), [u, p])]
        return out, {u: U, p: P}
    want = jax.jit(lambda u, p: {k: jax.grad(lambda a, b, k=k: jnp.sum(CASES[k][2](a, b)),
                                             argnums=(0, 1))(u, p) for k in with_grad})(U, P)
    for got in run_executor_and_xla_cpu(build):
        for k in keys:
            assert_close(got[k], np.asarray(CASES[k][1], np.float32), 1e-5, 1e-6, what=k)
        for k in with_grad:
            for gv, w in zip(got["d" + k], want[k]):
                assert_close(gv, np.asarray(w), 1e-4, 1e-5, what="d" + k)


def test_bincount_and_confusion_matrix():
    a = tf.constant([1, 3, 1, 0, 3, 3])
    w = tf.constant([0.5, 1.0, 2.0, 1.0, 1.0, 1.0])
    sess = tf.Session()
    got = sess.run({"plain": tf.math.bincount(a), "w": tf.bincount(a, weights=w),
                    "min": tf.math.bincount(a, minlength=6),
                    "max": tf.math.bincount(a, maxlength=2),
                    "fixed": tf.math.bincount(a, minlength=3, maxlength=3),
                    "empty": tf.math.bincount(tf.zeros([0], tf.int32)),
                    "cm": tf.math.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1]),
                    "cm_w": tf.confusion_matrix([0, 1], [1, 1], num_classes=3,
                                                weights=[2.0, 3.0], dtype=tf.float32)})
    want = {"plain": np.bincount([1, 3, 1, 0, 3, 3]),
            "w": np.bincount([1, 3, 1, 0, 3, 3], [0.5, 1, 2, 1, 1, 1]).astype(np.float32),
            "min": np.bincount([1, 3, 1, 0, 3, 3], minlength=6), "max": np.array([1, 2]),
            "fixed": np.array([1, 2, 0]), "empty": np.zeros(0),
            "cm": np.array([[1, 0, 0], [0, 1, 1], [0, 0, 1]]),
            "cm_w": np.array([[0, 2, 0], [0, 3, 0], [0, 0, 0]], np.float32)}
    for k, v in want.items():
        np.testing.assert_array_equal(got[k], v, err_msg=k)


def test_assertions_and_check_numerics():
    x = tf.placeholder(tf.float32, [None])
    a = tf.Assert(tf.reduce_all(x > 0), ["x must be positive:", x], summarize=2)
    with tf.control_dependencies([a]):
        y = tf.identity(x * 2)
    eq = tf.assert_equal(x, tf.ones_like(x), message="not ones")
    pos = tf.debugging.assert_positive(x)
    c = tf.check_numerics(tf.log(x), "log of x")
    (gc,) = tf.gradients(tf.reduce_sum(c), [x])
    sess = tf.Session()
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    with pytest.raises(InvalidArgumentError, match=r"assertion failed: x must be positive: "
                                                   r"\[1.0 -2.0\.\.\.\]"):
        sess.run(y, {x: [1.0, -2.0, 3.0]})
    sess.run([eq, pos], {x: [1.0, 1.0]})
    with pytest.raises(InvalidArgumentError, match="not ones"):
        sess.run(eq, {x: [1.0, 2.0]})
    with pytest.raises(InvalidArgumentError, match="assertion failed"):
        sess.run(pos, {x: [1.0, 0.0]})
    np.testing.assert_allclose(sess.run(gc, {x: [1.0, 4.0]}), [1.0, 0.25])
    with pytest.raises(InvalidArgumentError, match="log of x : Tensor had NaN values"):
        sess.run(c, {x: [-1.0]})
    with pytest.raises(InvalidArgumentError, match="Tensor had Inf values"):
        sess.run(tf.verify_tensor_all_finite(x / 0.0, "div"), {x: [1.0]})
    # decided when the graph is built when the values are known
    with pytest.raises(InvalidArgumentError, match="did not hold"):
        tf.assert_less(tf.constant([1, 5]), tf.constant([2, 3]))
    assert tf.assert_less(tf.constant([1, 2]), tf.constant([2, 3])).type == "NoOp"
    with pytest.raises(InvalidArgumentError, match="must have rank 2"):
        tf.assert_rank(x, 2)
    with pytest.raises(InvalidTypeError, match="must be of type int32"):
        tf.assert_type(x, tf.int32)
    inc = sess.run([tf.is_non_decreasing([1, 1, 2]), tf.math.is_strictly_increasing([1, 1, 2])])
    assert inc == [True, False]
    with tf.Graph().as_default():
        v = tf.placeholder(tf.float32, [2])
        tf.sqrt(v * 2.0)
        checks = tf.add_check_numerics_ops()
        sess = tf.Session()
        sess.run(checks, {v: [1.0, 2.0]})
        with pytest.raises(InvalidArgumentError, match="Sqrt:0 : Tensor had NaN"):
            sess.run(checks, {v: [-1.0, 2.0]})


def test_rank_scalar_near_and_dtype_assertions():
    x = tf.placeholder(tf.float32, None)
    at_least = tf.debugging.assert_rank_at_least(x, 2)
    rank_in = tf.assert_rank_in(x, [2, 3])
    near = tf.debugging.assert_near(x, x + 1e-7)
    far = tf.debugging.assert_near(x, x + 1.0)
    finite = tf.debugging.assert_all_finite(x, "x is finite")
    sess = tf.Session()
    ones = np.ones((2, 2), np.float32)
    sess.run([at_least, rank_in, near, finite], {x: ones})
    with pytest.raises(InvalidArgumentError, match="must have rank at least 2"):
        sess.run(at_least, {x: np.ones(2, np.float32)})
    with pytest.raises(InvalidArgumentError, match=r"must have rank in \(2, 3\)"):
        sess.run(rank_in, {x: np.ones((1, 1, 1, 1), np.float32)})
    with pytest.raises(InvalidArgumentError, match="not equal to tolerance"):
        sess.run(far, {x: ones})
    with pytest.raises(InvalidArgumentError, match="x is finite : Tensor had Inf"):
        sess.run(finite, {x: np.full((2, 2), np.inf, np.float32)})
    # decided when the graph is built where shapes or values are known (ValueError, as TF)
    with pytest.raises(ValueError, match="must have rank at least 2. Received rank 1"):
        tf.assert_rank_at_least(tf.constant([1.0]), 2)
    assert tf.assert_rank_in(tf.constant([[1.0]]), [1, 2]).type == "NoOp"
    with pytest.raises(ValueError, match="not equal to tolerance"):
        tf.debugging.assert_near(tf.constant(1.0), tf.constant(1.1))
    c = tf.constant(2.0)
    assert tf.assert_scalar(c) is c
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tf.assert_scalar(tf.constant([1.0]))
    with pytest.raises(TypeError, match="proper"):
        tf.assert_proper_iterable("abc")
    tf.assert_proper_iterable([1, 2])
    assert tf.assert_same_float_dtype([c, x]) == tf.float32
    assert tf.assert_same_float_dtype() == tf.float32
    with pytest.raises(ValueError, match="expected type float32"):
        tf.assert_same_float_dtype([c, tf.constant(1.0, tf.float64)])
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.assert_same_float_dtype([tf.constant(1)])
    assert tf.is_numeric_tensor(c) and not tf.is_numeric_tensor(tf.constant(True))
    assert not tf.is_numeric_tensor(1.0)


def _set(x, rows, v):
    out = x.copy()
    out[rows] = v
    return out


def _add(x, idx, v):
    out = x.copy()
    np.add.at(out, idx, v)
    return out


A3 = (R.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
B3 = R.standard_normal((3, 2)).astype(np.float32)
T = R.standard_normal((4, 3)).astype(np.float32)
ARRAY_CASES = {  # name: (xlapy of (a, b, t), numpy, jax of (a, b, t) or None)
    "roll": (lambda a, b, t: tf.roll(t, [1, -1], [0, 1]), np.roll(T, (1, -1), (0, 1)),
             lambda a, b, t: jnp.roll(t, (1, -1), (0, 1))),
    "set_diag": (lambda a, b, t: tf.matrix_set_diag(t, b[:, 0]),
                 np.where(np.eye(4, 3, dtype=bool), np.pad(B3[:, 0], (0, 1))[:, None], T),
                 lambda a, b, t: t * (1 - jnp.eye(4, 3)) + jnp.eye(4, 3) * jnp.pad(
                     b[:, 0], (0, 1))[:, None]),
    "tri_lower": (lambda a, b, t: tf.matrix_triangular_solve(a, b),
                  np.linalg.solve(np.tril(A3), B3),
                  lambda a, b, t: jnp.linalg.solve(jnp.tril(a), b)),
    "tri_upper_adj": (lambda a, b, t: tf.linalg.triangular_solve(a, b, lower=False,
                                                                 adjoint=True),
                      np.linalg.solve(np.triu(A3).T, B3),
                      lambda a, b, t: jnp.linalg.solve(jnp.triu(a).T, b)),
    "scatter_update": (lambda a, b, t: tf.tensor_scatter_nd_update(t, [[0], [2]],
                                                                  t[1:3] * 2.0),
                       _set(T, [0, 2], T[1:3] * 2),
                       lambda a, b, t: t.at[jnp.array([0, 2])].set(t[1:3] * 2.0)),
    "scatter_add": (lambda a, b, t: tf.tensor_scatter_nd_add(t, [[0, 1], [0, 1], [3, 2]],
                                                             b[:, 0] * 3.0),
                    _add(T, ([0, 0, 3], [1, 1, 2]), B3[:, 0] * 3),
                    lambda a, b, t: t.at[jnp.array([0, 0, 3]), jnp.array([1, 1, 2])].add(
                        b[:, 0] * 3.0)),
    "scatter_sub": (lambda a, b, t: tf.tensor_scatter_sub(t, [[1]], t[:1]),
                    _add(T, ([1],), -T[:1]),
                    lambda a, b, t: t.at[jnp.array([1])].add(-t[:1])),
    "batch_gather": (lambda a, b, t: tf.batch_gather(t, [[2, 0], [1, 1], [0, 0], [2, 2]]),
                     np.take_along_axis(T, np.array([[2, 0], [1, 1], [0, 0], [2, 2]]), 1),
                     lambda a, b, t: jnp.take_along_axis(
                         t, jnp.array([[2, 0], [1, 1], [0, 0], [2, 2]]), 1)),
}


def test_array_extras_values_and_gradients():
    keys = sorted(ARRAY_CASES)
    c = {k: R.standard_normal(np.shape(ARRAY_CASES[k][1])).astype(np.float32) for k in keys}

    def build():
        a, b, t = (tf.placeholder(tf.float32, v.shape) for v in (A3, B3, T))
        out = {}
        for k in keys:
            y = ARRAY_CASES[k][0](a, b, t)
            out[k] = y
            out["d" + k] = [tf.zeros_like(v) if gv is None else gv for v, gv in
                            zip((a, b, t), tf.gradients(tf.reduce_sum(y * c[k]), [a, b, t]))]
        return out, {a: A3, b: B3, t: T}
    want = jax.jit(lambda a, b, t: {k: jax.grad(
        lambda *v, k=k: jnp.sum(ARRAY_CASES[k][2](*v) * c[k]), argnums=(0, 1, 2))(a, b, t)
        for k in keys})(A3, B3, T)
    for got in run_executor_and_xla_cpu(build):
        for k in keys:
            assert_close(got[k], np.asarray(ARRAY_CASES[k][1], np.float32), 1e-5, 1e-5,
                         what=k)
            for gv, w in zip(got["d" + k], want[k]):
                assert_close(gv, np.asarray(w), 1e-4, 1e-5, what="d" + k)


def test_setdiff1d_unravel_index_and_errors():
    d = tf.setdiff1d([1, 2, 3, 4, 2, 6], [2, 4])
    u = tf.unravel_index([5, 1, 11], [3, 4])
    sess = tf.Session()
    out, idx = sess.run(d)
    np.testing.assert_array_equal(out, [1, 3, 6])
    np.testing.assert_array_equal(idx, [0, 2, 5])
    np.testing.assert_array_equal(sess.run(u), np.array(np.unravel_index([5, 1, 11], (3, 4))))
    with pytest.raises(InvalidArgumentError, match="does not index"):
        sess.run(tf.tensor_scatter_nd_update(tf.zeros([2]), [[3]], [1.0]))
    with pytest.raises(InvalidArgumentError, match="not invertible"):
        sess.run(tf.matrix_triangular_solve(tf.zeros([2, 2]), tf.ones([2, 1])))


def test_nn_extras():
    x = R.standard_normal((2, 3, 4, 8)).astype(np.float32)
    w = R.random((2, 3, 4, 8)).astype(np.float32)
    t = np.array([0.0, 0.5, 1.0, 3.0, 7.0], np.float32)
    li = R.standard_normal(5).astype(np.float32)
    c = R.standard_normal((2, 6, 8, 2)).astype(np.float32)

    def ref_d2s(v, b):
        n, h, ww, ch = v.shape
        return v.reshape(n, h, ww, b, b, ch // (b * b)).transpose(0, 1, 3, 2, 4, 5).reshape(
            n, h * b, ww * b, ch // (b * b))

    def build():
        xp = tf.placeholder(tf.float32, x.shape)
        d2s = tf.nn.depth_to_space(xp, 2)
        s2d = tf.space_to_depth(d2s, 2)
        nchw = tf.nn.depth_to_space(tf.transpose(xp, [0, 3, 1, 2]), 2, data_format="NCHW")
        mean, var = tf.nn.weighted_moments(xp, [1, 2], w)
        cnt, ms, vs, _ = tf.nn.sufficient_statistics(xp, [0, 3])
        nm, nv = tf.nn.normalize_moments(cnt, ms, vs, None)
        (gd,) = tf.gradients(tf.reduce_sum(d2s * c), [xp])
        return {"d2s": d2s, "s2d": s2d, "nchw": nchw, "mean": mean, "var": var, "nm": nm,
                "nv": nv, "gd": gd,
                "lp": tf.nn.log_poisson_loss(t, li),
                "lp_full": tf.nn.log_poisson_loss(t, li, compute_full_loss=True),
                "mp1": tf.nn.max_pool1d(xp[:, 0], 2, 2, "VALID"),
                "ap1": tf.nn.avg_pool1d(xp[:, 0], 3, 1, "SAME")}, {xp: x}
    stir = t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * np.maximum(t, 1))
    x0 = x[:, 0]
    padded = np.pad(x0, [(0, 0), (1, 1), (0, 0)], constant_values=np.nan)
    ap1 = np.stack([np.nanmean(padded[:, i:i + 3], 1) for i in range(4)], 1)
    want = {"d2s": ref_d2s(x, 2), "s2d": x,
            "nchw": ref_d2s(x, 2).transpose(0, 3, 1, 2),
            "mean": (w * x).sum((1, 2)) / w.sum((1, 2)),
            "var": (w * (x - ((w * x).sum((1, 2), keepdims=True) / w.sum((1, 2), keepdims=True)))
                    ** 2).sum((1, 2)) / w.sum((1, 2)),
            "nm": x.mean((0, 3)), "nv": x.var((0, 3)),
            "gd": c.reshape(2, 3, 2, 4, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(x.shape),
            "lp": np.exp(li) - li * t,
            "lp_full": np.exp(li) - li * t + np.where(t > 1, stir, 0),
            "mp1": np.maximum(x0[:, 0::2], x0[:, 1::2]), "ap1": ap1}
    for got in run_executor_and_xla_cpu(build):
        for k, v in want.items():
            assert_close(got[k], np.asarray(v, np.float32), 1e-5, 1e-5, what=k)
    with pytest.raises(InvalidArgumentError, match="divisible"):
        tf.nn.depth_to_space(tf.zeros([1, 2, 2, 3]), 2)
