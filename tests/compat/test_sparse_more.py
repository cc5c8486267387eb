"""TF 1.15's further sparse ops (ops/sparse_more*.py): tf.sparse.slice / split /
fill_empty_rows / softmax / maximum / minimum / to_indicator / merge / reset_shape /
expand_dims / eye / reduce_max / reduce_max_sparse / reduce_sum_sparse / cross /
cross_hashed, tf.sparse_mask, tf.sparse_matmul and the SparseTensor (de)serialization.
Values against NumPy references on random sparse inputs (ordered and not, empty ones),
the compositions compiled on XLA_CPU, gradients against hand-derived or numerical ones,
TF's published values for the hashed cross, and the error cases."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .conftest import jit_config
from . import helpers
from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(41)


def rand_sparse(shape, nnz, rng=R, dtype=np.float32, ordered=True):
    return helpers.rand_sparse(shape, nnz, rng, dtype, ordered)


def dense_of(v) -> np.ndarray:
    out = np.zeros(v.dense_shape, np.asarray(v.values).dtype)
    out[tuple(np.asarray(v.indices).reshape(-1, len(v.dense_shape)).T)] = v.values
    return out


def run(fetches, feed=None, config=None):
    return tf.Session(config=config).run(fetches, feed)


# ---- the namespaces ----------------------------------------------------------------------------

def test_names_exist_where_tf_1_15_has_them():
    for n in ("slice", "split", "fill_empty_rows", "softmax", "maximum", "minimum",
              "to_indicator", "merge", "reset_shape", "expand_dims", "eye", "reduce_max",
              "reduce_max_sparse", "reduce_sum_sparse", "cross", "cross_hashed", "mask",
              "SparseConditionalAccumulator"):
        assert callable(getattr(tf.sparse, n)), n
    for n in ("slice", "split", "fill_empty_rows", "softmax", "maximum", "minimum",
              "to_indicator", "merge", "reset_shape", "reduce_max", "reduce_max_sparse",
              "reduce_sum_sparse", "mask", "matmul"):
        assert callable(getattr(tf, "sparse_" + n)), n
    for n in ("serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse"):
        assert getattr(tf, n) is getattr(tf.io, n)
    assert tf.sparse.slice is tf.sparse_slice and tf.sparse.mask is tf.sparse_mask


# ---- slice, split ------------------------------------------------------------------------------

@pytest.mark.parametrize("ordered", [True, False])
def test_slice_matches_numpy(ordered):
    idx, vals, dense = rand_sparse((5, 6, 3), 30, ordered=ordered)
    sp = tf.SparseTensor(idx, vals, [5, 6, 3])
    cases = [([1, 2, 0], [3, 2, 3]), ([0, 0, 0], [5, 6, 3]), ([3, 4, 1], [10, 10, 10]),
             ([4, 5, 2], [0, 1, 1]), ([7, 0, 0], [2, 2, 2])]
    got = run([tf.sparse.slice(sp, s, z) for s, z in cases])
    for (s, z), g in zip(cases, got):
        want = dense[s[0]:s[0] + z[0], s[1]:s[1] + z[1], s[2]:s[2] + z[2]]
        assert_close(g.dense_shape, np.asarray(want.shape, np.int64))
        assert_close(dense_of(g), want)
        # the kept entries in the input's order
        keep = np.all((idx >= s) & (idx < np.add(s, z)), 1)
        assert_close(g.values, vals[keep])
    # an empty input, and start/size fed at run time
    st = tf.placeholder(tf.int64, [2])
    e = tf.sparse.slice(tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.float32),
                                        [3, 3]), st, [2, 2])
    g = run(e, {st: [1, 1]})
    assert g.indices.shape == (0, 2) and g.dense_shape.tolist() == [2, 2]


def test_slice_gradient_and_errors():
    idx, vals, _ = rand_sparse((4, 5), 9, ordered=False)
    v = tf.constant(vals)
    out = tf.sparse_slice(tf.SparseTensor(idx, v, [4, 5]), [1, 1], [2, 3])
    w = tf.range(1.0, 10.0)[:tf.size(out.values)]
    g, = run(tf.gradients(tf.reduce_sum(out.values * w), v))
    keep = np.all((idx >= [1, 1]) & (idx < [3, 4]), 1)
    want = np.zeros(9, np.float32)
    want[keep] = np.arange(1, keep.sum() + 1)
    assert_close(g, want)
    sp = tf.SparseTensor(idx, vals, [4, 5])
    with pytest.raises(InvalidArgumentError, match="start must have 2 entries"):
        tf.sparse.slice(sp, [0, 0, 0], [1, 1])
    with pytest.raises(InvalidArgumentError, match="must not be negative"):
        run(tf.sparse.slice(sp, [-1, 0], [2, 2]))
    with pytest.raises(InvalidTypeError):
        tf.sparse.slice(sp, [0.5, 0], [1, 1])


def test_split_matches_array_split():
    idx, vals, dense = rand_sparse((7, 5), 20, ordered=False)
    sp = tf.SparseTensor(idx, vals, [7, 5])
    for axis, n in ((0, 3), (1, 2), (-1, 5), (0, 7)):
        parts = run(tf.sparse.split(sp_input=sp, num_split=n, axis=axis))
        want = np.array_split(dense, n, axis=axis)
        assert len(parts) == n
        for p, w in zip(parts, want):
            assert_close(p.dense_shape, np.asarray(w.shape, np.int64))
            assert_close(dense_of(p), w)
    # split_dim (the deprecated name) and tf.sparse_split
    a, b = run(tf.sparse_split(sp_input=sp, num_split=2, split_dim=1))
    assert_close(dense_of(a), dense[:, :3])
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tf.sparse.split(sp, 2, 1)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.sparse.split(sp_input=sp, num_split=2, axis=0, split_dim=0)
    with pytest.raises(ValueError, match="num_split is required"):
        tf.sparse.split(sp_input=sp, axis=0)
    with pytest.raises(InvalidArgumentError, match="out of range"):
        tf.sparse.split(sp_input=sp, num_split=2, axis=2)
    with pytest.raises(InvalidArgumentError, match="between 1 and the size"):
        run(tf.sparse.split(sp_input=sp, num_split=6, axis=1))
    # SparseSplit has no gradient in TF 1.15
    v = tf.constant(vals)
    first = tf.sparse.split(sp_input=tf.SparseTensor(idx, v, [7, 5]), num_split=2, axis=0)[0]
    with pytest.raises(LookupError, match="No gradient defined"):
        tf.gradients(tf.reduce_sum(first.values), v)


# ---- fill_empty_rows ---------------------------------------------------------------------------

def _fill_ref(idx, vals, rows, default):
    """Entries grouped by row (stable), [row, 0, ...] = default for each empty row."""
    out_i, out_v, pos = [], [], np.zeros(len(idx), np.int64)
    for r in range(rows):
        mine = np.nonzero(idx[:, 0] == r)[0]
        if len(mine) == 0:
            out_i.append([r] + [0] * (idx.shape[1] - 1))
            out_v.append(default)
        for j in mine:
            pos[j] = len(out_i)
            out_i.append(idx[j].tolist())
            out_v.append(vals[j])
    return np.asarray(out_i, np.int64).reshape(-1, idx.shape[1]), np.asarray(out_v), pos


@pytest.mark.parametrize("ordered", [True, False])
def test_fill_empty_rows_matches_the_reference(ordered):
    idx, vals, _ = rand_sparse((6, 4, 2), 7, ordered=ordered)
    sp = tf.SparseTensor(idx, vals, [6, 4, 2])
    out, empty = tf.sparse.fill_empty_rows(sp, -3.0)
    assert empty.shape.as_list() == [6] and empty.dtype == tf.bool
    got, e = run([out, empty])
    want_i, want_v, _ = _fill_ref(idx, vals, 6, -3.0)
    assert_close(got.indices, want_i)
    assert_close(got.values, want_v.astype(np.float32))
    assert_close(got.dense_shape, np.array([6, 4, 2], np.int64))
    assert_close(e, np.bincount(idx[:, 0], minlength=6) == 0)
    # all rows empty, no rows, strings
    z = tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int64), [3, 5])
    g, e = run(tf.sparse_fill_empty_rows(z, 7))
    assert_close(g.indices, np.array([[0, 0], [1, 0], [2, 0]], np.int64))
    assert_close(g.values, np.array([7, 7, 7], np.int64)) and e.all()
    g, e = run(tf.sparse.fill_empty_rows(
        tf.SparseTensor(np.zeros((0, 1), np.int64), np.zeros(0, np.float32), [0]), 1.0))
    assert g.values.shape == (0,) and e.shape == (0,)
    s = tf.SparseTensor([[1, 0]], ["b"], [3, 2])
    g, _ = run(tf.sparse.fill_empty_rows(s, "x"))
    assert g.values.tolist() == [b"x", b"b", b"x"]


def test_fill_empty_rows_gradients_and_errors():
    idx, vals, _ = rand_sparse((5, 3), 4, ordered=False)
    v, d = tf.constant(vals), tf.constant(0.25)
    out, _ = tf.sparse.fill_empty_rows(tf.SparseTensor(idx, v, [5, 3]), d)
    w = tf.sin(tf.cast(tf.range(tf.size(out.values)), tf.float32)) + 2.0
    gv, gd = run(tf.gradients(tf.reduce_sum(out.values ** 2 * w), [v, d]))
    _, _, pos = _fill_ref(idx, vals, 5, 0.25)
    wv = np.sin(np.arange(4 + np.sum(np.bincount(idx[:, 0], minlength=5) == 0))) + 2.0
    assert_close(gv, (2 * vals * wv[pos]).astype(np.float32), rtol=1e-5)
    filled = np.setdiff1d(np.arange(len(wv)), pos)
    assert_close(gd, np.float32(2 * 0.25 * wv[filled].sum()), rtol=1e-5)
    sp = tf.SparseTensor([[0, 0], [4, 1]], [1.0, 2.0], [3, 2])
    with pytest.raises(InvalidArgumentError, match=r"indices\(1, 0\) is invalid"):
        run(tf.sparse.fill_empty_rows(sp, 0.0))
    with pytest.raises(InvalidArgumentError, match="must be a scalar"):
        tf.sparse.fill_empty_rows(sp, tf.constant([0.0, 1.0]))
    with pytest.raises(InvalidTypeError):
        tf.sparse.fill_empty_rows(sp, tf.constant(0, tf.int32))


# ---- softmax -----------------------------------------------------------------------------------

def _softmax_ref(idx, vals):
    """Softmax over each run of entries with equal leading indices."""
    out = np.zeros(len(vals), np.float64)
    i = 0
    while i < len(vals):
        j = i
        while j < len(vals) and (idx[j, :-1] == idx[i, :-1]).all():
            j += 1
        e = np.exp(vals[i:j] - vals[i:j].max())
        out[i:j] = e / e.sum()
        i = j
    return out


def test_softmax_matches_numpy_executor_and_xla():
    idx, vals, _ = rand_sparse((4, 3, 5), 25)
    idx2, vals2, _ = rand_sparse((6, 7), 0)

    def build():
        a = tf.sparse.softmax(tf.SparseTensor(idx, vals * 4, [4, 3, 5]))
        b = tf.sparse_softmax(tf.SparseTensor(idx2, vals2, [6, 7]))
        return [a.values, b.values], None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got[0], _softmax_ref(idx, vals * 4).astype(np.float32), rtol=1e-5)
        assert got[1].shape == (0,)
    # TF's doc example: [[1, 2]] on row 0, [3] on row 1 (the zero entry counts)
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], tf.constant([1.0, 2.0, 0.0], tf.float64),
                         [2, 3])
    e = np.exp([1.0, 2.0])
    assert_close(run(tf.sparse.softmax(sp).values), np.r_[e / e.sum(), 1.0])
    # unordered input: runs of equal rows, as TF's kernel groups them
    ui = np.array([[1, 0], [0, 1], [0, 0], [1, 2]], np.int64)
    uv = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    assert_close(run(tf.sparse.softmax(tf.SparseTensor(ui, uv, [2, 3])).values),
                 _softmax_ref(ui, uv).astype(np.float32), rtol=1e-6)


def test_softmax_gradient_is_numerically_right_and_errors():
    idx, vals, _ = rand_sparse((3, 6), 11, dtype=np.float64)
    v = tf.placeholder(tf.float64, [11])
    w = np.linspace(-1.0, 2.0, 11)
    loss = tf.reduce_sum(tf.sparse.softmax(tf.SparseTensor(idx, v, [3, 6])).values * w)
    g = run(tf.gradients(loss, v)[0], {v: vals})
    num = np.zeros(11)
    for i in range(11):
        e = np.zeros(11)
        e[i] = 1e-6
        num[i] = ((_softmax_ref(idx, vals + e) * w).sum() -
                  (_softmax_ref(idx, vals - e) * w).sum()) / 2e-6
    assert_close(g, num, rtol=1e-5, atol=1e-7)
    with pytest.raises(InvalidArgumentError, match="rank >= 2"):
        tf.sparse.softmax(tf.SparseTensor([[0]], [1.0], [3]))
    with pytest.raises(InvalidTypeError):
        tf.sparse.softmax(tf.SparseTensor([[0, 0]], [1], [3, 3]))
    sp = tf.sparse_placeholder(tf.float32)
    out = tf.sparse.softmax(sp)
    fed = tf.SparseTensorValue(np.array([[0], [1]]), np.array([1.0, 2.0], np.float32), [3])
    with pytest.raises(InvalidArgumentError, match="rank >= 2"):
        run(out.values, {sp: fed})


# ---- maximum, minimum --------------------------------------------------------------------------

def test_maximum_minimum_on_the_union():
    ia, va, da = rand_sparse((4, 5), 8, ordered=False)
    ib, vb, db = rand_sparse((4, 5), 9)
    a, b = tf.SparseTensor(ia, va, [4, 5]), tf.SparseTensor(ib, vb, [4, 5])
    mx, mn = run([tf.sparse.maximum(a, b), tf.sparse_minimum(a, b)])
    keys = {tuple(r) for r in ia.tolist()} | {tuple(r) for r in ib.tolist()}
    want_idx = np.asarray(sorted(keys), np.int64)
    for got, fn in ((mx, np.maximum), (mn, np.minimum)):
        assert_close(got.indices, want_idx)
        assert_close(got.values, fn(da, db)[tuple(want_idx.T)])
        assert_close(got.dense_shape, np.array([4, 5], np.int64))
    # TF's doc example
    z = tf.SparseTensor([[0]], [0], [7])
    one = tf.SparseTensor([[1]], [1], [7])
    g = run(tf.sparse.maximum(z, one))
    assert g.indices.tolist() == [[0], [1]] and g.values.tolist() == [0, 1]
    # errors, and the gradient TF leaves unimplemented
    with pytest.raises(InvalidArgumentError, match="shapes do not match"):
        run(tf.sparse.maximum(a, tf.SparseTensor(ib, vb, [4, 6])))
    with pytest.raises(InvalidTypeError):
        tf.sparse.maximum(a, tf.SparseTensor(ib, vb.astype(np.float64), [4, 5]))
    with pytest.raises(InvalidTypeError):
        tf.sparse.minimum(tf.SparseTensor([[0]], ["a"], [2]), tf.SparseTensor([[0]], ["b"], [2]))
    v = tf.constant(va)
    with pytest.raises(NotImplementedError, match="SparseSparseMaximum"):
        tf.gradients(tf.reduce_sum(tf.sparse.maximum(tf.SparseTensor(ia, v, [4, 5]), b).values),
                     v)


# ---- to_indicator, merge, reset_shape, expand_dims, eye ---------------------------------------

def test_to_indicator_and_merge():
    ids = np.array([0, 10, 13, 14, 32, 33], np.int64)
    idx = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [1, 1, 0], [1, 1, 1]],
                   np.int64)

    def build():
        sp = tf.SparseTensor(idx, ids, [2, 3, 4])
        sp32 = tf.SparseTensor(idx, tf.constant(ids.astype(np.int32)), [2, 3, 4])
        return [tf.sparse.to_indicator(sp, 50), tf.sparse_to_indicator(sp32, 50)], None
    want = np.zeros((2, 3, 50), bool)
    want[idx[:, 0], idx[:, 1], ids] = True
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [want, want])
    with pytest.raises(InvalidArgumentError):
        run(tf.sparse.to_indicator(tf.SparseTensor(idx, ids, [2, 3, 4]), 20))
    with pytest.raises(InvalidTypeError):
        tf.sparse.to_indicator(tf.SparseTensor([[0, 0]], [1.0], [1, 2]), 3)
    # TF's sparse_merge example: ids and values of three examples
    mi = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]], np.int64)
    sp_ids = tf.SparseTensor(mi, tf.constant([0, 3, 1, 2, 4, 1], tf.int64), [3, 3])
    sp_vals = tf.SparseTensor(mi, [-3.0, 1.0, 9.0, 1.0, 2.0, 5.0], [3, 3])
    got = run(tf.sparse.merge(sp_ids, sp_vals, 5))
    want = np.zeros((3, 5), np.float32)
    want[mi[:, 0], [0, 3, 1, 2, 4, 1]] = [-3.0, 1.0, 9.0, 1.0, 2.0, 5.0]
    assert_close(got.dense_shape, np.array([3, 5], np.int64))
    assert_close(dense_of(got), want)
    assert got.indices.tolist() == sorted(got.indices.tolist())
    # a list of id columns (a 3-D result)
    two = run(tf.sparse_merge([sp_ids, sp_ids], sp_vals, [5, 6]))
    assert_close(two.dense_shape, np.array([3, 5, 6], np.int64))
    w3 = np.zeros((3, 5, 6), np.float32)
    w3[mi[:, 0], [0, 3, 1, 2, 4, 1], [0, 3, 1, 2, 4, 1]] = [-3.0, 1.0, 9.0, 1.0, 2.0, 5.0]
    assert_close(dense_of(two), w3)
    with pytest.raises(TypeError):
        tf.sparse.merge([sp_ids], sp_vals, 5)


def test_reset_shape():
    idx, vals, dense = rand_sparse((6, 7), 5)
    sp = tf.SparseTensor(idx, vals, [6, 7])
    tight, given = run([tf.sparse.reset_shape(sp), tf.sparse_reset_shape(sp, [9, 7])])
    assert_close(tight.dense_shape, idx.max(0) + 1)
    assert_close(given.dense_shape, np.array([9, 7], np.int64))
    assert_close(given.values, vals)
    empty = run(tf.sparse.reset_shape(tf.SparseTensor(np.zeros((0, 2), np.int64),
                                                      np.zeros(0, np.float32), [3, 3])))
    assert empty.dense_shape.tolist() == [0, 0]
    with pytest.raises(ValueError, match="dimension sizes >= sp_input.shape"):
        tf.sparse.reset_shape(sp, [5, 7])
    with pytest.raises(ValueError):
        tf.sparse.reset_shape(sp, [9, 9, 9])
    # a dense shape known only at run time: the checks run then
    s = tf.placeholder(tf.int64, [2])
    out = tf.sparse.reset_shape(tf.SparseTensor(idx, vals, s), [8, 8])
    assert run(out.dense_shape, {s: [6, 7]}).tolist() == [8, 8]
    with pytest.raises(InvalidArgumentError, match="new_shape must be >="):
        run(out.dense_shape, {s: [9, 7]})


def test_expand_dims_and_eye_executor_and_xla():
    idx, vals, dense = rand_sparse((3, 4), 6)
    axes = [0, 1, 2, -1, -3]

    def build():
        sp = tf.SparseTensor(idx, vals, [3, 4])
        outs = [tf.sparse.to_dense(tf.sparse.expand_dims(sp, a)) for a in axes]
        return outs + [tf.sparse.to_dense(tf.sparse.eye(3, 5, dtype=tf.int32)),
                       tf.sparse.to_dense(tf.sparse.eye(4))], None
    for got in run_executor_and_xla_cpu(build):
        for a, g in zip(axes, got):
            assert_close(g, np.expand_dims(dense, a))
        assert_close(got[-2], np.eye(3, 5, dtype=np.int32))
        assert_close(got[-1], np.eye(4, dtype=np.float32))
    # a tensor axis, sizes fed at run time
    a = tf.placeholder(tf.int32, [])
    n, m = tf.placeholder(tf.int64, []), tf.placeholder(tf.int32, [])
    ex = tf.sparse.expand_dims(tf.SparseTensor(idx, vals, [3, 4]), a)
    eye = tf.sparse.eye(n, m)
    for av in (0, 1, -1):
        assert_close(dense_of(run(ex, {a: av})), np.expand_dims(dense, av))
    assert_close(dense_of(run(eye, {n: 4, m: 2})), np.eye(4, 2, dtype=np.float32))
    with pytest.raises(InvalidArgumentError, match="out of range"):
        tf.sparse.expand_dims(tf.SparseTensor(idx, vals, [3, 4]), 3)
    with pytest.raises(TypeError):
        tf.sparse.expand_dims(tf.SparseTensor(idx, vals, [3, 4]), 1.5)


# ---- reductions --------------------------------------------------------------------------------

def _max_ref(idx, vals, shape, axes, keep):
    """Max over axes of the entries present; 0 where none is."""
    r = len(shape)
    axes = sorted({a % r for a in axes})
    kept = [d for d in range(r) if d not in axes]
    out = np.full([shape[d] for d in kept], -np.inf)
    hit = np.zeros(out.shape, bool)
    for i, v in zip(idx, vals):
        k = tuple(i[kept])
        out[k] = max(out[k], v)
        hit[k] = True
    out = np.where(hit, out, 0).astype(vals.dtype)
    return out.reshape([1 if d in axes else shape[d] for d in range(r)]) if keep else out


def test_reduce_max_executor_and_xla():
    idx, vals, _ = rand_sparse((4, 3, 5), 14, ordered=False)
    vals = vals - 3.0                   # all negative: implicit zeros must not win
    cases = [([1], False), ([0, 2], False), ([-1], True), ([0, 1, 2], False), (None, True)]

    def build():
        sp = tf.SparseTensor(idx, vals, [4, 3, 5])
        return [tf.sparse.reduce_max(sp, a, keepdims=k) for a, k in cases] + \
            [tf.sparse_reduce_max(sp)], None
    for got in run_executor_and_xla_cpu(build):
        for (a, k), g in zip(cases, got):
            assert_close(g, _max_ref(idx, vals, (4, 3, 5), a if a is not None else [0, 1, 2],
                                     k), what=f"{a} {k}: ")
        assert_close(got[-1], np.float32(vals.max()))
    # the docstring example: [[1, ?, 2], [?, 3, ?]] and rows with nothing
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1, 2, 3], [3, 3])
    assert run(tf.sparse.reduce_max(sp, 1)).tolist() == [2, 3, 0]
    assert run(tf.sparse.reduce_max(sp, reduction_axes=0)).tolist() == [1, 3, 2]
    with pytest.raises(ValueError, match="both 'axis' and 'reduction_axes'"):
        tf.sparse.reduce_max(sp, axis=0, reduction_axes=0)
    with pytest.raises(InvalidArgumentError, match="Invalid reduction dimension"):
        tf.sparse.reduce_max(sp, 2)
    v = tf.constant([1.0, 2.0])
    with pytest.raises(LookupError, match="No gradient defined"):
        tf.gradients(tf.sparse.reduce_max(tf.SparseTensor([[0], [1]], v, [2])), v)


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_max_and_sum_sparse(keep):
    idx, vals, dense = rand_sparse((4, 3, 5), 12, ordered=False)
    sp = tf.SparseTensor(idx, vals, [4, 3, 5])
    for axes in ([1], [0, 2], [0, 1, 2]):
        mx, sm = run([tf.sparse.reduce_max_sparse(sp, axes, keepdims=keep),
                      tf.sparse_reduce_sum_sparse(sp, axes, keep_dims=keep)])
        kept = [d for d in range(3) if d not in axes]
        groups = sorted({tuple(i[kept]) for i in idx})
        n = len(groups)
        if keep:
            full = np.zeros((n, 3), np.int64)
            full[:, kept] = np.asarray(groups, np.int64).reshape(n, len(kept))
            want_idx = full
            want_shape = [1 if d in axes else dense.shape[d] for d in range(3)]
        else:
            want_idx = np.asarray(groups, np.int64).reshape(n, len(kept))
            want_shape = [dense.shape[d] for d in kept]
        for got in (mx, sm):
            assert_close(got.indices, want_idx, what=f"{axes}: ")
            assert_close(got.dense_shape, np.asarray(want_shape, np.int64))
        for j, gkey in enumerate(groups):
            mine = np.all(idx[:, kept] == gkey, 1)
            assert_close(mx.values[j], vals[mine].max())
            assert_close(sm.values[j], vals[mine].sum(), rtol=1e-5)
    e = run(tf.sparse.reduce_sum_sparse(
        tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.float32), [2, 2]), 1))
    assert e.indices.shape == (0, 1) and e.dense_shape.tolist() == [2]


# ---- serialization -----------------------------------------------------------------------------

def test_serialize_sparse_round_trips():
    idx, vals, dense = rand_sparse((4, 3, 2), 9)
    sp = tf.SparseTensor(idx, vals, [4, 3, 2])
    one = tf.serialize_sparse(sp)
    assert one.shape.as_list() == [3] and one.dtype == tf.string
    parsed = [tf.io.parse_tensor(one[0], tf.int64), tf.io.parse_tensor(one[1], tf.float32),
              tf.io.parse_tensor(one[2], tf.int64)]
    got = run(parsed)
    assert_close(got, [idx, vals, np.array([4, 3, 2], np.int64)])
    many = tf.io.serialize_many_sparse(sp)
    assert many.shape.as_list() == [4, 3]
    back = tf.deserialize_many_sparse(many, tf.float32, rank=3)
    assert back.indices.shape.as_list() == [None, 3]
    m, b = run([many, back])
    assert m.shape == (4, 3)
    assert_close(b.indices, idx)
    assert_close(b.values, vals)
    assert_close(b.dense_shape, np.array([4, 3, 2], np.int64))
    # rows of different shapes: the result takes the largest; strings survive
    s1 = tf.serialize_sparse(tf.SparseTensor([[0, 1]], ["a"], [1, 5]))
    s2 = tf.serialize_sparse(tf.SparseTensor([[2, 0], [2, 1]], ["b", "c"], [3, 2]))
    d = run(tf.io.deserialize_many_sparse(tf.stack([s1, s2]), tf.string))
    assert d.indices.tolist() == [[0, 0, 1], [1, 2, 0], [1, 2, 1]]
    assert d.values.tolist() == [b"a", b"b", b"c"] and d.dense_shape.tolist() == [2, 3, 5]


def test_serialization_errors():
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [2, 2])
    many = tf.serialize_many_sparse(sp)
    with pytest.raises(InvalidArgumentError, match="Requested SparseTensor\\[0\\].values of "
                                                   "type int32"):
        run(tf.deserialize_many_sparse(many, tf.int32))
    with pytest.raises(InvalidArgumentError, match="rank 2 with the minibatch"):
        run(tf.deserialize_many_sparse(many, tf.float32, rank=3).values)
    with pytest.raises(InvalidArgumentError, match="rank at least 2"):
        run(tf.serialize_many_sparse(tf.SparseTensor([[0]], [1.0], [3])))
    with pytest.raises(InvalidArgumentError, match="out of order"):
        run(tf.serialize_many_sparse(tf.SparseTensor([[1, 0], [0, 0]], [1.0, 2.0], [2, 2])))
    with pytest.raises(InvalidArgumentError, match=r"\[N, 3\] matrix"):
        tf.deserialize_many_sparse(tf.constant([["a", "b"]]), tf.float32)
    with pytest.raises(InvalidArgumentError, match="Could not parse"):
        run(tf.deserialize_many_sparse(tf.constant([["a", "b", "c"]]), tf.float32).values)
    with pytest.raises(InvalidTypeError, match="variant"):
        tf.serialize_sparse(sp, out_type=tf.int64)


# ---- cross, cross_hashed -----------------------------------------------------------------------

def test_cross_strings_ints_and_dense():
    a = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
    b = tf.SparseTensor([[0, 0], [1, 0]], ["d", "e"], [2, 1])
    f = tf.constant([["f"], ["g"]])
    got = run(tf.sparse.cross([a, b, f]))              # TF's docstring example
    assert got.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert got.values.tolist() == [b"a_X_d_X_f", b"b_X_e_X_g", b"c_X_e_X_g"]
    assert got.dense_shape.tolist() == [2, 2]
    # integers as decimal text; the last input varies fastest; an empty row stays empty
    n = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([7, -1, 7], tf.int64), [3, 2])
    d = tf.constant([[1, 2], [3, 4], [5, 6]], tf.int32)
    got = run(tf.sparse.cross([n, d]))
    assert got.values.tolist() == [b"7_X_1", b"7_X_2", b"-1_X_1", b"-1_X_2", b"7_X_5",
                                   b"7_X_6"]
    assert got.indices.tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1]]
    assert got.dense_shape.tolist() == [3, 4]
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tf.sparse.cross(a)
    with pytest.raises(TypeError):
        tf.sparse.cross([a, "x"])
    with pytest.raises(InvalidTypeError):
        tf.sparse.cross([a, tf.constant([[1.0], [2.0]])])
    with pytest.raises(InvalidArgumentError, match="Expected batch size 2 got 3"):
        run(tf.sparse.cross([a, d]))


def test_cross_hashed_matches_tf():
    # TF's sparse_cross_op_test: these strings cross to 1971693436396284976 (no buckets),
    # 83 (100 buckets) and 31 with hash_key + 1
    parts = [tf.SparseTensor([[0, 0]], [s], [1, 1]) for s in
             ("batch1-FC1-F1", "batch1-FC2-F1", "batch1-FC3-F1")]
    key = 0xDECAFCAFFE
    got = run([tf.sparse.cross_hashed(parts), tf.sparse.cross_hashed(parts, 100),
               tf.sparse.cross_hashed(parts, 100, hash_key=key + 1)])
    assert [int(g.values[0]) for g in got] == [1971693436396284976, 83, 31]
    assert all(g.values.dtype == np.int64 for g in got)
    # mixed sparse / dense, agreeing with the feature-column cross of the same features
    # (the feature columns' dense cross, not a public tf name: imported where it is compared)
    from xlapy.compat.v1.ops.lookup_ops import cross_hashed as dense_cross
    s = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["x", "y", "z"], [2, 2])
    dense_s = tf.constant([["x", "y"], ["z", "z"]])
    ints = tf.constant([[3], [4]], tf.int64)
    a, b = run([tf.sparse.cross_hashed([s, ints], 1000), dense_cross([dense_s, ints], 1000)])
    assert a.values.tolist() == [b[0, 0], b[0, 1], b[1, 0]]


# ---- sparse_mask, sparse_matmul ----------------------------------------------------------------

def test_sparse_mask():
    vals = R.standard_normal((5, 3)).astype(np.float32)
    ind = np.array([12, 26, 5, 37, 26], np.int32)
    a = tf.IndexedSlices(tf.constant(vals), tf.constant(ind), tf.constant([40, 3]))
    got = run(tf.sparse_mask(a, [12, 26]))
    assert_close(got.indices, np.array([5, 37], np.int32))
    assert_close(got.values, vals[[2, 3]])
    assert_close(got.dense_shape, np.array([40, 3], np.int32))
    got = run(tf.sparse.mask(a, tf.constant([], tf.int32)))
    assert_close(got.values, vals)
    with pytest.raises(InvalidTypeError):
        tf.sparse_mask(tf.constant(vals), [1])


def test_sparse_matmul_is_matmul():
    a = R.standard_normal((3, 4)).astype(np.float32)
    b = R.standard_normal((5, 4)).astype(np.float32)
    a[a < 0.5] = 0.0

    def build():
        x, y = tf.constant(a), tf.constant(b)
        out = tf.sparse_matmul(x, y, transpose_b=True, a_is_sparse=True)
        return [out, tf.sparse_matmul(tf.transpose(y), x, transpose_a=True, transpose_b=True,
                                      b_is_sparse=True)], None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [a @ b.T, b @ a.T], rtol=1e-5, atol=1e-5)
    x = tf.constant(a)
    g = run(tf.gradients(tf.reduce_sum(tf.sparse_matmul(x, tf.constant(b.T))), x)[0])
    assert_close(g, np.tile(b.sum(0), (3, 1)), rtol=1e-5)
    with pytest.raises(InvalidTypeError, match="float32, bfloat16"):
        tf.sparse_matmul(a.astype(np.float64), b.T.astype(np.float64))
    mixed = tf.sparse_matmul(tf.to_bfloat16(x), tf.constant(b.T))   # bfloat16 a: f32 product
    assert mixed.dtype == tf.float32
    a16 = a.astype(tf.bfloat16.as_numpy_dtype).astype(np.float32)
    assert_close(run(mixed), a16 @ b.T, rtol=1e-5, atol=1e-5)


# ---- with auto-jit: clusters form around the executor-only ops ---------------------------------

def test_a_jit_session_runs_the_executor_only_ops():
    idx, vals, _ = rand_sparse((6, 5), 12)
    v = tf.constant(vals)
    sp = tf.SparseTensor(idx, v * 2.0, [6, 5])
    piece = tf.sparse.slice(sp, [1, 0], [4, 5])
    filled, _ = tf.sparse.fill_empty_rows(piece, 1.0)
    out = tf.sparse.reduce_sum(tf.sparse.softmax(filled), 1) * 3.0
    grad = tf.gradients(tf.reduce_sum(tf.sparse.to_dense(piece) ** 2), v)[0]
    a = run([out, grad])
    b = run([out, grad], config=jit_config())
    assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert_close(a[0], np.full(4, 3.0, np.float32), rtol=1e-5)   # every row filled: sums 1
    keep = (idx[:, 0] >= 1) & (idx[:, 0] < 5)
    assert_close(a[1], np.where(keep, 8 * vals, 0).astype(np.float32), rtol=1e-5)


def test_sparse_times_and_over_dense_keep_the_entries():
    """SparseTensor * dense and / dense (TF's SparseDenseCwiseMul/Div): the dense side
    broadcast to the dense shape, read at the entries; gradients reach both sides."""
    sp = tf.SparseTensor([[0, 1], [2, 0]], tf.constant([2.0, 3.0]), [3, 2])
    d = tf.constant([[1.0, 10.0], [100.0, 1000.0], [5.0, 7.0]])
    row = tf.constant([2.0, 4.0])
    prod, quot, scaled = sp * d, sp / row, sp * 3.0
    g_vals, g_d = tf.gradients(tf.reduce_sum(prod.values) + tf.reduce_sum(quot.values),
                               [sp.values, d])
    with tf.Session() as sess:
        p, q, s, gv, gd = sess.run([prod, quot, scaled, g_vals, g_d])
    np.testing.assert_array_equal(p.indices, [[0, 1], [2, 0]])
    np.testing.assert_allclose(p.values, [20.0, 15.0])
    np.testing.assert_allclose(q.values, [0.5, 1.5])
    np.testing.assert_allclose(s.values, [6.0, 9.0])
    np.testing.assert_allclose(gv, [10.0 + 1 / 4, 5.0 + 1 / 2])
    np.testing.assert_allclose(gd, [[0, 2.0], [0, 0], [3.0, 0]])
    with pytest.raises(TypeError, match="SparseTensor \\* SparseTensor|mul SparseTensor"):
        sp * sp
    with pytest.raises(TypeError, match="SparseTensor"):   # (Tensor.__mul__ refuses it)
        d * sp
    with pytest.raises(TypeError, match="truncating integer division"):
        tf.SparseTensor([[0]], [4], [2]) / 2
