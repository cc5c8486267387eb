"""tf.contrib.layers' feature columns (a wide & deep model on synthetic data against a NumPy
reference of its linear part, in the executor and under XLA; parsing from tf.train.Example
protos; contrib's cross hashes against TF's test vectors), tf.contrib.learn.datasets' base
and mnist, tf.contrib.data's transformations against expected element lists, and
tf.contrib.stateless' determinism and distributions."""

import gzip

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.contrib.layers import feature_columns_old_ops as fco
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from xlapy.compat.v1.ops.lookup_ops import fingerprint64, fingerprint_cat64

from .conftest import jit_config

L = tf.contrib.layers
D = tf.contrib.data
S = tf.contrib.stateless
M64 = (1 << 64) - 1


# ---- references -------------------------------------------------------------------------------

def v1_cross(words, buckets):
    """contrib's original cross hash, written out independently of the kernel."""
    h = 0xDECAFCAFFE
    for b in words:
        signed = h - (1 << 64) if h >= 1 << 63 else h
        mixed = (b + 0x9E3779B97F4A7800 + (signed << 10) + (signed >> 4)) & M64
        h = (h ^ mixed) & M64
    return h % buckets


def fp(s):
    return fingerprint64(s.encode())


OCCS = ["doctor", "nurse", "clerk", "pilot", "chef", "farmer", "judge"]
AGE_B = [25.0, 40.0, 60.0]


def make_data(n=48, seed=0):
    r = np.random.default_rng(seed)
    gender = r.choice(["F", "M", "X"], n)             # X: out of the keys, dropped
    occ = [list(r.choice(OCCS, r.integers(0, 3), replace=False)) for _ in range(n)]
    age = r.uniform(18, 80, n).astype(np.float32)
    tags = r.integers(0, 12, (n, 2)).astype(np.int64)
    tags[r.random((n, 2)) < 0.3] = -1                 # missing
    tag_w = r.uniform(-0.2, 2.0, (n, 2)).astype(np.float32)   # some <= 0: pruned (sqrtn)
    hours = r.uniform(10, 60, (n, 2)).astype(np.float32)
    return dict(gender=gender, occ=occ, age=age, tags=tags, tag_w=tag_w, hours=hours)


def sparse_strings(rows):
    idx = [[i, j] for i, row in enumerate(rows) for j in range(len(row))]
    vals = [v for row in rows for v in row]
    width = max(1, max(len(row) for row in rows))
    return tf.SparseTensor(np.asarray(idx, np.int64).reshape(-1, 2),
                           np.asarray([v.encode() for v in vals], object),
                           [len(rows), width])


def columns():
    gender = L.sparse_column_with_keys("gender", ["F", "M"])
    occ = L.sparse_column_with_hash_bucket("occ", 20)
    age = L.real_valued_column("age")
    age_b = L.bucketized_column(age, AGE_B)
    cross = L.crossed_column([occ, age_b], 50)
    tags = L.weighted_sparse_column(
        L.sparse_column_with_integerized_feature("tags", 5, combiner="sqrtn"), "tag_w")
    hours = L.real_valued_column("hours", 2, normalizer=lambda x: x / 40.0)
    wide = [gender, occ, age_b, cross, tags, hours]
    deep = [L.embedding_column(occ, 3, combiner="mean"), L.one_hot_column(gender), hours,
            age_b]
    return wide, deep


def features(d):
    return {"gender": tf.constant(d["gender"].reshape(-1, 1).astype(object)),
            "occ": sparse_strings(d["occ"]), "age": tf.constant(d["age"].reshape(-1, 1)),
            "tags": tf.constant(d["tags"]), "tag_w": tf.constant(d["tag_w"]),
            "hours": tf.constant(d["hours"])}


def np_linear(d, w, bias):
    """The wide model's logits from the variables' values w[column name] (NumPy)."""
    n = len(d["age"])
    out = np.zeros((n, 1)) + bias
    bucket = np.searchsorted(AGE_B, d["age"], side="right")
    for i in range(n):
        if d["gender"][i] in ("F", "M"):
            out[i] += w["gender"][["F", "M"].index(d["gender"][i])]
        for o in d["occ"][i]:
            out[i] += w["occ"][fp(o) % 20]
            out[i] += w["age_bucketized_X_occ"][v1_cross([int(bucket[i]), fp(o)], 50)]
        out[i] += w["age_bucketized"][bucket[i]]
        ws = [(t % 5, wt) for t, wt in zip(d["tags"][i], d["tag_w"][i]) if t != -1 and wt > 0]
        if ws:
            num = sum(wt * w["tags_weighted_by_tag_w"][t] for t, wt in ws)
            out[i] += num / np.sqrt(sum(wt * wt for _, wt in ws))
        out[i] += (d["hours"][i] / 40.0) @ w["hours"]
    return out


# ---- feature columns --------------------------------------------------------------------------

@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_wide_and_deep_trains_and_matches_numpy(xla):
    d = make_data()
    y = ((d["age"] > 40) | (d["gender"] == "F")).astype(np.float32).reshape(-1, 1)
    wide, deep = columns()
    feats = features(d)
    logits_w, col_vars, bias = L.weighted_sum_from_feature_columns(feats, wide, 1)
    net = L.input_from_feature_columns(feats, deep)
    assert net.shape.as_list() == [len(d["age"]), 4 + 3 + 2 + 2]   # sorted by key
    deep_out = L.fully_connected(net, 1, activation_fn=None, scope="deep_out")
    logits = logits_w + deep_out
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    names = sorted(v.op.name for v in tf.global_variables())
    assert "weighted_sum_from_feature_columns/age_bucketized_X_occ/weights" in names
    assert "weighted_sum_from_feature_columns/hours/weight" in names
    assert "input_from_feature_columns/occ_embedding/weights" in names
    assert {v.op.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)} >= {
        "weighted_sum_from_feature_columns/bias_weight",
        "input_from_feature_columns/occ_embedding/weights"}
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    losses = [sess.run([loss, step])[0] for _ in range(25)]
    assert losses[-1] < 0.8 * losses[0]
    got, vals, b, net_v = sess.run([logits_w, {c.name: v[0] for c, v in col_vars.items()},
                                    bias, net])
    np.testing.assert_allclose(got, np_linear(d, vals, b), rtol=1e-4, atol=1e-5)
    # the deep input: bucketized one-hot, occ embedding (mean), gender one-hot, hours
    table = sess.run(tf.global_variables("input_from_feature_columns/occ_embedding")[0])
    bucket = np.searchsorted(AGE_B, d["age"], side="right")
    np.testing.assert_array_equal(net_v[:, :4], np.eye(4)[bucket])
    for i, occs in enumerate(d["occ"]):
        want = np.mean([table[fp(o) % 20] for o in occs], 0) if occs else np.zeros(3)
        np.testing.assert_allclose(net_v[i, 4:7], want, rtol=1e-5, atol=1e-6)
        g = d["gender"][i]
        np.testing.assert_array_equal(net_v[i, 7:9], [g == "F", g == "M"])
    np.testing.assert_allclose(net_v[:, 9:], d["hours"] / 40.0, rtol=1e-6)


def test_cross_hashes_are_tfs():
    # contrib's sparse_feature_cross_op_test vectors: the original hash and FingerprintCat64
    cols = [L.sparse_column_with_hash_bucket(k, 10) for k in ("fc1", "fc2", "fc3")]
    feats = {k: tf.SparseTensor([[0, 0]], [f"batch1-{k.upper()}-F1"], [1, 1])
             for k in ("fc1", "fc2", "fc3")}
    v1 = L.crossed_column(cols, 100)
    v2 = L.crossed_column(cols, 100, hash_key=L.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY)
    t = L.transform_features(feats, [v1, v2])
    parts = [tf.constant([[f"batch1-FC{i}-F1"]]) for i in (1, 2, 3)]
    raw = [fco._cross(parts, [False] * 3, 0, None),
           fco._cross(parts, [False] * 3, 0, L.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY)]
    # ints enter as they are; the original hash collides on 359 and 359 + 1024
    t2 = tf.constant([list(range(10))] * 2, tf.int64)
    t1 = tf.constant([[359], [359 + 1024]], tf.int64)
    coll = [fco._cross([t2, t1], [False, False], 1024, key)
            for key in (None, L.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY)]
    out = tf.Session().run([t[v1].id_tensor, t[v2].id_tensor, raw, coll])
    assert out[0].tolist() == [[74]] and out[1].tolist() == [[83]]
    assert out[2][0].tolist() == [[3735511728867393167]]
    assert out[2][1].tolist() == [[1971693436396284976]]
    assert (out[3][0][0] == out[3][0][1]).all() and (out[3][1][0] != out[3][1][1]).all()
    h = 0xDECAFCAFFE
    for w in (fp("batch1-FC1-F1"), fp("batch1-FC2-F1"), fp("batch1-FC3-F1")):
        h = fingerprint_cat64(h, w)
    assert h % 100 == 83 and v1_cross([fp(f"batch1-FC{i}-F1") for i in (1, 2, 3)], 100) == 74


def test_sparse_columns_ids(tmp_path):
    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("red\ngreen\nblue\nunused\n")
    ints = L.sparse_column_with_integerized_feature("n", 4)
    keys = L.sparse_column_with_keys("k", [10, 20, 30], dtype=tf.int64, default_value=3)
    vfile = L.sparse_column_with_vocabulary_file("c", vocab, num_oov_buckets=2, vocab_size=3)
    hashed = L.sparse_column_with_hash_bucket("h", 7, dtype=tf.int64)
    feats = {"n": tf.constant([[5, -1], [-3, 2]], tf.int64),
             "k": tf.constant([[20], [40]], tf.int64),
             "c": tf.constant([["blue", ""], ["pink", "red"]]),
             "h": tf.constant([[12], [-1]], tf.int64)}
    t = L.transform_features(feats, [ints, keys, vfile, hashed])
    got = tf.Session().run({c.name: t[c].id_tensor for c in t})
    assert got["n"].tolist() == [[1, -1], [1, 2]]            # mod, -1 missing
    assert got["k"].tolist() == [[1], [3]]                   # default_value 3
    assert got["c"].tolist() == [[2, -1], [3 + fp("pink") % 2, 0]]
    assert got["h"].tolist() == [[fp("12") % 7], [-1]]       # ints hashed as text


def test_parse_feature_columns_from_examples():
    wide, _ = columns()
    spec = L.create_feature_spec_for_parsing(wide)
    assert spec["occ"] == tf.VarLenFeature(tf.string)
    assert spec["age"] == tf.FixedLenFeature([1], tf.float32)
    assert spec["hours"] == tf.FixedLenFeature([2], tf.float32)
    assert spec["tag_w"] == tf.VarLenFeature(tf.float32)
    assert spec["tags"] == tf.VarLenFeature(tf.int64)
    d = make_data(6, seed=3)

    def example(i):
        f = tf.train.Feature
        feat = {"gender": f(bytes_list=tf.train.BytesList(value=[d["gender"][i].encode()])),
                "occ": f(bytes_list=tf.train.BytesList(value=[o.encode()
                                                              for o in d["occ"][i]])),
                "age": f(float_list=tf.train.FloatList(value=[d["age"][i]])),
                "hours": f(float_list=tf.train.FloatList(value=list(d["hours"][i]))),
                "tags": f(int64_list=tf.train.Int64List(value=[t for t in d["tags"][i]
                                                                if t != -1])),
                "tag_w": f(float_list=tf.train.FloatList(value=[
                    w for t, w in zip(d["tags"][i], d["tag_w"][i]) if t != -1]))}
        return tf.train.Example(features=tf.train.Features(feature=feat)).SerializeToString()
    parsed = L.parse_feature_columns_from_examples(
        tf.constant([example(i) for i in range(6)], dtype=tf.string), wide)
    assert all(c in parsed for c in wide) and "occ" in parsed
    logits, col_vars, bias = L.weighted_sum_from_feature_columns(parsed, wide, 1)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    r = np.random.default_rng(5)
    for (v,) in col_vars.values():   # random weights, then the NumPy reference
        sess.run(v.assign(r.normal(size=v.shape.as_list()).astype(np.float32)))
    got, vals = sess.run([logits, {c.name: v[0] for c, v in col_vars.items()}])
    np.testing.assert_allclose(got, np_linear(d, vals, 0.0), rtol=1e-4, atol=1e-5)
    ph = L.make_place_holder_tensors_for_base_features(wide)
    assert isinstance(ph["occ"], tf.SparseTensor) and ph["age"].shape.as_list() == [None, 1]


def test_joint_weighted_sum_and_shared_embeddings():
    d = make_data(10, seed=2)
    gender = L.sparse_column_with_keys("gender", ["F", "M"])
    occ = L.sparse_column_with_hash_bucket("occ", 20)
    age_b = L.bucketized_column(L.real_valued_column("age"), AGE_B)
    pred, (w,), bias = L.joint_weighted_sum_from_feature_columns(
        features(d), [occ, gender, age_b], 2)
    assert w.op.name == "joint_weighted_sum_from_feature_columns/linear_weights/weights"
    assert w.shape.as_list() == [4 + 20 + 2, 2]   # sorted keys: bucketized, hashed, keys
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    table = np.random.default_rng(0).normal(size=(26, 2)).astype(np.float32)
    sess.run(w.assign(table))
    want = np.zeros((10, 2))
    bucket = np.searchsorted(AGE_B, d["age"], side="right")
    for i in range(10):
        want[i] += table[bucket[i]]
        want[i] += sum((table[4 + fp(o) % 20] for o in d["occ"][i]), np.zeros(2))
        if d["gender"][i] in ("F", "M"):
            want[i] += table[24 + ["F", "M"].index(d["gender"][i])]
    np.testing.assert_allclose(sess.run(pred), want, rtol=1e-5, atol=1e-6)

    a, b = L.sparse_column_with_hash_bucket("a", 6), L.sparse_column_with_hash_bucket("b", 6)
    shared = L.shared_embedding_columns([a, b], 3, combiner="sum")
    assert [c.name for c in shared] == ["a_shared_embedding", "b_shared_embedding"]
    with tf.Graph().as_default():
        out = L.input_from_feature_columns({"a": tf.constant([["x"], ["y"]]),
                                            "b": tf.constant([["x"], [""]])}, shared)
        tables = tf.global_variables()
        assert [v.op.name for v in tables] == [
            "input_from_feature_columns/a_shared_embedding/a_b_shared_embedding"]
        s = tf.Session()
        s.run(tf.global_variables_initializer())
        o, t = s.run([out, tables[0]])
        np.testing.assert_allclose(o[0, :3], o[0, 3:])               # the same table
        np.testing.assert_allclose(o[0, :3], t[fp("x") % 6], rtol=1e-6)
        np.testing.assert_array_equal(o[1, 3:], np.zeros(3))         # '' is missing


def test_feature_column_errors():
    age = L.real_valued_column("age")
    occ = L.sparse_column_with_hash_bucket("occ", 10)
    with pytest.raises(ValueError, match="sorted"):
        L.bucketized_column(age, [3, 1])
    assert L.bucketized_column(age, [1, 1, 2]).boundaries == (1, 2)   # equal ones merged
    with pytest.raises(TypeError, match="_RealValuedColumn"):
        L.bucketized_column(occ, [1])
    with pytest.raises(ValueError, match="at least 2"):
        L.crossed_column([occ], 10)
    with pytest.raises(TypeError, match="columns must be"):
        L.crossed_column([occ, age], 10)
    with pytest.raises(TypeError, match="categorical|sparse"):
        L.embedding_column(age, 3)
    with pytest.raises(ValueError, match="dtype must be string or integer"):
        L.sparse_column_with_hash_bucket("x", 10, dtype=tf.float32)
    with pytest.raises(TypeError, match="dimension must be an integer"):
        L.real_valued_column("x", dimension=None)
    with pytest.raises(ValueError, match="length of default_value"):
        L.real_valued_column("x", 2, default_value=[1.0])
    with pytest.raises(ValueError, match="vocab_size"):
        L.sparse_column_with_vocabulary_file("x", "v.txt")
    with pytest.raises(ValueError, match="Duplicate feature column key"):
        L.check_feature_columns([occ, L.sparse_column_with_hash_bucket("occ", 10)])
    feats = {"occ": tf.constant([["a"]]), "age": tf.constant([[1.0]])}
    with pytest.raises(ValueError, match="not supported in DNN"):
        L.input_from_feature_columns(feats, [occ])
    with pytest.raises(ValueError, match="not supported in linear"):
        L.weighted_sum_from_feature_columns(feats, [L.embedding_column(occ, 2)], 1)
    with pytest.raises(NotImplementedError, match="Real-valued"):
        L.joint_weighted_sum_from_feature_columns(feats, [age], 1)
    with pytest.raises(KeyError, match="nope"):
        L.input_from_feature_columns(feats, [L.real_valued_column("nope")])
    with pytest.raises(TypeError, match="does not match"):
        L.weighted_sum_from_feature_columns(
            {"n": tf.constant([["a"]])}, [L.sparse_column_with_integerized_feature("n", 3)], 1)
    c = L.real_valued_column("w", 2, default_value=3)
    assert c.default_value == (3.0, 3.0) and c.key.startswith("_RealValuedColumn(column_name=w")


# ---- learn.datasets ---------------------------------------------------------------------------

def test_learn_datasets_base_and_mnist(tmp_path):
    base, mnist = tf.contrib.learn.datasets.base, tf.contrib.learn.datasets.mnist
    p = tmp_path / "iris_small.csv"
    p.write_text("3,2,setosa,versicolor\n5.1,3.5,0\n4.9,3.0,1\n6.2,2.9,2\n")
    ds = base.load_csv_with_header(str(p), target_dtype=np.int64, features_dtype=np.float32)
    assert isinstance(ds, base.Dataset) and ds.data.dtype == np.float32
    np.testing.assert_array_equal(ds.data, np.float32([[5.1, 3.5], [4.9, 3.0], [6.2, 2.9]]))
    assert ds.target.tolist() == [0, 1, 2]
    q = tmp_path / "rows.csv"
    q.write_text("1,2.5,3\n4,5.5,6\n")
    ds = base.load_csv_without_header(str(q), np.float64, np.float32, target_column=0)
    assert ds.target.tolist() == [1.0, 4.0] and ds.data.tolist() == [[2.5, 3.0], [5.5, 6.0]]
    q.write_text("1,x,3\n")
    with pytest.raises(InvalidArgumentError, match="line 1"):
        base.load_csv_without_header(str(q), np.int64, np.float32)
    with pytest.raises(NotFoundError):
        base.load_csv_with_header(str(tmp_path / "none.csv"), np.int64, np.float32)
    assert base.Datasets._fields == ("train", "validation", "test")
    assert tf.contrib.learn.datasets.Dataset is base.Dataset

    r = np.random.default_rng(0)

    def idx(name, arr, magic):
        header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in arr.shape)
        with gzip.open(tmp_path / (name + ".gz"), "wb") as f:
            f.write(header + arr.astype(np.uint8).tobytes())
    idx("train-images-idx3-ubyte", r.integers(0, 256, (12, 28, 28)), 2051)
    idx("train-labels-idx1-ubyte", r.integers(0, 10, 12), 2049)
    idx("t10k-images-idx3-ubyte", r.integers(0, 256, (4, 28, 28)), 2051)
    idx("t10k-labels-idx1-ubyte", r.integers(0, 10, 4), 2049)
    m = mnist.read_data_sets(str(tmp_path), one_hot=True, validation_size=2)
    assert m.train.images.shape == (10, 784) and m.train.labels.shape == (10, 10)
    assert m.validation.num_examples == 2 and m.test.images.max() <= 1.0
    x, y = m.train.next_batch(4)
    assert x.shape == (4, 784) and (y.sum(1) == 1).all()
    assert isinstance(m.train, mnist.DataSet)


# ---- contrib.data -----------------------------------------------------------------------------

def all_of(ds):
    nxt, out = ds.make_one_shot_iterator().get_next(), []
    with tf.Session() as s:
        while True:
            try:
                out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def lists(ds):
    return [np.asarray(x).tolist() for x in all_of(ds)]


def test_contrib_data_aliases_and_batching():
    exp = tf.data.experimental
    for name in ("map_and_batch", "shuffle_and_repeat", "parallel_interleave", "unbatch",
                 "sample_from_datasets", "choose_from_datasets", "get_single_element",
                 "CsvDataset", "make_csv_dataset", "ignore_errors"):
        assert getattr(D, name) is getattr(exp, name), name
    r = tf.data.Dataset.range
    assert lists(r(7).apply(D.batch_and_drop_remainder(3))) == [[0, 1, 2], [3, 4, 5]]
    ds = r(1, 6).map(lambda n: tf.fill([n], n))
    assert lists(ds.apply(D.padded_batch_and_drop_remainder(2, [None]))) == [
        [[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert lists(r(3).apply(D.sloppy_interleave(lambda v: r(v * 10, v * 10 + 2), 2))) == [
        0, 10, 1, 11, 20, 21]
    assert lists(r(4).apply(D.map_and_batch(lambda v: v * v, 3))) == [[0, 1, 4], [9]]
    assert lists(r(4).batch(2).apply(D.unbatch())) == [0, 1, 2, 3]
    with pytest.raises(UnimplementedError, match="ignore_errors"):
        r(3).apply(D.ignore_errors())
    assert lists(r(5, 8).apply(D.enumerate_dataset(2))) == [[2, 5], [3, 6], [4, 7]]
    uniq = tf.data.Dataset.from_tensor_slices(np.array([b"b", b"a", b"b", b"c", b"a"], object))
    assert lists(uniq.apply(D.unique())) == [b"b", b"a", b"c"]
    with pytest.raises(TypeError, match="single"):
        r(3).map(lambda v: (v, v)).apply(D.unique())
    assert lists(D.Counter(5, -2).take(4)) == [5, 3, 1, -1]
    assert lists(r(3).apply(D.prefetch_to_device("/gpu:0"))) == [0, 1, 2]
    shaped = r(4).batch(2).apply(D.assert_element_shape([2]))
    assert shaped.output_shapes.as_list() == [2] and lists(shaped) == [[0, 1], [2, 3]]
    with pytest.raises(InvalidArgumentError, match="expected shape"):
        all_of(r(3).batch(2).apply(D.assert_element_shape([2])))
    with pytest.raises(ValueError, match="not compatible"):
        r(3).apply(D.assert_element_shape([2]))


def test_sliding_window_batch():
    r = tf.data.Dataset.range
    assert lists(r(7).apply(D.sliding_window_batch(3))) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    assert lists(r(10).apply(D.sliding_window_batch(3, window_shift=2))) == [
        [0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]
    assert lists(r(11).apply(D.sliding_window_batch(2, stride=4, window_stride=3))) == [
        [0, 3], [4, 7]]
    pairs = r(4).map(lambda v: (v, tf.fill([2], v * 10)))
    got = all_of(pairs.apply(D.sliding_window_batch(2, window_shift=2)))
    assert [(a.tolist(), b.tolist()) for a, b in got] == [
        ([0, 1], [[0, 0], [10, 10]]), ([2, 3], [[20, 20], [30, 30]])]
    with pytest.raises(ValueError, match="both"):
        D.sliding_window_batch(2, stride=1, window_shift=1)
    with pytest.raises(ValueError, match="window_size"):
        D.sliding_window_batch(0)


def test_group_by_window():
    r = tf.data.Dataset.range
    assert lists(r(10).apply(D.group_by_window(lambda x: x % 3, lambda k, w: w.batch(2),
                                               window_size=2))) == [
        [0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]    # partial windows by increasing key
    got = lists(r(10).apply(D.group_by_window(
        lambda x: x % 2, lambda k, w: w.map(lambda v: v * 10 + k).batch(5),
        window_size_func=lambda k: k + 2)))
    assert got == [[0, 20], [11, 31, 51], [40, 60], [80], [71, 91]]
    scale = tf.placeholder(tf.int64, [])              # read when the iterator starts
    ds = r(6).apply(D.group_by_window(lambda x: x // 3, lambda k, w: w.map(
        lambda v: v * scale).batch(3), window_size=3))
    it = ds.make_initializable_iterator()
    with tf.Session() as s:
        s.run(it.initializer, {scale: 2})
        assert s.run(it.get_next()).tolist() == [0, 2, 4]
        assert s.run(it.get_next()).tolist() == [6, 8, 10]
    with pytest.raises(ValueError, match="either"):
        D.group_by_window(lambda x: x, lambda k, w: w, 2, lambda k: k)
    with pytest.raises(TypeError, match="int64"):
        r(3).apply(D.group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, w: w, 2))
    with pytest.raises(InvalidArgumentError, match="greater than zero"):
        all_of(r(3).apply(D.group_by_window(lambda x: x, lambda k, w: w,
                                            window_size_func=lambda k: k - 5)))


def test_bucket_by_sequence_length():
    seqs = [[n] * n for n in [1, 5, 2, 7, 3, 1, 9]]
    ds = tf.data.Dataset.from_generator(lambda: iter(seqs), tf.int64, [None])
    got = lists(ds.apply(D.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 6],
                                                     [2, 2, 2])))
    assert got == [[[1, 0], [2, 2]], [[5, 5, 5, 5, 5], [3, 3, 3, 0, 0]],
                   [[7] * 7 + [0, 0], [9] * 9], [[1]]]
    got = lists(ds.apply(D.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 10], [2, 2, 2], pad_to_bucket_boundary=True,
        padding_values=np.int64(-1), drop_remainder=True)))
    assert got == [[[1, -1], [2, 2]], [[5] * 5 + [-1] * 4, [7] * 7 + [-1] * 2],
                   [[3, 3, 3] + [-1] * 6, [9] * 9]]
    got = lists(tf.data.Dataset.range(5).apply(D.bucket_by_sequence_length(
        lambda x: x, [2], [2, 3], no_padding=True)))
    assert got == [[0, 1], [2, 3, 4]]
    with pytest.raises(ValueError, match="len\\(bucket_batch_sizes\\)"):
        D.bucket_by_sequence_length(lambda x: 1, [3], [2])
    with pytest.raises(InvalidArgumentError, match="pad_to_bucket_boundary"):
        lists(ds.apply(D.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 6],
                                                   [2, 2, 2], pad_to_bucket_boundary=True)))


def test_scan():
    r = tf.data.Dataset.range
    assert lists(r(6).apply(D.scan(np.int64(0), lambda s, x: (s + x, s * 100 + x)))) == [
        0, 1, 102, 303, 604, 1005]
    # a tuple state, a tuple element, a state read when the iterator starts
    start = tf.placeholder(tf.float32, [])
    ds = tf.data.Dataset.from_tensor_slices((np.float32([1, 2, 3]), np.int32([4, 5, 6])))
    ds = ds.apply(D.scan((start, np.int32(0)),
                         lambda st, el: ((st[0] * el[0], st[1] + el[1]), st[0] + 1)))
    it = ds.make_initializable_iterator()
    with tf.Session() as s:
        s.run(it.initializer, {start: 2.0})
        assert [float(s.run(it.get_next())) for _ in range(3)] == [3.0, 3.0, 5.0]
    # a growing state: its shape relaxes to [None], as TF re-traces
    grow = r(4).apply(D.scan(np.int64([]).reshape(0),
                             lambda s, x: (tf.concat([s, [x]], 0), tf.reduce_sum(s))))
    assert lists(grow) == [0, 0, 1, 3]
    with pytest.raises(TypeError, match="must match the initial state"):
        r(3).apply(D.scan(np.int64(0), lambda s, x: (tf.cast(s, tf.float32), x)))


def test_rejection_resample():
    n = 6000
    classes = np.arange(n) % 4
    ds = tf.data.Dataset.from_tensor_slices((classes.astype(np.int32), np.arange(n)))
    target = [0.1, 0.2, 0.3, 0.4]
    got = all_of(ds.apply(D.rejection_resample(lambda c, i: c, target, seed=3)))
    cls = np.array([int(c) for c, _ in got])
    assert all(int(c) == int(e[0]) and c == classes[e[1]] for c, e in got)   # (class, elem)
    freq = np.bincount(cls, minlength=4) / len(cls)
    np.testing.assert_allclose(freq, target, atol=0.025)
    got2 = all_of(ds.apply(D.rejection_resample(lambda c, i: c, target, [0.25] * 4, seed=3)))
    freq2 = np.bincount([int(c) for c, _ in got2], minlength=4) / len(got2)
    np.testing.assert_allclose(freq2, target, atol=0.025)
    assert [e[1] for _, e in got2] == sorted(e[1] for _, e in got2)    # order kept
    with pytest.raises(ValueError, match="probability"):
        D.rejection_resample(lambda c, i: c, [0.5, 0.6])


# ---- stateless --------------------------------------------------------------------------------

def test_stateless_ops():
    from xlapy.compat.v1.ops import nnx_random
    assert S.stateless_random_uniform is nnx_random.stateless_random_uniform
    assert S.stateless_random_normal is nnx_random.stateless_random_normal
    seed = tf.placeholder(tf.int64, [2])
    tn = S.stateless_truncated_normal([4000], seed, mean=1.0, stddev=2.0)
    mn = S.stateless_multinomial(tf.log([[0.2, 0.3, 0.5], [0.9, 0.1, 0.0]]), 4000, seed,
                                 output_dtype=tf.int32)
    un = S.stateless_random_uniform([3], seed)
    assert tn.shape.as_list() == [4000] and mn.shape.as_list() == [2, 4000]
    assert mn.dtype == tf.int32
    runs = []
    for cfg in (None, jit_config(), None):
        with tf.Session(config=cfg) as s:
            runs.append(s.run([tn, mn, un], {seed: [7, 11]}))
    for a, b in zip(runs[0], runs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)   # the same in the executor and XLA
    for a, b in zip(runs[0], runs[2]):
        np.testing.assert_array_equal(a, b)           # and session after session
    other = tf.Session().run([tn, mn], {seed: [7, 12]})
    assert not np.array_equal(other[0], runs[0][0]) and not np.array_equal(other[1],
                                                                          runs[0][1])
    t, m = runs[0][0], runs[0][1]
    assert -3.0 <= t.min() and t.max() <= 5.0        # within 2 stddev of the mean
    assert abs(t.mean() - 1.0) < 0.06 and abs(t.std() - 2 * 0.87962566) < 0.05
    f0, f1 = (np.bincount(row, minlength=3) / 4000 for row in m)
    np.testing.assert_allclose(f0, [0.2, 0.3, 0.5], atol=0.03)
    assert f1[2] == 0 and abs(f1[0] - 0.9) < 0.02     # a zero probability is never drawn
    with pytest.raises(ValueError, match="floating"):
        S.stateless_truncated_normal([2], [1, 2], dtype=tf.int32)
    with pytest.raises(ValueError, match="matrix"):
        S.stateless_multinomial([0.5, 0.5], 3, [1, 2])


def test_weighted_lookup_gradient():
    # d(sum of a weighted sqrtn embedding)/d(table): w_i / sqrt(sum w^2) per kept id
    col = L.embedding_column(L.weighted_sparse_column(
        L.sparse_column_with_integerized_feature("i", 5), "w"), 2, combiner="sqrtn")
    ids = np.int64([[1, 3, -1], [3, 3, 0]])
    w = np.float32([[2.0, 1.0, 5.0], [0.5, -1.0, 1.5]])   # -1.0 is pruned (sqrtn)
    out = L.input_from_feature_columns({"i": tf.constant(ids), "w": tf.constant(w)}, [col])
    table = tf.global_variables()[0]
    grad = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(out), table)[0])
    want = np.zeros((5, 2))
    for r in range(2):
        kept = [(i, x) for i, x in zip(ids[r], w[r]) if i >= 0 and x > 0]
        norm = np.sqrt(sum(x * x for _, x in kept))
        for i, x in kept:
            want[i] += x / norm
    for cfg in (None, jit_config()):
        with tf.Session(config=cfg) as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_allclose(s.run(grad), want, rtol=1e-5)
