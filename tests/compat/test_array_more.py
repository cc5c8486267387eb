"""gather / gather_nd / scatter_nd / segment sums, top_k-based sorts, unique, where,
boolean_mask, split, range, linspace, reverse(_sequence), cumsum/cumprod, pad modes,
matrix_band_part, einsum, tensordot, meshgrid, sequence_mask, truncatediv, clipping and
norms, reduce_logsumexp, Print / print, tf.assign / scatter_update, and tensor-valued
indices: values against NumPy, gradients against JAX, in the executor and compiled."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .conftest import jit_config
from .helpers import assert_close, run_both

R = np.random.default_rng(41)
X = R.standard_normal((3, 4)).astype(np.float32)
I = np.array([2, 0, 2], np.int32)


def _cases(x, i):
    """name: (tensor, numpy reference)"""
    c = {
        "gather0": (tf.gather(x, i), X[I]),
        "gather1": (tf.gather(x, i, axis=1), X[:, I]),
        "gather_nd": (tf.gather_nd(x, [[0, 1], [2, 3]]), X[[0, 2], [1, 3]]),
        "scatter_nd": (tf.scatter_nd([[0], [2], [0]], x[:, :2], [4, 2]),
                       np.stack([X[0, :2] + X[2, :2], 0 * X[0, :2], X[1, :2], 0 * X[0, :2]])),
        "useg": (tf.unsorted_segment_sum(x, i, 4),
                 np.stack([X[1], 0 * X[0], X[0] + X[2], 0 * X[0]])),
        "sort": (tf.sort(x, axis=1), np.sort(X, 1)),
        "sort_desc": (tf.sort(x, axis=0, direction="DESCENDING"), -np.sort(-X, 0)),
        "argsort": (tf.argsort(x, axis=1), np.argsort(X, 1, kind="stable").astype(np.int32)),
        "split": (tuple(tf.split(x, 2, axis=1)), tuple(np.split(X, 2, 1))),
        "splitv": (tuple(tf.split(x, [1, -1], axis=1)), (X[:, :1], X[:, 1:])),
        "range": (tf.range(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32)),
        "range_f": (tf.range(1.0, 2.0, 0.25), np.arange(1, 2, 0.25, dtype=np.float32)),
        "linspace": (tf.linspace(0.0, 1.0, 5), np.linspace(0, 1, 5, dtype=np.float32)),
        "reverse": (tf.reverse(x, [1]), X[:, ::-1]),
        "revseq": (tf.reverse_sequence(x, [4, 2, 0], seq_axis=1, batch_axis=0),
                   np.stack([X[0, ::-1], np.r_[X[1, 1::-1], X[1, 2:]], X[2]])),
        "cumsum": (tf.cumsum(x, 1), np.cumsum(X, 1)),
        "cumsum_ex_rev": (tf.cumsum(x, 1, exclusive=True, reverse=True),
                          np.cumsum(X[:, ::-1], 1)[:, ::-1] - X),
        "cumprod": (tf.cumprod(x, 0), np.cumprod(X, 0)),
        "reflect": (tf.pad(x, [[1, 1], [2, 0]], mode="REFLECT"),
                    np.pad(X, [(1, 1), (2, 0)], mode="reflect")),
        "symmetric": (tf.pad(x, [[1, 1], [2, 0]], mode="SYMMETRIC"),
                      np.pad(X, [(1, 1), (2, 0)], mode="symmetric")),
        "pad_value": (tf.pad(x, [[1, 0], [0, 1]], constant_values=3.0),
                      np.pad(X, [(1, 0), (0, 1)], constant_values=3.0)),
        "band": (tf.matrix_band_part(x, 1, 0), np.tril(np.triu(X, -1))),
        "band_upper": (tf.matrix_band_part(x, 0, -1), np.triu(X)),
        "einsum": (tf.einsum("ij,kj->ik", x, x), X @ X.T),
        "einsum_sum": (tf.einsum("ij->j", x), X.sum(0)),
        "tensordot": (tf.tensordot(x, tf.transpose(x), 1), X @ X.T),
        "mesh": (tuple(tf.meshgrid(tf.range(3), tf.range(2))),
                 tuple(np.meshgrid(np.arange(3), np.arange(2)))),
        "mesh_ij": (tuple(tf.meshgrid(tf.range(3), tf.range(2), indexing="ij")),
                    tuple(np.meshgrid(np.arange(3), np.arange(2), indexing="ij"))),
        "seqmask": (tf.sequence_mask(i, 4), np.arange(4) < I[:, None]),
        "seqmask_f": (tf.sequence_mask(i, dtype=tf.float32),
                      (np.arange(2) < I[:, None]).astype(np.float32)),
        "tdiv": (tf.truncatediv(tf.constant([-7, 7, -7, 6]), tf.constant([2, -2, 3, 3])),
                 np.array([-3, -3, -2, 2], np.int32)),
        "tmod": (tf.truncatemod(tf.constant([-7, 7, -7]), tf.constant([2, -2, 3])),
                 np.array([-1, 1, -1], np.int32)),
        "clipv": (tf.clip_by_value(x, -0.5, 0.5), np.clip(X, -0.5, 0.5)),
        "clipn": (tf.clip_by_norm(x, 1.0), X / max(1.0, np.linalg.norm(X))),
        "clipn_axes": (tf.clip_by_norm(x, 1.0, axes=[1]),
                       X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))),
        "norm": (tf.norm(x, axis=1), np.linalg.norm(X, axis=1)),
        "norm1": (tf.norm(x, ord=1), np.abs(X).sum()),
        "lse": (tf.reduce_logsumexp(x, 1), np.log(np.exp(X).sum(1))),
        "lse_inf": (tf.reduce_logsumexp(tf.constant([[-np.inf, -np.inf], [1.0, -np.inf]])),
                    np.float32(1.0)),
        "getitem_t": (x[i[0]], X[I[0]]),
        "getitem_t2": (x[:, i[1] + 1], X[:, I[1] + 1]),
        "is_finite": (tf.is_finite(tf.constant([1.0, np.inf, np.nan])),
                      np.array([True, False, False])),
        "is_nan_inf": ((tf.is_nan(x / 0.0 * 0.0), tf.is_inf(tf.constant([1.0, -np.inf]))),
                       (np.ones((3, 4), bool), np.array([False, True]))),
        "count_nonzero": (tf.count_nonzero(tf.constant([[0, 1], [2, 0]]), axis=1),
                          np.array([1, 1], np.int64)),
    }
    gn = tf.clip_by_global_norm([x, x * 2], 1.0)
    total = np.sqrt(5) * np.linalg.norm(X)
    c["clip_global"] = ((gn[0][0], gn[0][1], gn[1]), (X / total, 2 * X / total, total))
    return c


def test_values_executor_and_xla():
    def build():
        x = tf.placeholder(tf.float32, [3, 4])
        i = tf.placeholder(tf.int32, [3])
        c = _cases(x, i)
        return {k: v[0] for k, v in c.items()}, {x: X, i: I}
    ex, xl, _, fetches, _ = run_both(build)
    g = tf.Graph()
    with g.as_default():
        refs = {k: v[1] for k, v in _cases(tf.constant(X), tf.constant(I)).items()}
    for got in (ex, xl):
        for k, want in refs.items():
            assert_close(got[k], want, rtol=1e-5, atol=1e-6, what=f"{k}: ")
            t = fetches[k]
            for gv, tt in zip(got[k] if isinstance(t, tuple) else [got[k]],
                              t if isinstance(t, tuple) else [t]):
                assert np.asarray(gv).dtype == tt.dtype.np, k
                assert tt.shape.is_compatible_with(np.shape(gv)), k


GRAD_CASES = {
    "gather1": (lambda x: tf.gather(x, [2, 0, 2], axis=1), lambda x: x[:, jnp.array([2, 0, 2])]),
    "gather_nd": (lambda x: tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]),
                  lambda x: x[jnp.array([0, 2, 0]), jnp.array([1, 3, 1])]),
    "useg": (lambda x: tf.unsorted_segment_sum(x, [2, 0, 2], 4),
             lambda x: jnp.zeros((4, 4)).at[jnp.array([2, 0, 2])].add(x)),
    "split": (lambda x: tf.split(x, [1, 3], 1)[1] * 2.0, lambda x: x[:, 1:] * 2.0),
    "reverse": (lambda x: tf.reverse(x, [0, 1]), lambda x: x[::-1, ::-1]),
    "revseq": (lambda x: tf.reverse_sequence(x, [4, 2, 1], seq_axis=1, batch_axis=0),
               lambda x: jnp.stack([x[0, ::-1], jnp.r_[x[1, 1::-1], x[1, 2:]], x[2]])),
    "cumsum": (lambda x: tf.cumsum(x, 1, exclusive=True), lambda x: jnp.cumsum(x, 1) - x),
    "cumprod": (lambda x: tf.cumprod(x, 0), lambda x: jnp.cumprod(x, 0)),
    "reflect": (lambda x: tf.pad(x, [[1, 2], [2, 1]], mode="REFLECT"),
                lambda x: jnp.pad(x, [(1, 2), (2, 1)], mode="reflect")),
    "symmetric": (lambda x: tf.pad(x, [[1, 2], [2, 1]], mode="SYMMETRIC"),
                  lambda x: jnp.pad(x, [(1, 2), (2, 1)], mode="symmetric")),
    "pad_value": (lambda x: tf.pad(x, [[1, 0], [0, 1]], constant_values=2.0),
                  lambda x: jnp.pad(x, [(1, 0), (0, 1)], constant_values=2.0)),
    "band": (lambda x: tf.matrix_band_part(x, 1, 1), lambda x: jnp.tril(jnp.triu(x, -1), 1)),
    "einsum": (lambda x: tf.einsum("ij,kj->ik", x, x * x), lambda x: x @ (x * x).T),
    "einsum_reduce": (lambda x: tf.einsum("ij,j->i", x, tf.reduce_sum(x, 0)),
                      lambda x: x @ x.sum(0)),
    "einsum_own_index": (lambda x: tf.einsum("ij,ik->k", x, x[:, :2]),
                         lambda x: jnp.einsum("ij,ik->k", x, x[:, :2])),
    "tensordot": (lambda x: tf.tensordot(x, x, [[0], [0]]), lambda x: x.T @ x),
    "clipn": (lambda x: tf.clip_by_norm(x, 1.0, axes=[1]),
              lambda x: x * 1.0 / jnp.maximum(jnp.linalg.norm(x, axis=1, keepdims=True), 1.0)),
    "norm": (lambda x: tf.norm(x, axis=0), lambda x: jnp.linalg.norm(x, axis=0)),
    "lse": (lambda x: tf.reduce_logsumexp(x, 0, keepdims=True),
            lambda x: jax.scipy.special.logsumexp(x, 0, keepdims=True)),
    "sort": (lambda x: tf.sort(x, axis=1), lambda x: jnp.sort(x, 1)),
    "top_k": (lambda x: tf.nn.top_k(x, 2).values, lambda x: jax.lax.top_k(x, 2)[0]),
    "getitem_dyn_batch": (lambda x: tf.reshape(x, [-1, 4])[:, 1:3] * 2.0,
                          lambda x: x[:, 1:3] * 2.0),
    "getitem_tensor": (lambda x: x[tf.constant(1)][:3] + x[:, tf.constant(2)],
                       lambda x: x[1][:3] + x[:, 2]),
}


def test_gradients_against_jax():
    keys = sorted(GRAD_CASES)
    consts = {}

    def build():
        x = tf.placeholder(tf.float32, [3, 4])
        out = {}
        for k in keys:
            y = GRAD_CASES[k][0](x)
            rng = np.random.default_rng(sum(map(ord, k)))
            c = rng.standard_normal(y.shape.as_list()).astype(np.float32)
            consts[k] = c
            out[k] = tf.gradients(tf.reduce_sum(y * c), x)[0]
        return out, {x: X}
    ex, xl, _, _, _ = run_both(build)

    @jax.jit
    def refs(x):
        return {k: jax.grad(lambda v, k=k: jnp.sum(GRAD_CASES[k][1](v) * consts[k]))(x)
                for k in keys}
    want = refs(X)
    for got in (ex, xl):
        for k in keys:
            assert_close(got[k], want[k], rtol=1e-4, atol=1e-5, what=f"{k}: ")


def test_unknown_batch_slicing_has_a_gradient():
    """x[:, a:b] of a [None, n] tensor (the issue's report): StridedSliceGrad takes the
    input's run-time shape."""
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(np.ones((2, 3), np.float32))
    y = tf.matmul(x[:, 1:3], w)
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    assert g.shape.as_list() == [None, 4]
    for cfg in (None, jit_config()):
        sess = tf.Session(config=cfg)
        sess.run(tf.global_variables_initializer())
        for n in (2, 5):
            assert_close(sess.run(g, {x: np.ones((n, 4), np.float32)}),
                         np.tile([0.0, 3.0, 3.0, 0.0], (n, 1)))


def test_executor_only_ops_unique_where_boolean_mask_segment_sum():
    x = tf.placeholder(tf.float32, [None, 2])
    ids = tf.constant([4, 1, 4, 7, 1])
    u = tf.unique(ids)
    m = tf.boolean_mask(x, x[:, 0] > 0)
    w = tf.where(x > 0)
    s = tf.segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 0, 2]))
    gm = tf.gradients(tf.reduce_sum(m * m), x)[0]
    xv = np.array([[1.0, -2.0], [-1.0, 3.0], [2.0, 0.5]], np.float32)
    sess = tf.Session(config=jit_config())
    summary = sess.cluster_summary([u, m, w, s, gm], {x: xv})
    assert "no XLA lowering for op type Unique" in summary
    assert "no XLA lowering for op type Where" in summary
    (uy, ui), mv, wv, sv, gv = sess.run([u, m, w, s, gm], {x: xv})
    assert_close(uy, [4, 1, 7]) and assert_close(ui, [0, 1, 0, 2, 1])
    assert_close(mv, xv[[0, 2]])
    assert_close(wv, np.argwhere(xv > 0).astype(np.int64))
    assert_close(sv, [3.0, 0.0, 3.0])
    assert_close(gv, 2 * xv * (xv[:, :1] > 0))


def test_index_errors_follow_tensorflow():
    x = tf.placeholder(tf.float32, [3, 4])
    sess = tf.Session()
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 3\)"):
        sess.run(tf.gather(x, [0, 5]), {x: X})
    with pytest.raises(InvalidArgumentError, match="out of range"):
        sess.run(tf.unsorted_segment_sum(x, [0, 1, 9], 4), {x: X})
    with pytest.raises(InvalidArgumentError, match="evenly divisible"):
        tf.split(x, 3, axis=1)
    with pytest.raises(InvalidTypeError, match="integer scalar"):
        _ = x[tf.constant([0, 1])]
    # compiled, an out-of-range gather index is clamped (XLA's semantics)
    with tf.device("/device:XLA_CPU:0"):
        y = tf.gather(x, [0, 5])
    assert_close(sess.run(y, {x: X}), X[[0, 2]])


def test_print_and_tf_print(capsys):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    y = tf.Print(x, [x, tf.reduce_sum(x)], message="values: ", summarize=2)
    p = tf.print("sum is", tf.reduce_sum(x))
    sess = tf.Session(config=jit_config())
    with tf.control_dependencies([p]):
        z = tf.identity(y * 2.0)
    assert_close(sess.run(z), [2.0, 4.0, 6.0, 8.0])
    err = capsys.readouterr().err
    assert "values: [1.0 2.0...][10.0]" in err and "sum is 10.0" in err
    assert "no XLA lowering for op type Print" in sess.cluster_summary(z)
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    assert_close(sess.run(g), 2 * np.arange(1.0, 5.0))


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_assign_and_scatter_updates(xla):
    v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    a = tf.assign(v, tf.ones([4, 2]))
    with tf.control_dependencies([a]):
        b = tf.assign_add(v, tf.fill([4, 2], 2.0))
    with tf.control_dependencies([b]):
        c = tf.assign_sub(v, tf.ones([4, 2]))
    with tf.control_dependencies([c]):
        d = tf.scatter_update(v, [3, 0], [[9.0, 9.0], [8.0, 8.0]])
    with tf.control_dependencies([d]):
        e = tf.scatter_add(v, [1, 1], [[1.0, 2.0], [1.0, 2.0]])
    with tf.control_dependencies([e]):
        f = tf.scatter_sub(v, [2], [[5.0, 5.0]])
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    sess.run(f)
    assert_close(sess.run(v), [[8.0, 8.0], [4.0, 6.0], [-3.0, -3.0], [9.0, 9.0]])
    with pytest.raises(InvalidTypeError, match="tf.Variable"):
        tf.assign(tf.constant(1.0), 2.0)


def test_boolean_mask_of_an_empty_row_keeps_its_shape():
    """Regression: the masked dims were reshaped to -1, which cannot be inferred beside a
    zero dim ([1, 0] masked over its first dim raised a reshape error at run time)."""
    x = tf.placeholder(tf.int32, [None, None])
    m = tf.placeholder(tf.bool, [None])
    y = tf.boolean_mask(x, m)
    with tf.Session() as sess:
        assert sess.run(y, {x: np.zeros((1, 0), np.int32), m: [True]}).shape == (1, 0)
        assert sess.run(y, {x: np.zeros((3, 0), np.int32), m: [True, False, True]}).shape \
            == (2, 0)
    z = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.boolean_mask(z, tf.placeholder(tf.bool, [None, 3])).shape.as_list() == [None, 4]
