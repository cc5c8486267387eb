"""Issue 21's math, linear algebra, partition and random names (tf.erf, tf.matrix_inverse,
tf.svd, tf.dynamic_partition, tf.random.*, ...) and the TF1-in-TF2 scaffolding: values
against NumPy / SciPy in the executor and compiled (placed on XLA_CPU, so each op must
lower), gradients against JAX (the decompositions' as TF defines them: Cholesky's
symmetric, the eigen-decomposition's from the lower triangle)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(21)
A = R.standard_normal((3, 3)).astype(np.float32)
S = (A @ A.T + 3 * np.eye(3)).astype(np.float32)        # symmetric positive definite
B = R.standard_normal((4, 3)).astype(np.float32)


def _value_cases(x, b):
    u8 = np.ascontiguousarray(S).view(np.uint8).reshape(3, 3, 4)
    s_np = np.linalg.svd(B, full_matrices=False)
    return {
        "round": (tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.7])),
                  np.array([0.0, 2.0, 2.0, -0.0, -2.0], np.float32)),
        "erf": (tf.erf(b), scipy.special.erf(B)),
        "erfc": (tf.math.erfc(b), scipy.special.erfc(B)),
        "expm1": (tf.expm1(b), np.expm1(B)),
        "lgamma": (tf.lgamma(x), scipy.special.gammaln(S)),
        "digamma": (tf.math.digamma(x), scipy.special.digamma(S)),
        "div_no_nan": (tf.div_no_nan(b, b * tf.constant([0.0, 1.0, 2.0])),
                       np.where([0.0, 1.0, 2.0] == np.zeros(3), 0.0,
                                B / (B * [1.0, 1.0, 2.0])).astype(np.float32)),
        "log_sigmoid": (tf.log_sigmoid(b * 40.0), -np.logaddexp(0, -B * 40.0)),
        "accumulate_n": (tf.accumulate_n([b, b, b]), 3 * B),
        "clip_avg": (tf.clip_by_average_norm(b, 0.1),
                     B * 0.1 / max(0.1, np.linalg.norm(B) / B.size)),
        "inv": (tf.matrix_inverse(x), np.linalg.inv(S)),
        "inv_adj": (tf.linalg.inv(x + np.triu(np.ones((3, 3), np.float32)), adjoint=True),
                    np.linalg.inv(S + np.triu(np.ones((3, 3)))).T),
        "det": (tf.matrix_determinant(x), np.linalg.det(S)),
        "slogdet": (tf.linalg.slogdet(-x), np.linalg.slogdet(-S)),
        "logdet": (tf.linalg.logdet(x), np.linalg.slogdet(S)[1]),
        "solve": (tf.matrix_solve(x, b[:3, :2]), np.linalg.solve(S, B[:3, :2])),
        "chol": (tf.cholesky(x), np.linalg.cholesky(S)),
        "chol_lower_only": (tf.cholesky(x + np.triu(np.ones((3, 3), np.float32), 1)),
                            np.linalg.cholesky(S)),
        "eigvals": (tf.self_adjoint_eigvals(x), np.linalg.eigvalsh(S)),
        "svd_s": (tf.svd(b, compute_uv=False), s_np[1]),
        "svd_rebuild": (tf.matmul(tf.svd(b)[1] * tf.svd(b)[0], tf.svd(b)[2],
                                  transpose_b=True), B),
        "qr_rebuild": (tf.matmul(*tf.qr(b)), B),
        "qr_shapes": ((tf.shape(tf.qr(b)[0]), tf.shape(tf.qr(b, full_matrices=True)[0])),
                      (np.array([4, 3], np.int32), np.array([4, 4], np.int32))),
        "eig_rebuild": (tf.matmul(tf.self_adjoint_eig(x)[1] * tf.self_adjoint_eig(x)[0],
                                  tf.self_adjoint_eig(x)[1], transpose_b=True), S),
        "diag": (tf.diag(b[0]), np.diag(B[0])),
        "diag2": (tf.diag(b[:2, :2]),
                  np.diag(B[:2, :2].reshape(-1)).reshape(2, 2, 2, 2)),
        "diag_part": (tf.diag_part(x), np.diag(S)),
        "linalg_diag": (tf.linalg.diag(b), B[..., None] * np.eye(3, dtype=np.float32)),
        "linalg_diag_part": (tf.linalg.diag_part(b), np.diagonal(B)),
        "trace": (tf.trace(b), np.trace(B)),
        "matrix_transpose": (tf.matrix_transpose(tf.reshape(b, [2, 2, 3])),
                             B.reshape(2, 2, 3).transpose(0, 2, 1)),
        "eye": (tf.eye(2, 3, batch_shape=[2]) + b[0, 0],
                np.broadcast_to(np.eye(2, 3), (2, 2, 3)).astype(np.float32) + B[0, 0]),
        "matvec": (tf.linalg.matvec(x, b[0]), S @ B[0]),
        "batch_matmul": (tf.matmul(tf.reshape(b, [2, 1, 2, 3]), tf.stack([x, x * 2.0])),
                         B.reshape(2, 1, 2, 3) @ np.stack([S, S * 2])),
        "batch_matvec": (tf.linalg.matvec(tf.stack([x, x]), b[:2, :3]),
                         np.einsum("bij,bj->bi", np.stack([S, S]), B[:2, :3])),
        "invert_permutation": (tf.invert_permutation(tf.constant([2, 0, 3, 1])),
                               np.array([1, 3, 0, 2], np.int32)),
        "searchsorted": ((tf.searchsorted(tf.constant([[1.0, 2.0, 2.0, 3.0]]),
                                          tf.constant([[2.0, 0.0, 3.5]])),
                          tf.searchsorted(tf.constant([1.0, 2.0, 2.0, 3.0]),
                                          tf.constant([2.0, 0.0, 3.5]), side="right")),
                         (np.array([[1, 0, 4]], np.int32), np.array([3, 0, 4], np.int32))),
        "useg_max": (tf.unsorted_segment_max(b, [1, 1, -1, 0], 3),
                     np.stack([B[3], np.maximum(B[0], B[1]),
                               np.full(3, np.finfo(np.float32).min)])
                     .astype(np.float32)),
        "useg_min_int": (tf.unsorted_segment_min(tf.constant([[3, 1], [2, 5]]), [0, 0], 2),
                         np.array([[2, 1], [2**31 - 1, 2**31 - 1]], np.int32)),
        "hist": (tf.histogram_fixed_width(b, [-1.0, 1.0], nbins=5),
                 np.bincount(np.clip(np.floor((B.ravel() + 1) / 2 * 5), 0, 4).astype(int),
                             minlength=5).astype(np.int32)),
        "bitcast_same": (tf.bitcast(x, tf.int32), S.view(np.int32)),
        "bitcast_narrow": (tf.bitcast(x, tf.uint8), u8),
        "bitcast_wide": (tf.bitcast(tf.constant(u8), tf.float32), S),
        "shape_n": (tuple(tf.shape_n([x, b])),
                    (np.array([3, 3], np.int32), np.array([4, 3], np.int32))),
    }


def test_values_executor_and_xla():
    def build():
        x, b = tf.placeholder(tf.float32, [3, 3]), tf.placeholder(tf.float32, [4, 3])
        return {k: v[0] for k, v in _value_cases(x, b).items()}, {x: S, b: B}
    ex, xl = run_executor_and_xla_cpu(build)
    with tf.Graph().as_default():
        want = {k: v[1] for k, v in _value_cases(tf.constant(S), tf.constant(B)).items()}
    for got in (ex, xl):
        for k, w in want.items():
            if isinstance(w, np.ndarray) and w.dtype == np.float64:
                w = w.astype(np.float32)
            assert_close(got[k], w, rtol=2e-5, atol=2e-5, what=f"{k}: ")


def _lower_sym(m):
    return jnp.tril(m) + jnp.tril(m, -1).T


C = {k: R.standard_normal((4, 4)).astype(np.float32) for k in range(8)}
GRAD_CASES = {  # name: (xlapy loss of (x, b), jax loss of (x, b))
    "erf": (lambda x, b: tf.reduce_sum(tf.erf(b) * C[0][:4, :3]),
            lambda x, b: jnp.sum(jax.scipy.special.erf(b) * C[0][:4, :3])),
    "expm1_lgamma": (lambda x, b: tf.reduce_sum(tf.expm1(b))
                     + tf.reduce_sum(tf.lgamma(x) * C[1][:3, :3]),
                     lambda x, b: jnp.sum(jnp.expm1(b))
                     + jnp.sum(jax.scipy.special.gammaln(x) * C[1][:3, :3])),
    "div_no_nan": (lambda x, b: tf.reduce_sum(tf.div_no_nan(b, x[0]) * C[2][:4, :3]),
                   lambda x, b: jnp.sum(b / x[0] * C[2][:4, :3])),
    "log_sigmoid": (lambda x, b: tf.reduce_sum(tf.log_sigmoid(b * 3.0)),
                    lambda x, b: jnp.sum(jax.nn.log_sigmoid(b * 3.0))),
    "inv": (lambda x, b: tf.reduce_sum(tf.matrix_inverse(x) * C[3][:3, :3]),
            lambda x, b: jnp.sum(jnp.linalg.inv(x) * C[3][:3, :3])),
    "det_logdet": (lambda x, b: tf.matrix_determinant(x) + tf.linalg.logdet(x) * 3.0
                   + tf.linalg.slogdet(x)[1],
                   lambda x, b: jnp.linalg.det(x) + jnp.linalg.slogdet(x)[1] * 4.0),
    "solve": (lambda x, b: tf.reduce_sum(tf.matrix_solve(x, b[:3, :2]) * C[4][:3, :2]),
              lambda x, b: jnp.sum(jnp.linalg.solve(x, b[:3, :2]) * C[4][:3, :2])),
    "cholesky": (lambda x, b: tf.reduce_sum(tf.cholesky(x) * C[5][:3, :3]),
                 lambda x, b: jnp.sum(jnp.linalg.cholesky((x + x.T) / 2) * C[5][:3, :3])),
    "eigh": (lambda x, b: tf.reduce_sum(tf.self_adjoint_eig(x)[0] * C[6][0, :3])
             + tf.reduce_sum(tf.abs(tf.self_adjoint_eig(x)[1]) * C[6][:3, :3]),
             lambda x, b: jnp.sum(jnp.linalg.eigh(_lower_sym(x))[0] * C[6][0, :3])
             + jnp.sum(jnp.abs(jnp.linalg.eigh(_lower_sym(x))[1]) * C[6][:3, :3])),
    "svd": (lambda x, b: tf.reduce_sum(tf.svd(b)[0] * C[7][0, :3])
            + tf.reduce_sum(tf.abs(tf.svd(b)[1]) * C[7][:4, :3])
            + tf.reduce_sum(tf.abs(tf.svd(b)[2]) * C[7][1:, 1:]),
            lambda x, b: jnp.sum(jnp.linalg.svd(b, full_matrices=False)[1] * C[7][0, :3])
            + jnp.sum(jnp.abs(jnp.linalg.svd(b, full_matrices=False)[0]) * C[7][:4, :3])
            + jnp.sum(jnp.abs(jnp.linalg.svd(b, full_matrices=False)[2].T) * C[7][1:, 1:])),
    "qr": (lambda x, b: tf.reduce_sum(tf.qr(b)[0] * C[0][:4, :3])
           + tf.reduce_sum(tf.qr(b)[1] * C[1][1:, 1:]),
           lambda x, b: jnp.sum(jnp.linalg.qr(b)[0] * C[0][:4, :3])
           + jnp.sum(jnp.linalg.qr(b)[1] * C[1][1:, 1:])),
    "diag_trace": (lambda x, b: tf.reduce_sum(tf.diag(b[0]) * C[2][:3, :3])
                   + tf.trace(b) * 2.0 + tf.reduce_sum(tf.diag_part(x) * C[3][0, :3]),
                   lambda x, b: jnp.sum(jnp.diag(b[0]) * C[2][:3, :3])
                   + jnp.trace(b) * 2.0 + jnp.sum(jnp.diag(x) * C[3][0, :3])),
    "useg_max": (lambda x, b: tf.reduce_sum(tf.unsorted_segment_max(
                     tf.concat([b, b[:1]], 0), [1, 0, 1, 0, 1], 2) * C[4][:2, :3]),
                 lambda x, b: jnp.sum(jnp.stack([jnp.maximum(b[1], b[3]), jnp.maximum(
                     jnp.maximum(b[0], b[2]), b[0])]) * C[4][:2, :3])),
    "batch_matmul": (lambda x, b: tf.reduce_sum(
        tf.matmul(tf.reshape(b, [2, 1, 2, 3]), x, transpose_b=True) * C[6][:2, :3])
        + tf.reduce_sum(tf.matmul(tf.stack([x, x * 2.0]), tf.reshape(b, [1, 4, 3]),
                                  adjoint_b=True)[:, :1, :2]),
        lambda x, b: jnp.sum(jnp.matmul(b.reshape(2, 1, 2, 3), x.T) * C[6][:2, :3])
        + jnp.sum(jnp.matmul(jnp.stack([x, x * 2.0]), b.reshape(1, 4, 3).transpose(0, 2, 1))
                  [:, :1, :2])),
    "clip_avg": (lambda x, b: tf.reduce_sum(tf.clip_by_average_norm(b, 0.01) * C[5][:4, :3]),
                 lambda x, b: jnp.sum(b * 0.01 * B.size / jnp.linalg.norm(b) * C[5][:4, :3])),
}


def test_gradients_against_jax():
    keys = sorted(GRAD_CASES)

    def build():
        x, b = tf.placeholder(tf.float32, [3, 3]), tf.placeholder(tf.float32, [4, 3])
        out = {}
        for k in keys:
            gx, gb = tf.gradients(GRAD_CASES[k][0](x, b), [x, b])
            out[k] = (tf.zeros_like(x) if gx is None else gx, tf.zeros_like(b) if gb is None
                      else gb)
        return out, {x: S, b: B}
    ex, xl = run_executor_and_xla_cpu(build)
    wants = jax.jit(lambda x, b: {k: jax.grad(GRAD_CASES[k][1], argnums=(0, 1))(x, b)
                                  for k in keys})(S, B)
    for k in keys:
        want = wants[k]
        for got, mode in ((ex, "executor"), (xl, "xla")):
            for gv, w in zip(got[k], want):
                assert_close(gv, np.asarray(w), rtol=2e-4, atol=2e-4, what=f"{k} ({mode}): ")


def test_scaffolding_of_tf1_in_tf2_scripts():
    tf.disable_v2_behavior()
    tf.disable_eager_execution()
    assert tf.executing_eagerly() is False
    assert tf.compat.v1 is tf and tf.compat.v1.placeholder is tf.placeholder
    with pytest.raises(UnimplementedError, match="eager execution is not supported"):
        tf.enable_eager_execution()
    with pytest.raises(UnimplementedError):
        tf.enable_v2_behavior()


def test_placeholder_with_default_fed_or_not_and_its_gradient():
    x = tf.placeholder_with_default(tf.constant([[1.0, 2.0, 3.0]]), [None, 3])
    assert x.shape.as_list() == [None, 3]
    y = tf.reduce_sum(x * x)
    (g,) = tf.gradients(y, [x])
    for cfg in (None, tf.ConfigProto()):
        sess = tf.Session(config=cfg)
        assert sess.run(y) == 14.0
        fed = np.ones((2, 3), np.float32)
        assert sess.run(y, {x: fed}) == 6.0
        assert_close(sess.run(g, {x: fed}), 2 * fed)
    with pytest.raises(InvalidArgumentError, match="not compatible"):
        tf.placeholder_with_default(tf.constant([1.0, 2.0]), [3])


def test_executor_only_partition_stitch_unique_with_counts():
    data = tf.placeholder(tf.float32, [5, 2])
    parts = tf.constant([1, 0, 1, 2, 0])
    p = tf.dynamic_partition(data, parts, 3)
    stitched = tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([[1], [3]])],
                                 [data[:2], data[2:4][:, None, :]])
    u = tf.unique_with_counts(tf.constant([4, 1, 4, 7, 1, 4]))
    w = np.arange(10, dtype=np.float32).reshape(5, 2) + 1
    loss = tf.reduce_sum(p[0] * 2.0) + tf.reduce_sum(p[1] * p[1]) \
        + tf.reduce_sum(stitched * np.arange(8, dtype=np.float32).reshape(4, 2))
    (g,) = tf.gradients(loss, [data])
    sess = tf.Session()
    pv, sv, uv, gv = sess.run([p, stitched, u, g], {data: w})
    assert_close(pv, [w[[1, 4]], w[[0, 2]], w[[3]]])
    assert_close(sv, w[[0, 2, 1, 3]])
    assert_close(tuple(uv), (np.array([4, 1, 7], np.int32), np.array([0, 1, 0, 2, 1, 0], np.int32),
                             np.array([3, 2, 1], np.int32)))
    stitch_g = np.arange(8, dtype=np.float32).reshape(4, 2)[[0, 2, 1, 3]]
    want = np.zeros((5, 2), np.float32)
    want[[1, 4]] += 2.0
    want[[0, 2]] += 2 * w[[0, 2]]
    want[:4] += stitch_g
    assert_close(gv, want)
    with pytest.raises(InvalidArgumentError, match="not in"):
        sess.run(tf.dynamic_partition(data, tf.constant([0, 3, 0, 0, 0]), 3), {data: w})
    with pytest.raises(InvalidArgumentError, match="missing"):
        sess.run(tf.dynamic_stitch([tf.constant([0, 2])], [data[:2]]), {data: w})
    with pytest.raises(InvalidArgumentError, match="not a permutation"):
        sess.run(tf.invert_permutation(tf.constant([0, 0, 1])))


def test_random_shuffle_multinomial_gamma():
    tf.set_random_seed(3)
    x = tf.constant(np.arange(50, dtype=np.int32))
    sh = tf.random.shuffle(x)
    logits = tf.constant(np.log([[0.1, 0.2, 0.7], [1.0, 1e-9, 1e-9]]).astype(np.float32))
    draws = tf.multinomial(logits, 4000)
    cat = tf.random.categorical(logits, 7, dtype=tf.int32)
    gam = tf.random_gamma([20000], [2.0, 5.0], beta=[1.0, 2.0])
    assert draws.shape.as_list() == [2, 4000] and draws.dtype == tf.int64
    assert gam.shape.as_list() == [20000, 2]
    sess = tf.Session()
    s1, d, c, gv = sess.run([sh, draws, cat, gam])
    assert sorted(s1.tolist()) == list(range(50)) and s1.tolist() != list(range(50))
    freq = np.bincount(d[0], minlength=3) / 4000
    assert np.all(np.abs(freq - [0.1, 0.2, 0.7]) < 0.03), freq
    assert np.all(d[1] == 0) and c.dtype == np.int32 and c.shape == (2, 7)
    assert np.all(gv > 0)
    assert_close(gv.mean(0), [2.0, 2.5], rtol=0.05, atol=0.0)  # alpha / beta
    s2 = tf.Session().run(sh)
    assert s2.tolist() == s1.tolist()  # graph + op seeds make runs reproducible


def test_random_gamma_gradient_is_the_implicit_reparameterization():
    alpha = tf.placeholder(tf.float32, [3])
    beta = tf.constant([1.0, 2.0, 0.5])
    tf.set_random_seed(11)
    s = tf.random_gamma([4000], alpha, beta=beta)
    (g_mean,) = tf.gradients(tf.reduce_mean(s, 0)[0] + tf.reduce_mean(s, 0)[1]
                             + tf.reduce_mean(s, 0)[2], [alpha])
    raw = tf.random_gamma([5], alpha)
    (g_raw,) = tf.gradients(raw, [alpha])
    a = np.array([0.4, 2.0, 6.0], np.float32)
    gm, rv, gr = tf.Session().run([g_mean, raw, g_raw], {alpha: a})
    # d E[sample] / d alpha = 1 / beta
    assert_close(gm, np.array([1.0, 0.5, 2.0], np.float32), rtol=0.05)
    # per sample: d x / d alpha along u = F(x; alpha) fixed, by SciPy's inverse CDF
    a64 = a.astype(np.float64)
    u = scipy.special.gammainc(a64, rv.astype(np.float64))
    h = 1e-4
    dx = (scipy.special.gammaincinv(a64 + h, u) - scipy.special.gammaincinv(a64 - h, u)) / (2 * h)
    assert_close(gr, dx.sum(0).astype(np.float32), rtol=1e-3, atol=1e-4)


def test_singular_and_indefinite_inputs_raise_tf_errors():
    sess = tf.Session()
    z = tf.zeros([2, 2])
    with pytest.raises(InvalidArgumentError, match="not invertible"):
        sess.run(tf.matrix_inverse(z))
    with pytest.raises(InvalidArgumentError, match="not invertible"):
        sess.run(tf.matrix_solve(z, tf.ones([2, 1])))
    with pytest.raises(InvalidArgumentError, match="Cholesky decomposition was not"):
        sess.run(tf.cholesky(-tf.eye(2)))
    with pytest.raises(InvalidArgumentError, match="square"):
        tf.matrix_inverse(tf.zeros([2, 3]))
    with pytest.raises(InvalidArgumentError, match="value_range"):
        sess.run(tf.histogram_fixed_width([1.0, 2.0], [1.0, 1.0]))
