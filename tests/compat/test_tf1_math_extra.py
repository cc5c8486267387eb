"""TF 1.x math additions: segment reductions (sorted, unsorted, sparse), special functions
(igamma, polygamma, zeta, Bessel, nextafter, lbeta, polyval), cross, pinv, lstsq,
cholesky_solve, expm, tf.sets and edit_distance. Values against NumPy / SciPy in the
executor and compiled (ops on XLA_CPU), gradients against JAX (or the closed forms TF
uses), and the error cases."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.special

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .helpers import assert_close, run_executor_and_xla_cpu



@pytest.fixture(autouse=True)
def _jax_in_float64():
    """The JAX references in float64, for this file's tests only (jax_enable_x64 is
    process-wide: other files in the same worker compare float32 gradients)."""
    with jax.enable_x64(True):
        yield


R = np.random.default_rng(115)
X = R.uniform(0.5, 3.0, (4, 3)).astype(np.float32)
Y = R.uniform(-2.0, 2.0, (4, 3)).astype(np.float32)
W = (R.standard_normal((5, 3)) * 0.6).astype(np.float32)
SPD = (W.T @ W + 2 * np.eye(3)).astype(np.float32)
E64 = R.standard_normal((2, 3, 3)) * np.array([0.005, 3.0])[:, None, None]  # small and big
SORTED = np.array([0, 0, 2, 2], np.int32)
UNSORTED = np.array([1, -1, 1, 0], np.int32)


def _seg_ref(data, ids, n, fn, empty):
    out = np.full((n,) + data.shape[1:], empty, np.float64)
    for i in range(n):
        rows = data[ids == i]
        if len(rows):
            out[i] = fn(rows, axis=0)
    return out.astype(data.dtype)


def _sqrt_n(r, axis):
    return r.sum(axis) / np.sqrt(len(r))


def _lstsq_ref(a, b, l2):
    a, b = a.astype(np.float64), b.astype(np.float64)
    m, n = a.shape
    if m >= n:
        return np.linalg.solve(a.T @ a + l2 * np.eye(n), a.T @ b)
    return a.T @ np.linalg.solve(a @ a.T + l2 * np.eye(m), b)


def _value_cases(x, y, w, spd, e):
    idx = np.array([3, 0, 1, 1], np.int32)
    return {
        "segment_mean": (tf.math.segment_mean(x, SORTED),
                         _seg_ref(X, SORTED, 3, np.mean, 0)),
        "segment_max": (tf.segment_max(y, SORTED), _seg_ref(Y, SORTED, 3, np.max, 0)),
        "segment_min": (tf.math.segment_min(y, SORTED), _seg_ref(Y, SORTED, 3, np.min, 0)),
        "segment_prod": (tf.segment_prod(y, SORTED), _seg_ref(Y, SORTED, 3, np.prod, 1)),
        "segment_mean_int": (tf.segment_mean(tf.constant([[3], [-4], [7]]), [0, 0, 1]),
                             np.array([[0], [7]], np.int32)),
        "useg_prod": (tf.unsorted_segment_prod(y, UNSORTED, 3),
                      _seg_ref(Y, UNSORTED, 3, np.prod, 1)),
        "useg_mean": (tf.math.unsorted_segment_mean(y, UNSORTED, 3),
                      _seg_ref(Y, UNSORTED, 3, np.mean, 0)),
        "useg_sqrt_n": (tf.unsorted_segment_sqrt_n(y, UNSORTED, 3),
                        _seg_ref(Y, UNSORTED, 3, _sqrt_n, 0)),
        "sps_sum": (tf.sparse_segment_sum(y, idx, SORTED),
                    _seg_ref(Y[idx], SORTED, 3, np.sum, 0)),
        "sps_mean": (tf.sparse.segment_mean(y, idx, SORTED),
                     _seg_ref(Y[idx], SORTED, 3, np.mean, 0)),
        "sps_sqrt_n": (tf.math.sparse_segment_sqrt_n(y, idx, SORTED),
                       _seg_ref(Y[idx], SORTED, 3, _sqrt_n, 0)),
        "sps_sum_n": (tf.sparse_segment_sum_with_num_segments(y, idx, SORTED, 4),
                      _seg_ref(Y[idx], SORTED, 4, np.sum, 0)),
        "sps_mean_n": (tf.sparse_segment_mean(y, idx, SORTED, num_segments=5),
                       _seg_ref(Y[idx], SORTED, 5, np.mean, 0)),
        "sps_sqrt_n_n": (tf.sparse.segment_sqrt_n(y, idx, SORTED, num_segments=3),
                         _seg_ref(Y[idx], SORTED, 3, _sqrt_n, 0)),
        "euclid": (tf.reduce_euclidean_norm(y, 1), np.linalg.norm(Y, axis=1)),
        "cross": (tf.cross(y, x), np.cross(Y, X)),
        "linalg_cross": (tf.linalg.cross(y[:2], y[2:]), np.cross(Y[:2], Y[2:])),
        "lbeta": (tf.lbeta(x), scipy.special.gammaln(X).sum(-1)
                  - scipy.special.gammaln(X.sum(-1))),
        "igamma": (tf.igamma(x, tf.abs(x + y)), scipy.special.gammainc(X, np.abs(X + Y))),
        "igammac": (tf.math.igammac(x, 2.0 * x), scipy.special.gammaincc(X, 2 * X)),
        "polygamma": (tf.polygamma(tf.constant([[0.0], [1.0], [2.0], [3.0]]), x),
                      scipy.special.polygamma(np.arange(4)[:, None], X)),
        "polygamma_nan": (tf.math.polygamma(tf.constant([0.5, -1.0]), tf.constant([2.0, 2.0])),
                          np.array([np.nan, np.nan], np.float32)),
        "zeta": (tf.zeta(x + 1.0, x), scipy.special.zeta(X + 1, X)),
        "i0e": (tf.math.bessel_i0e(y), scipy.special.i0e(Y)),
        "i1e": (tf.math.bessel_i1e(y), scipy.special.i1e(Y)),
        "nextafter": (tf.math.nextafter(y, x), np.nextafter(Y, X)),
        "polyval": (tf.math.polyval([2.0, -1.0, 0.5], y), 2 * Y * Y - Y + 0.5),
        "polyval_empty": (tf.math.polyval([], y), np.zeros_like(Y)),
        "global_norm": (tf.linalg.global_norm([x, y]), np.sqrt((X * X).sum() + (Y * Y).sum())),
        "matrix_transpose": (tf.linalg.matrix_transpose(w), W.T),
        "cholesky_solve": (tf.linalg.cholesky_solve(tf.cholesky(spd), y[:3]),
                           np.linalg.solve(SPD, Y[:3])),
        "pinv": (tf.linalg.pinv(w), np.linalg.pinv(W)),
        "pinv_rank1": (tf.linalg.pinv(tf.constant([[1.0, 2.0], [2.0, 4.0]])),
                       np.linalg.pinv(np.array([[1.0, 2.0], [2.0, 4.0]])).astype(np.float32)),
        "lstsq_tall": (tf.linalg.lstsq(w, w[:, :1]), _lstsq_ref(W, W[:, :1], 0)),
        "lstsq_reg": (tf.matrix_solve_ls(w, w[:, 1:], l2_regularizer=0.5),
                      _lstsq_ref(W, W[:, 1:], 0.5)),
        "lstsq_wide": (tf.linalg.lstsq(tf.transpose(w), y[:3, :2], l2_regularizer=0.1),
                       _lstsq_ref(W.T, Y[:3, :2], 0.1)),
        "lstsq_svd": (tf.linalg.lstsq(w, w[:, :2], fast=False), np.linalg.lstsq(
            W.astype(np.float64), W[:, :2].astype(np.float64), rcond=None)[0]),
        "expm64": (tf.linalg.expm(e), np.stack([scipy.linalg.expm(m) for m in E64])),
        "expm32": (tf.linalg.expm(spd * 0.3), scipy.linalg.expm(SPD.astype(np.float64) * 0.3)),
    }


# sorted segment ids: the output's row count is data (executor-only ops)
EXECUTOR_ONLY = {"segment_mean", "segment_max", "segment_min", "segment_prod",
                 "segment_mean_int", "sps_sum", "sps_mean", "sps_sqrt_n", "segments_sorted"}


def _executor_only(k):
    return k in EXECUTOR_ONLY


def _both(build, keys):
    """{key: value} of build(keys) in the executor, and compiled on XLA_CPU for the keys
    that are not executor-only (those run in the executor again)."""
    compiled = [k for k in keys if not _executor_only(k)]
    ex, xl = run_executor_and_xla_cpu(lambda: build(compiled))
    g = tf.Graph()
    with g.as_default():
        fetches, feed = build([k for k in keys if _executor_only(k)])
        rest = tf.Session(graph=g).run(fetches, feed)
    return {**ex, **rest}, {**xl, **rest}


def test_values_executor_and_xla():
    def build(keys):
        ps = [tf.placeholder(tf.float32, a.shape) for a in (X, Y, W, SPD)]
        e = tf.placeholder(tf.float64, E64.shape)
        cases = _value_cases(*ps, e)
        return ({k: cases[k][0] for k in keys}, dict(zip(ps + [e], (X, Y, W, SPD, E64))))
    with tf.Graph().as_default():
        keys = sorted(_value_cases(*map(tf.constant, (X, Y, W, SPD, E64))))
    ex, xl = _both(build, keys)
    with tf.Graph().as_default():
        want = {k: v[1] for k, v in _value_cases(*map(tf.constant, (X, Y, W, SPD, E64)))
                .items()}
    for got in (ex, xl):
        for k, w in want.items():
            w = np.asarray(w)
            g = np.asarray(got[k])
            if w.dtype == np.float64 and g.dtype == np.float32:
                w = w.astype(np.float32)
            tol = 1e-10 if g.dtype == np.float64 else 3e-5
            if k == "nextafter":
                tol = 0.0
            assert_close(g, w, rtol=max(tol, 1e-4 if k.startswith(("lstsq", "pinv", "expm"))
                                        else tol), atol=max(tol, 1e-5 if k != "nextafter"
                                                            else 0.0), what=f"{k}: ")
    assert ex["nextafter"].dtype == np.float32
    assert np.all(ex["nextafter"] != Y)


C = {k: R.standard_normal((5, 3)) for k in range(10)}


GRAD_CASES = {  # name: (xlapy loss of (x, y, w) float64, jax loss of (x, y, w))
    "igamma": (lambda x, y, w: tf.reduce_sum(tf.igamma(x, x + tf.abs(y)) * C[0][:4]),
               lambda x, y, w: jnp.sum(jax.scipy.special.gammainc(x, x + jnp.abs(y))
                                       * C[0][:4])),
    "igammac_bcast": (lambda x, y, w: tf.reduce_sum(tf.igammac(x[0], x * 2.0) * C[1][:4]),
                      lambda x, y, w: jnp.sum(jax.scipy.special.gammaincc(x[0], x * 2.0)
                                              * C[1][:4])),
    "polygamma": (lambda x, y, w: tf.reduce_sum(tf.polygamma(tf.constant(
        np.array([1.0, 2.0, 0.0])), x) * C[2][:4]),
        lambda x, y, w: jnp.sum(jax.scipy.special.polygamma(jnp.array([1, 2, 0]), x)
                                * C[2][:4])),
    "bessel": (lambda x, y, w: tf.reduce_sum(tf.math.bessel_i0e(y) * C[3][:4])
               + tf.reduce_sum(tf.math.bessel_i1e(y * tf.constant([1.0, 0.0, 1.0],
                                                                  tf.float64)) * C[4][:4]),
               lambda x, y, w: jnp.sum(jax.scipy.special.i0e(y) * C[3][:4])
               + jnp.sum(jax.scipy.special.i1e(y * jnp.array([1.0, 0.0, 1.0])) * C[4][:4])),
    "lbeta_polyval_cross": (
        lambda x, y, w: tf.reduce_sum(tf.lbeta(x) * C[5][:4, 0])
        + tf.reduce_sum(tf.math.polyval([x, y, 2.0], y) * C[5][:4])
        + tf.reduce_sum(tf.cross(x, y) * C[6][:4]),
        lambda x, y, w: jnp.sum((jnp.sum(jax.scipy.special.gammaln(x), -1)
                                 - jax.scipy.special.gammaln(jnp.sum(x, -1))) * C[5][:4, 0])
        + jnp.sum((x * y * y + y * y + 2.0) * C[5][:4]) + jnp.sum(jnp.cross(x, y) * C[6][:4])),
    "segments_sorted": (
        lambda x, y, w: tf.reduce_sum(tf.segment_mean(y, SORTED) * C[7][:3])
        + tf.reduce_sum(tf.segment_max(y, SORTED) * C[7][1:4])
        + tf.reduce_sum(tf.math.segment_min(x, SORTED) * C[7][2:5])
        + tf.reduce_sum(tf.sparse_segment_sqrt_n(x, [3, 0, 1, 1], SORTED) * C[8][2:5]),
        lambda x, y, w: jnp.sum(jax.ops.segment_sum(y, SORTED, 3)
                                / jnp.array([2.0, 1.0, 2.0])[:, None] * C[7][:3])
        + jnp.sum(jnp.stack([jnp.max(y[:2], 0), jnp.zeros(3), jnp.max(y[2:], 0)]) * C[7][1:4])
        + jnp.sum(jnp.stack([jnp.min(x[:2], 0), jnp.zeros(3), jnp.min(x[2:], 0)]) * C[7][2:5])
        + jnp.sum(jax.ops.segment_sum(x[jnp.array([3, 0, 1, 1])], SORTED, 3)
                  / jnp.sqrt(jnp.array([2.0, 1.0, 2.0]))[:, None] * C[8][2:5])),
    "segments": (
        lambda x, y, w: tf.reduce_sum(tf.unsorted_segment_sqrt_n(y, UNSORTED, 3) * C[8][:3])
        + tf.reduce_sum(tf.math.unsorted_segment_mean(x, UNSORTED, 3) * C[8][1:4])
        + tf.reduce_sum(tf.sparse_segment_mean(y, [3, 0, 1, 1], SORTED, num_segments=4)
                        * C[9][:4]),
        lambda x, y, w: jnp.sum(jnp.stack([y[3], y[0] + y[2], jnp.zeros(3)]) / jnp.sqrt(
            jnp.array([1.0, 2.0, 1.0]))[:, None] * C[8][:3])
        + jnp.sum(jnp.stack([x[3], (x[0] + x[2]) / 2, jnp.zeros(3)]) * C[8][1:4])
        + jnp.sum(jax.ops.segment_sum(y[jnp.array([3, 0, 1, 1])], SORTED, 4)
                  / jnp.array([2.0, 1.0, 2.0, 1.0])[:, None] * C[9][:4])),
    "useg_prod": (  # a segment with one zero, one with two, one without
        lambda x, y, w: tf.reduce_sum(tf.unsorted_segment_prod(
            y * tf.constant([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0],
                             [1.0, 1.0, 1.0]], tf.float64), [0, 0, 1, -1], 2) * C[9][:2]),
        lambda x, y, w: jnp.sum(jnp.stack([
            (y * jnp.array([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1, 1, 1], [1, 1, 1]]))[0]
            * (y * jnp.array([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1, 1, 1], [1, 1, 1]]))[1],
            y[2]]) * C[9][:2])),
    "linalg": (
        lambda x, y, w: tf.reduce_sum(tf.linalg.pinv(w) * C[0].T)
        + tf.reduce_sum(tf.linalg.lstsq(w, w[:, :2], l2_regularizer=0.3)
                        * C[1][:3, :2])
        + tf.reduce_sum(tf.linalg.cholesky_solve(
            tf.cholesky(tf.matmul(w, w, transpose_a=True) + tf.eye(3, dtype=tf.float64)),
            y[:3]) * C[2][:3]),
        lambda x, y, w: jnp.sum(jnp.linalg.pinv(w) * C[0].T)
        + jnp.sum(jnp.linalg.solve(w.T @ w + 0.3 * jnp.eye(3), w.T @ w[:, :2])
                  * C[1][:3, :2])
        + jnp.sum(jnp.linalg.solve(w.T @ w + jnp.eye(3), y[:3]) * C[2][:3])),
    "expm": (lambda x, y, w: tf.reduce_sum(tf.linalg.expm(tf.reshape(y[:3] * 1.5, [1, 3, 3]))
                                           * C[3][:3]),
             lambda x, y, w: jnp.sum(jax.scipy.linalg.expm(y[:3] * 1.5) * C[3][:3])),
}


def test_gradients_against_jax():
    x0, y0, w0 = X.astype(np.float64), Y.astype(np.float64), W.astype(np.float64)
    keys = sorted(GRAD_CASES)

    def build(keys):
        x, y, w = (tf.placeholder(tf.float64, a.shape) for a in (x0, y0, w0))
        out = {}
        for k in keys:
            gs = tf.gradients(GRAD_CASES[k][0](x, y, w), [x, y, w])
            out[k] = [tf.zeros_like(v) if g is None else g for g, v in zip(gs, (x, y, w))]
        return out, {x: x0, y: y0, w: w0}
    want = {k: jax.jit(jax.grad(GRAD_CASES[k][1], argnums=(0, 1, 2)))(x0, y0, w0)
            for k in keys}
    for got in _both(build, keys):
        for k in keys:
            for i, (g, w) in enumerate(zip(got[k], want[k])):
                assert_close(g, np.asarray(w), 1e-6, 1e-8, what=f"d{k}[{i}]: ")


def test_closed_form_gradients():
    """Zeta's gradient in q (-x zeta(x+1, q)), none in x; polygamma's none in a; nextafter
    none; TF 1.15 defines none for SegmentProd."""
    with tf.Graph().as_default():
        x, q = tf.constant(X.astype(np.float64) + 1.0), tf.constant(X.astype(np.float64))
        gx, gq = tf.gradients(tf.reduce_sum(tf.zeta(x, q)), [x, q])
        a = tf.constant([1.0, 2.0, 3.0], tf.float64)
        ga, = tf.gradients(tf.reduce_sum(tf.polygamma(a, q)), [a])
        y = tf.constant(Y)
        with pytest.raises(LookupError):
            tf.gradients(tf.reduce_sum(tf.math.nextafter(y, y + 1.0)), [y])
        with pytest.raises(LookupError):
            tf.gradients(tf.reduce_sum(tf.segment_prod(y, SORTED)), [y])
        v = tf.Session().run(gq)
    assert gx is None and ga is None
    x0 = X.astype(np.float64)
    assert_close(v, -(x0 + 1) * scipy.special.zeta(x0 + 2, x0), 1e-10, 1e-12)


def _rows(st):
    """{batch index: sorted values} of a SparseTensorValue."""
    out: dict = {}
    for i, v in zip(st.indices, st.values):
        out.setdefault(tuple(i[:-1]), []).append((i[-1], v))
    return {k: [v for _, v in sorted(r)] for k, r in out.items()}


def _set_ref(a, b, op):
    res = {}
    for idx in np.ndindex(*a.shape[:-1]):
        sa, sb = set(a[idx].tolist()), set(b[idx].tolist())
        r = sorted({"i": sa & sb, "u": sa | sb, "d": sa - sb, "r": sb - sa}[op])
        if r:
            res[idx] = r
    return res


def test_sets():
    a = np.array([[[1, 2, 2], [3, 4, 9]], [[7, 7, 7], [0, 5, 1]]], np.int64)
    b = np.array([[[2, 5, 1], [4, 4, 4]], [[8, 6, 9], [5, 0, 1]]], np.int64)
    sa = tf.SparseTensorValue([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 2]],
                              np.array([4, 2, 3, 1], np.int64), [2, 2, 5])
    sb = tf.SparseTensorValue([[0, 0, 0], [0, 1, 0], [1, 0, 0]],
                              np.array([2, 8, 7], np.int64), [2, 2, 3])
    dense_sa = {(0, 0): [2, 4], (0, 1): [3], (1, 1): [1]}
    dense_sb = {(0, 0): [2], (0, 1): [8], (1, 0): [7]}
    with tf.Graph().as_default():
        ta, tb = tf.constant(a), tf.constant(b)
        outs = {
            "i": tf.sets.set_intersection(ta, tb), "u": tf.sets.union(ta, tb),
            "d": tf.sets.set_difference(ta, tb), "r": tf.sets.difference(ta, tb, False),
            "strs": tf.sets.intersection(tf.constant([["a", "b", "c"]]),
                                         tf.constant([["c", "a", "x"]])),
            "size": tf.sets.set_size(tf.SparseTensor(*sa)), "size2": tf.sets.size(sa),
            "sp_u": tf.sets.set_union(sa, sb), "sp_d": tf.sets.set_difference(sa, ta),
            "ds_d": tf.sets.set_difference(ta, sb), "ds_i": tf.sets.set_intersection(sb, ta),
        }
        got = tf.Session().run(outs)
    for k in "iudr":
        ref = _set_ref(a, b, k)
        assert _rows(got[k]) == ref, k
        assert list(got[k].dense_shape) == [2, 2, max(len(v) for v in ref.values())]
        assert got[k].values.dtype == np.int64
    assert _rows(got["strs"]) == {(0,): [b"a", b"c"]}
    assert list(got["strs"].dense_shape) == [1, 2]
    np.testing.assert_array_equal(got["size"], [[2, 1], [0, 1]])
    assert got["size"].dtype == np.int32
    np.testing.assert_array_equal(got["size2"], got["size"])
    union = {k: sorted(set(dense_sa.get(k, [])) | set(dense_sb.get(k, [])))
             for k in set(dense_sa) | set(dense_sb)}
    assert _rows(got["sp_u"]) == union
    assert _rows(got["sp_d"]) == {k: sorted(set(v) - set(a[k].tolist()))
                                  for k, v in dense_sa.items() if set(v) - set(a[k].tolist())}
    assert _rows(got["ds_d"]) == {k: sorted(set(a[k].tolist()) - set(dense_sb.get(k, [])))
                                  for k in np.ndindex(2, 2)
                                  if set(a[k].tolist()) - set(dense_sb.get(k, []))}
    assert _rows(got["ds_i"]) == {k: sorted(set(a[k].tolist()) & set(v))
                                  for k, v in dense_sb.items() if set(a[k].tolist()) & set(v)}


def _lev(s, t):
    d = np.arange(len(t) + 1)
    for i, x in enumerate(s, 1):
        prev, d = d, np.concatenate([[i], np.zeros(len(t), int)])
        for j, y in enumerate(t, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (x != y))
    return d[-1]


def test_edit_distance():
    hyp = {(0, 0): [b"a"], (1, 0): [b"b", b"c", b"d"], (1, 1): [b"x", b"y"]}
    tru = {(0, 0): [], (0, 1): [b"a", b"b"], (1, 0): [b"b", b"d"], (1, 1): [b"y", b"x", b"z"]}

    def st(d, shape):
        idx = [list(k) + [j] for k, v in sorted(d.items()) for j in range(len(v))]
        vals = [x for _, v in sorted(d.items()) for x in v]
        return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, 3), vals, shape)

    with tf.Graph().as_default():
        h, t = st(hyp, [2, 2, 3]), st(tru, [2, 2, 3])
        norm = tf.edit_distance(h, t)
        raw = tf.edit_distance(h, t, normalize=False)
        ints = tf.edit_distance(tf.SparseTensor([[0, 0], [0, 1]], [1, 2], [1, 2]),
                                tf.SparseTensor([[0, 0], [0, 1], [0, 2]], [1, 3, 2], [1, 3]))
        assert norm.shape.as_list() == [2, 2] and norm.dtype == tf.float32
        n, r, i = tf.Session().run([norm, raw, ints])
    want_raw = np.zeros((2, 2), np.float32)
    want_norm = np.zeros((2, 2), np.float32)
    for k in np.ndindex(2, 2):
        s, u = hyp.get(k, []), tru.get(k, [])
        want_raw[k] = _lev(s, u)
        want_norm[k] = want_raw[k] / len(u) if u else (np.inf if s else 0.0)
    assert_close(r, want_raw)
    assert_close(n, want_norm)
    assert_close(i, np.array([1 / 3], np.float32))


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError):
            tf.cross(tf.zeros([2, 4]), tf.zeros([2, 4]))
        with pytest.raises(InvalidTypeError):
            tf.cross(tf.zeros([3]), tf.zeros([3], tf.int32))
        with pytest.raises(InvalidTypeError):
            tf.igamma(tf.constant([1, 2]), tf.constant([1, 2]))
        with pytest.raises(InvalidTypeError):
            tf.zeta(tf.constant([1.0]), tf.constant([1.0], tf.float64))
        with pytest.raises(TypeError):
            tf.math.bessel_i0e(tf.constant([1, 2]))
        with pytest.raises(ValueError):
            tf.math.polyval(3.0, 1.0)
        with pytest.raises(InvalidArgumentError):
            tf.linalg.expm(tf.zeros([2, 3]))
        with pytest.raises(InvalidArgumentError):
            tf.linalg.lstsq(tf.zeros([3, 2]), tf.zeros([4, 1]))
        with pytest.raises(InvalidArgumentError):
            tf.linalg.pinv(tf.zeros([3]))
        with pytest.raises(TypeError):
            tf.sets.set_union(tf.constant([[1.0]]), tf.constant([[1.0]]))
        with pytest.raises(TypeError):
            tf.sets.set_size(tf.constant([[1, 2]]))
        with pytest.raises(InvalidArgumentError):
            tf.sets.set_union(tf.constant([1, 2]), tf.constant([1, 2]))
        with pytest.raises(TypeError):
            tf.edit_distance(tf.constant([[1]]), tf.constant([[1]]))
        with pytest.raises(InvalidTypeError):
            tf.sparse_segment_sum(tf.zeros([3]), tf.constant([0.0]), [0])
        with pytest.raises(InvalidArgumentError):
            tf.sparse_segment_sum(tf.zeros([3]), [0, 1], [0, 0, 0])
        with pytest.raises(InvalidArgumentError):
            tf.segment_max(tf.zeros([3, 2]), tf.zeros([3, 1], tf.int32))
        sess = tf.Session()
        with pytest.raises(InvalidArgumentError, match="not increasing"):
            sess.run(tf.segment_mean(tf.zeros([3]), [1, 0, 1]))
        with pytest.raises(InvalidArgumentError):
            sess.run(tf.segment_prod(tf.zeros([3]), [0, 1]))
        with pytest.raises(InvalidArgumentError, match="out of range"):
            sess.run(tf.unsorted_segment_prod(tf.zeros([3]), [0, 5, 1], 2))
        with pytest.raises(InvalidArgumentError):
            sess.run(tf.linalg.cholesky_solve(tf.cholesky(-tf.eye(2)), tf.ones([2, 1])))
        with pytest.raises(InvalidArgumentError):
            sess.run(tf.sets.set_union(tf.constant([[1, 2]]), tf.constant([[1], [2]])))
        with pytest.raises(InvalidArgumentError):
            sess.run(tf.edit_distance(tf.SparseTensor([[0, 0]], [1], [1, 1]),
                                      tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1])))
