"""tf.SparseTensor and the sparse ops: the composite's attributes, feeding and fetching
SparseTensorValues, every op against NumPy / SciPy references on random sparse inputs
(empty ones included) in the executor and with every op on XLA_CPU, TF's index errors,
gradients against dense formulations, embedding_lookup_sparse, string splitting, and a
bag-of-words linear classifier trained in the executor and as one compiled cluster."""

import numpy as np
import pytest
import scipy.sparse

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .conftest import jit_config
from . import helpers
from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(23)


def rand_sparse(shape, nnz, rng=R, dtype=np.float32, ordered=True):
    return helpers.rand_sparse(shape, nnz, rng, dtype, ordered)


def value(idx, vals, shape):
    return tf.SparseTensorValue(idx, vals, np.asarray(shape, np.int64))


def dense_of(v) -> np.ndarray:
    out = np.zeros(v.dense_shape, np.asarray(v.values).dtype)
    out[tuple(np.asarray(v.indices).T)] = v.values
    return out


# ---- the composite ---------------------------------------------------------------------------

def test_sparse_tensor_attributes_and_eval():
    sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    assert sp.dtype == tf.float32 and sp.values.dtype == tf.float32
    assert sp.shape == tf.TensorShape([3, 4]) and sp.get_shape().as_list() == [3, 4]
    assert sp.op is sp.values.op and sp.graph is tf.get_default_graph()
    assert sp.indices.op.name.startswith("SparseTensor/")
    with tf.Session():
        v = sp.eval()
    assert isinstance(v, tf.SparseTensorValue)
    assert_close(v.indices, np.array([[0, 0], [1, 2]], np.int64))
    assert_close(v.values, np.array([1.0, 2.0], np.float32))
    assert_close(v.dense_shape, np.array([3, 4], np.int64))
    assert isinstance(tf.sparse.SparseTensor.from_value(v), tf.SparseTensor)
    # a dense shape known only at run time
    s = tf.placeholder(tf.int64, [2])
    assert tf.SparseTensor([[0, 0]], [1.0], s).shape.as_list() == [None, None]


def test_sparse_tensor_checks_its_components():
    with pytest.raises(InvalidArgumentError):
        tf.SparseTensor([[0, 0], [1, 1]], [1.0], [2, 2])      # 2 indices, 1 value
    with pytest.raises(InvalidArgumentError):
        tf.SparseTensor([[0, 0]], [1.0], [2, 2, 2])          # rank 2 indices, rank 3 shape
    with pytest.raises(InvalidTypeError):
        tf.SparseTensor(tf.constant([[0, 0]]), [1.0], [2, 2])  # int32 indices tensor


def test_convert_to_tensor_refuses_a_sparse_tensor():
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    with pytest.raises(TypeError, match="Failed to convert object of type .*SparseTensor"):
        tf.convert_to_tensor(sp)
    with pytest.raises(TypeError):
        tf.reduce_sum(sp)
    assert tf.convert_to_tensor_or_sparse_tensor(sp) is sp


@pytest.mark.parametrize("shape", [None, [None, 5], [4, 5]])
def test_sparse_placeholder_feeds_and_fetches(shape):
    sp = tf.sparse_placeholder(tf.float32, shape=shape, name="sp")
    assert sp.values.shape.as_list() == [None]
    assert sp.indices.shape.as_list() == [None, None if shape is None else 2]
    if shape == [4, 5]:
        assert sp.shape.as_list() == [4, 5] and sp.dense_shape.op.type == "Const"
    else:
        assert sp.dense_shape.op.type == "Placeholder" and sp.dense_shape.op.name == "sp/shape"
    idx, vals, dense = rand_sparse((4, 5), 6)
    doubled = tf.SparseTensor(sp.indices, sp.values * 2.0, sp.dense_shape)
    sess = tf.Session()
    for fed in (value(idx, vals, [4, 5]), (idx, vals, np.array([4, 5])),
                [idx.tolist(), vals.tolist(), [4, 5]]):
        got = sess.run({"a": [sp, doubled], "d": tf.sparse.to_dense(sp)}, {sp: fed})
        a, b = got["a"]
        assert isinstance(a, tf.SparseTensorValue) and isinstance(b, tf.SparseTensorValue)
        assert_close(a.indices, idx)
        assert_close(a.values, vals)
        assert_close(a.dense_shape, np.array([4, 5], np.int64))
        assert_close(b.values, 2 * vals)
        assert_close(got["d"], dense)
    # fetched alone, and fed by a SparseTensor key that is not a placeholder
    c = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    got = sess.run(c, {c: value(np.array([[1, 1]]), np.array([5.0], np.float32), [3, 3])})
    assert_close(dense_of(got), np.diag([0, 5.0, 0]).astype(np.float32))


def test_sparse_feed_errors():
    sp = tf.sparse_placeholder(tf.float32, name="sp")
    d = tf.sparse.to_dense(sp)
    sess = tf.Session()
    with pytest.raises(TypeError, match="SparseTensorValue"):
        sess.run(d, {sp: np.zeros((2, 2), np.float32)})
    with pytest.raises(TypeError, match="SparseTensorValue"):
        sess.run(d, {sp: (np.zeros((0, 2), np.int64), np.zeros(0, np.float32))})
    with pytest.raises(InvalidArgumentError, match="You must feed a value for placeholder "
                                                   "tensor 'sp/"):
        sess.run(d)
    with pytest.raises(InvalidArgumentError, match="Cannot feed value of shape"):
        sess.run(d, {sp: (np.zeros((2, 2), np.int64), np.zeros((2, 1), np.float32), [2, 2])})


# ---- ops against NumPy / SciPy, executor and XLA_CPU ------------------------------------------

SHAPE = (5, 6)


def _op_cases(sp, sp3, dense_b, sp_u):
    """name: tensor (or SparseTensor) built from the fed sparse inputs."""
    return {
        "to_dense": tf.sparse.to_dense(sp),
        "to_dense_default": tf.sparse_tensor_to_dense(sp, default_value=-1.0),
        "to_dense_none": tf.sparse.to_dense(sp, default_value=None),
        "matmul": tf.sparse_tensor_dense_matmul(sp, dense_b["b"]),
        "matmul_adj_a": tf.sparse_tensor_dense_matmul(sp, dense_b["ba"], adjoint_a=True),
        "matmul_adj_b": tf.sparse_tensor_dense_matmul(sp, dense_b["bb"], adjoint_b=True),
        "matmul_adj_ab": tf.sparse.sparse_dense_matmul(sp, dense_b["bab"], adjoint_a=True,
                                                       adjoint_b=True),
        "sum0": tf.sparse_reduce_sum(sp, 0),
        "sum1_keep": tf.sparse.reduce_sum(sp, axis=1, keepdims=True),
        "sum_all": tf.sparse_reduce_sum(sp),
        "sum3_02": tf.sparse.reduce_sum(sp3, [0, -1]),
        "add_dense": tf.sparse_add(sp, dense_b["d"]),
        "add_dense_first": tf.sparse.add(dense_b["d"], sp),
        "reorder": tf.sparse_reorder(sp_u),
        "reshape": tf.sparse_reshape(sp, [3, -1, 2]),
        "reshape_flat": tf.sparse.reshape(sp3, [-1]),
        "concat0": tf.sparse_concat(0, [sp, sp]),
        "concat1": tf.sparse.concat(1, [sp, sp, sp]),
        "transpose": tf.sparse.transpose(sp),
    }


def _refs(a, a3, b, u):
    (ai, av, ad), (_, _, a3d), (ui, uv, _) = a, a3, u
    csr = scipy.sparse.coo_matrix((av, (ai[:, 0], ai[:, 1])), shape=SHAPE).tocsr()
    order = np.lexsort(ui.T[::-1])
    return {
        "to_dense": ad,
        "to_dense_default": np.where(_mask(ai, SHAPE), ad, -1.0).astype(np.float32),
        "to_dense_none": ad,
        "matmul": csr @ b["b"],
        "matmul_adj_a": csr.T @ b["ba"],
        "matmul_adj_b": csr @ b["bb"].T,
        "matmul_adj_ab": csr.T @ b["bab"].T,
        "sum0": ad.sum(0),
        "sum1_keep": ad.sum(1, keepdims=True),
        "sum_all": ad.sum(),
        "sum3_02": a3d.sum((0, 2)),
        "add_dense": ad + b["d"],
        "add_dense_first": ad + b["d"],
        "reorder": (ui[order], uv[order], SHAPE),
        "reshape": _sparse_of(ad.reshape(3, -1, 2)),
        "reshape_flat": _sparse_of(a3d.reshape(-1)),
        "concat0": _sparse_of(np.concatenate([ad, ad], 0)),
        "concat1": _sparse_of(np.concatenate([ad, ad, ad], 1)),
        "transpose": _sparse_of(ad.T),
    }


def _mask(idx, shape):
    m = np.zeros(shape, bool)
    m[tuple(idx.T)] = True
    return m


def _sparse_of(d):
    """The row-major (indices, values, shape) of a dense array's nonzeros."""
    idx = np.argwhere(d != 0).astype(np.int64)
    return idx, d[tuple(idx.T)], d.shape


@pytest.mark.parametrize("nnz", [0, 1, 11, 30])
def test_ops_match_references_executor_and_xla(nnz):
    rng = np.random.default_rng(nnz)
    a = rand_sparse(SHAPE, nnz, rng)
    a3 = rand_sparse((3, 4, 2), min(nnz, 24), rng)
    u = rand_sparse(SHAPE, nnz, rng, ordered=False)
    b = {"b": rng.standard_normal((6, 3)).astype(np.float32),
         "ba": rng.standard_normal((5, 3)).astype(np.float32),
         "bb": rng.standard_normal((3, 6)).astype(np.float32),
         "bab": rng.standard_normal((3, 5)).astype(np.float32),
         "d": rng.standard_normal(SHAPE).astype(np.float32)}

    def build():
        sp = tf.sparse_placeholder(tf.float32, [None, 6], name="a")   # shape fed
        sp3 = tf.sparse_placeholder(tf.float32, [3, 4, 2], name="a3")  # shape constant
        sp_u = tf.sparse_placeholder(tf.float32, name="u")
        phs = {k: tf.placeholder(tf.float32, v.shape, name=k) for k, v in b.items()}
        feed = {sp: value(a[0], a[1], SHAPE), sp3: value(a3[0], a3[1], (3, 4, 2)),
                sp_u: value(u[0], u[1], SHAPE), **{phs[k]: b[k] for k in b}}
        return _op_cases(sp, sp3, phs, sp_u), feed

    ex, xla = run_executor_and_xla_cpu(build)
    refs = _refs(a, a3, b, u)
    for got in (ex, xla):
        for k, want in refs.items():
            g = got[k]
            if isinstance(want, tuple):
                assert isinstance(g, tf.SparseTensorValue), k
                assert_close(g.indices, np.asarray(want[0], np.int64).reshape(g.indices.shape),
                             what=f"{k} indices: ")
                assert_close(g.values, np.asarray(want[1], np.float32), what=f"{k} values: ")
                assert_close(g.dense_shape, np.asarray(want[2], np.int64), what=f"{k} shape: ")
            else:
                assert np.asarray(g).dtype == np.float32, k
                assert_close(g, np.asarray(want, np.float32), rtol=1e-5, atol=1e-5,
                             what=f"{k}: ")


def test_static_shapes_of_the_results():
    sp = tf.sparse_placeholder(tf.float32, [4, 6])
    b = tf.placeholder(tf.float32, [6, 3])
    assert tf.sparse_tensor_dense_matmul(sp, b).shape.as_list() == [4, 3]
    assert tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 2]), adjoint_a=True).shape \
        .as_list() == [6, 2]
    assert tf.sparse.to_dense(sp).shape.as_list() == [4, 6]
    assert tf.sparse.reduce_sum(sp, 1).shape.as_list() == [4]
    assert tf.sparse.reduce_sum(sp, 0, keepdims=True).shape.as_list() == [1, 6]
    assert tf.sparse.reduce_sum(sp).shape.as_list() == []
    assert tf.sparse_reshape(sp, [2, -1]).indices.shape.as_list() == [None, 2]
    with pytest.raises(InvalidArgumentError, match="inner dimension does not match: 6 vs. 4"):
        tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 3]))
    with pytest.raises(InvalidArgumentError, match="requires a multiple of 5"):
        tf.sparse_reshape(sp, [-1, 5])


def test_concat_expanding_the_other_dims_and_add_shape_errors():
    a = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
    b = tf.SparseTensor([[0, 2], [2, 0]], [3.0, 4.0], [3, 3])
    c = tf.sparse_concat(1, [a, b], expand_nonconcat_dim=True)
    got = tf.Session().run(tf.sparse.to_dense(c))
    want = np.zeros((3, 5), np.float32)
    want[:2, :2] = [[0, 1], [2, 0]]
    want[0, 4], want[2, 2] = 3, 4
    assert_close(got, want)
    with pytest.raises(InvalidArgumentError, match="Input shapes must match"):
        tf.sparse_concat(1, [a, b])
    with pytest.raises(InvalidArgumentError, match="no broadcasting"):
        tf.sparse_add(a, tf.ones([2, 3]))
    fed = tf.sparse_placeholder(tf.float32)
    with pytest.raises(InvalidArgumentError, match="Dimension 1 does not equal"):
        tf.Session().run(tf.sparse_add(fed, tf.ones([2, 3])),
                         {fed: ([[0, 0]], [1.0], [2, 2])})


def test_sparse_to_dense_forms():
    def build():
        i1 = tf.placeholder(tf.int64, [None])
        i2 = tf.placeholder(tf.int32, [None, 2])
        v = tf.placeholder(tf.float32, [None])
        return {
            "vec": tf.sparse_to_dense(i1, [6], v),
            "scalar_value": tf.sparse_to_dense(i1, [6], 7, default_value=-1),
            "scalar_index": tf.sparse_to_dense(3, [5], 2.0),
            "matrix": tf.sparse_to_dense(i2, [3, 2], [5, 6]),
        }, {i1: [0, 2, 5], i2: [[0, 1], [2, 0]], v: [1.0, 2.0, 3.0]}
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["vec"], np.array([1, 0, 2, 0, 0, 3], np.float32))
        assert_close(got["scalar_value"], np.array([7, -1, 7, -1, -1, 7], np.int32))
        assert_close(got["scalar_index"], np.array([0, 0, 0, 2, 0], np.float32))
        assert_close(got["matrix"], np.array([[0, 5], [0, 0], [6, 0]], np.int32))


# ---- TF's index checks ---------------------------------------------------------------------------

def test_validate_indices_errors():
    sp = tf.sparse_placeholder(tf.float32, [3, 4])
    d = tf.sparse.to_dense(sp)
    loose = tf.sparse.to_dense(sp, validate_indices=False)
    sess = tf.Session()
    v = np.ones(3, np.float32)
    with pytest.raises(InvalidArgumentError,
                       match=r"indices\[1\] = \[0,2\] is out of order"):
        sess.run(d, {sp: (np.array([[1, 0], [0, 2], [2, 2]]), v, [3, 4])})
    with pytest.raises(InvalidArgumentError, match=r"indices\[2\] = \[1,3\] is repeated"):
        sess.run(d, {sp: (np.array([[0, 0], [1, 3], [1, 3]]), v, [3, 4])})
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[1,4\] is out of bounds: "
                                                   r"need 0 <= index < \[3,4\]"):
        sess.run(d, {sp: (np.array([[0, 0], [1, 4], [2, 0]]), v, [3, 4])})
    # unordered indices are fine without validation (and with a reorder first)
    unordered = (np.array([[2, 1], [0, 2], [1, 0]]), np.array([1, 2, 3], np.float32), [3, 4])
    want = np.zeros((3, 4), np.float32)
    want[2, 1], want[0, 2], want[1, 0] = 1, 2, 3
    assert_close(sess.run(loose, {sp: unordered}), want)
    assert_close(sess.run(tf.sparse.to_dense(tf.sparse.reorder(sp)), {sp: unordered}), want)
    # the matmul checks its indices against the operands
    mm = tf.sparse_tensor_dense_matmul(sp, tf.ones([4, 2]))
    with pytest.raises(InvalidArgumentError, match=r"k \(4\) from index\[1,1\] out of bounds "
                                                   r"\(>=4\)"):
        sess.run(mm, {sp: (np.array([[0, 0], [1, 4]]), v[:2], [3, 4])})
    with pytest.raises(InvalidArgumentError, match=r"m \(3\) from index\[0,0\] out of bounds "
                                                   r"\(>=3\)"):
        sess.run(mm, {sp: (np.array([[3, 0]]), v[:1], [3, 4])})


def test_compiled_ops_drop_out_of_range_entries():
    # XLA's scatters drop what the executor's kernels reject (as TF's XLA kernels do)
    def build():
        sp = tf.sparse_placeholder(tf.float32, [2, 3])
        return {"d": tf.sparse.to_dense(sp, validate_indices=False),
                "mm": tf.sparse_tensor_dense_matmul(sp, tf.ones([3, 1]))}, \
            {sp: (np.array([[0, 1], [-1, 0], [1, 2]]), np.array([1.0, 2.0, 3.0]), [2, 3])}
    g = tf.Graph()
    with g.as_default(), tf.device("/device:XLA_CPU:0"):
        fetches, feed = build()
    with g.as_default():
        got = tf.Session(graph=g).run(fetches, feed)
    assert_close(got["d"], np.array([[0, 1, 0], [0, 0, 3]], np.float32))
    assert_close(got["mm"], np.array([[1], [3]], np.float32))
    fetches, feed = build()   # the executor checks the bounds
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[-1,0\] is out of "
                                                   "bounds"):
        tf.Session().run(fetches["d"], feed)


# ---- gradients -----------------------------------------------------------------------------------

def _dense_from(sp, shape):
    """The same dense matrix, built from ops with known gradients (ScatterNd)."""
    return tf.scatter_nd(sp.indices, sp.values, shape)


@pytest.mark.parametrize("adj_a,adj_b", [(False, False), (True, False), (False, True),
                                         (True, True)])
def test_matmul_gradients_match_the_dense_formulation(adj_a, adj_b):
    rng = np.random.default_rng(5)
    idx, vals, dense = rand_sparse((4, 5), 9, rng)
    bshape = {(False, False): (5, 3), (True, False): (4, 3), (False, True): (3, 5),
              (True, True): (3, 4)}[(adj_a, adj_b)]
    bv = rng.standard_normal(bshape).astype(np.float32)
    w = rng.standard_normal((5 if adj_a else 4, 3)).astype(np.float32)
    sp = tf.SparseTensor(idx, tf.constant(vals), [4, 5])
    b = tf.constant(bv)
    y = tf.sparse_tensor_dense_matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b)
    yd = tf.matmul(_dense_from(sp, [4, 5]), b, transpose_a=adj_a, transpose_b=adj_b)
    loss = tf.reduce_sum(tf.sin(y) * w)
    loss_d = tf.reduce_sum(tf.sin(yd) * w)
    grads = tf.gradients(loss, [b, sp.values])
    grads_d = tf.gradients(loss_d, [b, sp.values])
    for cfg in (None, jit_config()):
        got, want, lv = tf.Session(config=cfg).run([grads, grads_d, [loss, loss_d]])
        assert_close(lv[0], lv[1], rtol=1e-5, atol=1e-5)
        assert_close(got, want, rtol=1e-5, atol=1e-5)
    # and numerically, for one value
    b_np = bv.T if adj_b else bv

    def f(v):
        d = np.zeros((4, 5))
        d[tuple(idx.T)] = v
        d = d.T if adj_a else d
        return float((np.sin(d @ b_np) * w).sum())
    e = np.zeros(9)
    e[3] = 1e-4
    num = (f(vals + e) - f(vals - e)) / 2e-4
    assert abs(got[1][3] - num) < 1e-2 * max(1.0, abs(num))


def test_gradients_of_to_dense_reduce_sum_add_and_reorder():
    rng = np.random.default_rng(9)
    idx, vals, dense = rand_sparse((4, 5), 8, rng, ordered=False)
    order = np.lexsort(idx.T[::-1])
    v = tf.constant(vals)
    w = tf.constant(rng.standard_normal((4, 5)).astype(np.float32))
    d_sorted = tf.constant(idx[order])
    sp_sorted = tf.SparseTensor(d_sorted, tf.gather(v, order), [4, 5])
    sp = tf.SparseTensor(idx, v, [4, 5])
    dense_ref = _dense_from(sp, [4, 5])
    losses = {
        "to_dense": (tf.reduce_sum(tf.sparse.to_dense(sp_sorted, 0.5) * w),
                     tf.reduce_sum((dense_ref + 0.5 * (1.0 - _mask(idx, (4, 5)))) * w)),
        "reduce_sum": (tf.reduce_sum(tf.sparse.reduce_sum(sp, 1) * w[:, 0]),
                       tf.reduce_sum(tf.reduce_sum(dense_ref, 1) * w[:, 0])),
        "reduce_sum_keep": (tf.reduce_sum(tf.sparse.reduce_sum(sp, 0, keepdims=True) ** 2),
                            tf.reduce_sum(tf.reduce_sum(dense_ref, 0, keepdims=True) ** 2)),
        "add": (tf.reduce_sum(tf.sparse_add(sp, w) ** 2), tf.reduce_sum((dense_ref + w) ** 2)),
        "reorder": (tf.reduce_sum(tf.sparse.reorder(sp).values * tf.range(8.0)),
                    tf.reduce_sum(tf.gather(v, order) * tf.range(8.0))),
    }
    pairs = {}
    for k, (la, lb) in losses.items():
        for x, ga, gb in zip("vw", tf.gradients(la, [v, w]), tf.gradients(lb, [v, w])):
            assert (ga is None) == (gb is None), k
            if ga is not None:
                pairs[f"{k}/{x}"] = (ga, gb)
    assert set(pairs) == {"to_dense/v", "to_dense/w", "reduce_sum/v", "reduce_sum/w",
                          "reduce_sum_keep/v", "add/v", "add/w", "reorder/v"}
    for cfg in (None, jit_config()):
        got = tf.Session(config=cfg).run(pairs)
        for k, (a, b) in got.items():
            assert_close(a, b, rtol=1e-5, atol=1e-5, what=f"{k}: ")
    # the default value's gradient: every dense position not set
    dv = tf.constant(0.5)
    out = tf.sparse_to_dense(d_sorted, [4, 5], tf.gather(v, order), dv)
    g = tf.Session().run(tf.gradients(tf.reduce_sum(out * w), dv)[0])
    wv = tf.Session().run(w)
    assert_close(g, wv[~_mask(idx, (4, 5))].sum(), rtol=1e-5)


# ---- sparse + sparse, retain, from_dense ---------------------------------------------------------

def test_sparse_add_of_two_sparse_tensors():
    rng = np.random.default_rng(3)
    ai, av, ad = rand_sparse((4, 5), 7, rng)
    bi, bv, bd = rand_sparse((4, 5), 6, rng)
    bi = np.concatenate([bi, ai[:2]])              # two shared entries, one cancelling
    bv = np.concatenate([bv, [-av[0], 1.0]]).astype(np.float32)
    order = np.lexsort(bi.T[::-1])
    bi, bv = bi[order], bv[order]
    a = tf.SparseTensor(ai, tf.constant(av), [4, 5])
    b = tf.SparseTensor(bi, tf.constant(bv), [4, 5])
    s = tf.sparse_add(a, b)
    s_thresh = tf.sparse.add(a, b, threshold=1e-3)
    w = tf.constant(rng.standard_normal((4, 5)).astype(np.float32))
    loss = tf.reduce_sum(tf.sparse.to_dense(s) * w)
    ga, gb = tf.gradients(loss, [a.values, b.values])
    got = tf.Session().run([s, s_thresh, ga, gb, w])
    want = (scipy.sparse.coo_matrix((av, tuple(ai.T)), (4, 5)) +
            scipy.sparse.coo_matrix((bv, tuple(bi.T)), (4, 5))).toarray()
    assert_close(dense_of(got[0]), want, rtol=1e-6)
    assert len(got[0].values) == len({tuple(r) for r in np.concatenate([ai, bi]).tolist()})
    assert np.all(np.diff(got[0].indices[:, 0] * 5 + got[0].indices[:, 1]) > 0)  # ordered
    assert len(got[1].values) == len(got[0].values) - 1   # the cancelled entry is dropped
    wv = got[4]
    assert_close(got[2], wv[tuple(ai.T)])
    assert_close(got[3], wv[tuple(bi.T)])
    with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
        tf.sparse_add(tf.ones([2]), tf.ones([2]))


def test_retain_and_from_dense():
    rng = np.random.default_rng(4)
    idx, vals, dense = rand_sparse((4, 5), 9, rng)
    keep = rng.random(9) < 0.5
    sp = tf.sparse_placeholder(tf.float32, [4, 5])
    k = tf.placeholder(tf.bool, [None])
    d = tf.placeholder(tf.float32, [4, 5])
    got = tf.Session().run([tf.sparse_retain(sp, k), tf.sparse.retain(sp, k),
                            tf.sparse.from_dense(d)],
                           {sp: value(idx, vals, [4, 5]), k: keep, d: dense})
    assert_close(got[0].indices, idx[keep])
    assert_close(got[0].values, vals[keep])
    assert_close(got[1].values, vals[keep])
    assert_close(got[2].indices, idx)
    assert_close(got[2].values, vals)
    assert_close(got[2].dense_shape, np.array([4, 5], np.int64))


# ---- embedding_lookup_sparse ---------------------------------------------------------------------

def _ragged(rng, rows, vocab):
    """A [rows, max] SparseTensorValue of ids (every row non-empty) and weights."""
    idx, ids = [], []
    for r in range(rows):
        n = rng.integers(1, 5)
        ids += rng.integers(0, vocab, n).tolist()
        idx += [[r, j] for j in range(n)]
    idx = np.asarray(idx, np.int64)
    shape = [rows, int(idx[:, 1].max()) + 1]
    w = rng.uniform(0.5, 2.0, len(ids)).astype(np.float32)
    return idx, np.asarray(ids, np.int64), w, shape


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse(combiner, weighted):
    rng = np.random.default_rng(11)
    idx, ids, wv, shape = _ragged(rng, 6, 10)
    pv = rng.standard_normal((10, 3)).astype(np.float32)
    g_out = rng.standard_normal((6, 3)).astype(np.float32)
    params = tf.Variable(pv)
    sp_ids = tf.sparse_placeholder(tf.int64, name="ids")
    sp_w = tf.sparse_placeholder(tf.float32, name="w") if weighted else None
    out = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_w, combiner=combiner)
    loss = tf.reduce_sum(out * g_out)
    gp = tf.gradients(loss, params)[0]
    feed = {sp_ids: value(idx, ids, shape)}
    if weighted:
        feed[sp_w] = value(idx, wv, shape)
    w = wv if weighted else np.ones(len(ids), np.float32)
    want = np.zeros((6, 3))
    want_g = np.zeros((10, 3))
    for r in range(6):
        sel = idx[:, 0] == r
        denom = {"sum": 1.0, "mean": w[sel].sum(), "sqrtn": np.sqrt((w[sel] ** 2).sum())}
        want[r] = (pv[ids[sel]] * w[sel][:, None]).sum(0) / denom[combiner]
        for i, wi in zip(ids[sel], w[sel]):
            want_g[i] += g_out[r] * wi / denom[combiner]
    for cfg in (None, jit_config()):
        sess = tf.Session(config=cfg)
        sess.run(tf.global_variables_initializer())
        got, g = sess.run([out, gp], feed)
        assert_close(got, want.astype(np.float32), rtol=1e-5, atol=1e-5)
        assert_close(g, want_g.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_embedding_lookup_sparse_checks_its_arguments():
    sp = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(tf.ones([3, 2]), sp, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(tf.ones([3, 2]), tf.constant([1]), None)


# ---- strings -------------------------------------------------------------------------------------

def test_string_split():
    x = tf.placeholder(tf.string, [None])
    data = ["hello world", "a,b  c", "", "xyz"]
    sess = tf.Session()
    got = sess.run({"space": tf.string_split(x), "chars": tf.string_split(x, ", "),
                    "keep_empty": tf.string_split(x, ",", skip_empty=False),
                    "bytes": tf.string_split(x, ""), "v2": tf.strings.split(x),
                    "v2_sep": tf.strings.split(x, sep=","),
                    "max1": tf.strings.split(x, maxsplit=1)}, {x: data})

    def ref(rows):
        idx = [[i, j] for i, r in enumerate(rows) for j in range(len(r))]
        return (np.asarray(idx, np.int64).reshape(-1, 2),
                [t.encode() for r in rows for t in r],
                [len(rows), max(len(r) for r in rows)])
    cases = {
        "space": [["hello", "world"], ["a,b", "c"], [], ["xyz"]],
        "chars": [["hello", "world"], ["a", "b", "c"], [], ["xyz"]],
        "keep_empty": [["hello world"], ["a", "b  c"], [""], ["xyz"]],
        "bytes": [list("hello world"), list("a,b  c"), [], list("xyz")],
        "v2": [["hello", "world"], ["a,b", "c"], [], ["xyz"]],
        "v2_sep": [["hello world"], ["a", "b  c"], [""], ["xyz"]],
        "max1": [["hello", "world"], ["a,b", "c"], [], ["xyz"]],
    }
    for k, rows in cases.items():
        i, v, s = ref(rows)
        assert_close(got[k].indices, i, what=k)
        assert got[k].values.tolist() == v, k
        assert_close(got[k].dense_shape, np.asarray(s, np.int64), what=k)
    # a loop's repeated runs (a prepared run) encode str feeds too
    split = tf.string_split(x)
    for _ in range(3):
        got = sess.run(split.values, {x: np.array(["p q", "r"], object)})
        assert got.tolist() == [b"p", b"q", b"r"]
    # the tokens as a dense tensor of strings
    for default in ("", None, 0):
        d = sess.run(tf.sparse.to_dense(tf.string_split(x), default_value=default),
                     {x: ["a b", "c"]})
        assert d.tolist() == [[b"a", b"b"], [b"c", b""]]


def test_string_ops_stay_in_the_executor_under_xla(monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_min_cluster_size=1")
    x = tf.placeholder(tf.string, [None])
    sp = tf.string_split(x)
    words = tf.sparse.to_dense(sp, default_value="")
    n = tf.sparse.reduce_sum(tf.SparseTensor(sp.indices, tf.ones_like(sp.indices[:, 0]),
                                             sp.dense_shape), 1)
    sess = tf.Session(config=jit_config())
    summary = sess.cluster_summary([words, n], {x: ["a b"]})
    assert "SparseToDense (SparseToDense): string tensors (XLA has no string type)" in summary
    assert "SparseReduceSum" in summary.split("not clustered")[0]  # compiled
    got = sess.run([words, n], {x: ["a b c", "d"]})
    assert got[0].tolist() == [[b"a", b"b", b"c"], [b"d", b"", b""]]
    assert_close(got[1], np.array([3, 1], np.int64))


# ---- a bag-of-words linear classifier ------------------------------------------------------------

V, C = 60, 3


def _bow_batch(rng, n):
    """Documents of 4-9 words: a third of them from their class's 10 words, the rest from
    the 30 shared ones (separable by the class words)."""
    labels = rng.integers(0, C, n)
    idx, vals = [], []
    for r, y in enumerate(labels):
        words = np.concatenate([rng.integers(10 * y, 10 * y + 10, rng.integers(2, 4)),
                                rng.integers(30, 60, rng.integers(2, 6))])
        counts = np.bincount(words, minlength=V)
        for w in np.flatnonzero(counts):
            idx.append([r, w])
            vals.append(counts[w])
    return value(np.asarray(idx, np.int64), np.asarray(vals, np.float32), [n, V]), labels


def _classifier():
    x = tf.sparse_placeholder(tf.float32, [None, V], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    w = tf.Variable(tf.zeros([V, C]), name="W")
    b = tf.Variable(tf.zeros([C]), name="b")
    logits = tf.sparse_tensor_dense_matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.one_hot(y, C), logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return x, y, w, b, train, acc


def _train(cfg):
    g = tf.Graph()
    with g.as_default():
        x, y, w, b, train, acc = _classifier()
        sess = tf.Session(config=cfg)
        sess.run(tf.global_variables_initializer())
        rng = np.random.default_rng(0)
        for _ in range(60):
            bx, by = _bow_batch(rng, 32)
            sess.run(train, {x: bx, y: by})
        tx, ty = _bow_batch(np.random.default_rng(1), 200)
        return sess, (x, y, train), sess.run(acc, {x: tx, y: ty}), sess.run([w, b]), (bx, by)


def test_bag_of_words_classifier_executor_and_xla():
    _, _, acc_ex, wb_ex, _ = _train(None)
    sess, (x, y, train), acc_xla, wb_xla, (bx, by) = _train(jit_config())
    assert acc_ex >= 0.95, acc_ex
    assert acc_xla >= 0.95, acc_xla
    assert_close(wb_xla, wb_ex, rtol=1e-4, atol=1e-5)   # the same training, compiled
    # the training step is one compiled cluster: the matmul and its gradient included
    summary = sess.cluster_summary(train, {x: bx, y: by})
    assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
    plan = next(p for p in sess._plans.values()   # the training step's plan
                if any(op.type == "ApplyGradientDescent" for c in p.clusters
                       for op in c.cluster.ops))
    assert len(plan.clusters) == 1 and not plan.clustering.reasons, summary
    ops = plan.clusters[0].cluster.ops
    mm = [op for op in ops if op.type == "SparseTensorDenseMatMul"]
    assert len(mm) == 2 and {op.get_attr("adjoint_a") for op in mm} == {False, True}
    assert sum(op.type == "ApplyGradientDescent" for op in ops) == 2
    assert plan.clusters[0].compiles >= 1
