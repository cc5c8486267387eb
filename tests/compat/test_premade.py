"""tf.feature_column: each column's output through input_layer and linear_model against
NumPy (vocabulary lookups with OOV buckets and default values, bucket boundaries, multi-hot
indicators, embedding combiners, TF's FarmHash buckets)."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.ops.lookup_ops import fingerprint64

from .conftest import jit_config

fc = tf.feature_column


def run(t, config=None):
    with tf.Session(config=config) as s:
        s.run(tf.global_variables_initializer())
        return s.run(t)


def consts(d):
    return {k: tf.constant(v) for k, v in d.items()}


# ---- hashing -----------------------------------------------------------------------------------

# FarmHash Fingerprint64 (TF's Fingerprint64) of these strings, from Google's farmhash
FINGERPRINTS = {
    "": 11160318154034397263, "a": 12917804110809363939, "Hello": 15404698994557526151,
    "TensorFlow": 4265654129848386254, "Bachelors": 16203445660475879456,
    "x" * 20: 8233088228747857348, "y" * 40: 276292113409495006,
    "z" * 100: 9220849947163966073, "123": 15224156052391641931, "-7": 9381026191229130062,
}


def test_fingerprint64_is_farmhash():
    for s, want in FINGERPRINTS.items():
        assert fingerprint64(s) == want, s


def test_hash_bucket_column_matches_tf():
    # TF's documented example: to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3)
    from xlapy.compat.v1.ops.lookup_ops import string_to_hash_bucket_fast
    got = run(string_to_hash_bucket_fast(tf.constant(["Hello", "TensorFlow", "2.x"]), 3))
    np.testing.assert_array_equal(got, [0, 2, 2])
    words = np.array([["Hello", "a"], ["x" * 20, ""], ["z" * 100, "Bachelors"]])
    col = fc.categorical_column_with_hash_bucket("w", 7)
    out = run(fc.input_layer({"w": tf.constant(words)}, [fc.indicator_column(col)]))
    want = np.zeros((3, 7), np.float32)
    for i, row in enumerate(words):
        for w in row:
            if w:
                want[i, FINGERPRINTS[w] % 7] += 1
    np.testing.assert_array_equal(out, want)
    # integers hash by their decimal text, as TF's as_string + hash
    icol = fc.categorical_column_with_hash_bucket("n", 11, dtype=tf.int64)
    out = run(fc.input_layer({"n": tf.constant(np.array([123, -7], np.int64))},
                             [fc.indicator_column(icol)]))
    np.testing.assert_array_equal(out.argmax(1), [FINGERPRINTS["123"] % 11,
                                                  FINGERPRINTS["-7"] % 11])


# ---- dense columns -----------------------------------------------------------------------------

def test_numeric_and_bucketized():
    age = np.array([10.0, 18.0, 29.9, 30.0, 65.0], np.float32)
    xy = np.arange(10, dtype=np.float32).reshape(5, 2)
    a = fc.numeric_column("age", normalizer_fn=lambda x: (x - 30.0) / 10.0)
    p = fc.numeric_column("pos", shape=2)
    b = fc.bucketized_column(fc.numeric_column("age"), [18.0, 30.0, 50.0])
    out = run(fc.input_layer(consts({"age": age, "pos": xy}), [p, b, a]))
    buckets = np.eye(4, dtype=np.float32)[[0, 1, 1, 2, 3]]   # x == boundary: upper bucket
    want = np.concatenate([((age - 30) / 10)[:, None], buckets, xy], 1)  # sorted by name
    np.testing.assert_allclose(out, want, rtol=1e-6)
    # a bucketized multi-dimensional column: one one-hot per element
    b2 = fc.bucketized_column(p, [3.0, 6.0])
    out = run(fc.input_layer(consts({"pos": xy}), [b2]))
    idx = np.searchsorted([3.0, 6.0], xy, side="right")
    np.testing.assert_array_equal(out, np.eye(3)[idx].reshape(5, 6))


def test_vocabulary_list_oov_and_default():
    words = np.array([["cat", "dog"], ["fish", ""], ["emu", "cat"], ["", ""]])
    oov = fc.categorical_column_with_vocabulary_list("w", ["cat", "dog", "bird"],
                                                     num_oov_buckets=2)
    dflt = fc.categorical_column_with_vocabulary_list("v", ["cat", "dog", "bird"],
                                                      default_value=2)
    drop = fc.categorical_column_with_vocabulary_list("u", ["cat", "dog", "bird"])
    feats = consts({"w": words, "v": words, "u": words})
    out = run(fc.input_layer(feats, [fc.indicator_column(c) for c in (oov, dflt, drop)]))
    vocab = {"cat": 0, "dog": 1, "bird": 2}
    want_u, want_v, want_w = np.zeros((4, 3)), np.zeros((4, 3)), np.zeros((4, 5))
    for i, row in enumerate(words):
        for w in row:
            if not w:
                continue                     # '' is a missing value: no id at all
            if w in vocab:
                want_u[i, vocab[w]] += 1
                want_v[i, vocab[w]] += 1
                want_w[i, vocab[w]] += 1
            else:
                want_v[i, 2] += 1             # default_value
                want_w[i, 3 + FINGERPRINTS.get(w, fingerprint64(w)) % 2] += 1
    np.testing.assert_array_equal(out, np.concatenate([want_u, want_v, want_w], 1))
    assert oov.num_buckets == 5 and dflt.num_buckets == 3
    # integer vocabularies, [batch] input
    iv = fc.categorical_column_with_vocabulary_list("k", [10, 20, 30], default_value=0)
    out = run(fc.input_layer({"k": tf.constant(np.array([30, 5, 10, -1], np.int64))},
                             [fc.indicator_column(iv)]))
    np.testing.assert_array_equal(out, [[0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 0, 0]])
    with pytest.raises(InvalidArgumentError, match="both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_list("w", ["a"], default_value=0,
                                                   num_oov_buckets=1)
    with pytest.raises(InvalidArgumentError, match="Duplicate"):
        fc.categorical_column_with_vocabulary_list("w", ["a", "a"])
    with pytest.raises(InvalidTypeError, match="dtype"):
        run(fc.input_layer({"u": tf.constant([1, 2])}, [fc.indicator_column(drop)]))


def test_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("red\ngreen\nblue\nviolet\n")
    col = fc.categorical_column_with_vocabulary_file("c", str(path), vocabulary_size=3,
                                                     num_oov_buckets=1)
    out = run(fc.input_layer({"c": tf.constant(["blue", "violet", "red"])},
                             [fc.indicator_column(col)]))
    # violet is past vocabulary_size: the one OOV bucket
    np.testing.assert_array_equal(out, [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]])


def test_identity_column():
    ids = np.array([[0, 3], [4, -1], [2, 2]], np.int64)
    col = fc.categorical_column_with_identity("i", 4, default_value=1)
    out = run(fc.input_layer({"i": tf.constant(ids)}, [fc.indicator_column(col)]))
    np.testing.assert_array_equal(out, [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 2, 0]])
    strict = fc.categorical_column_with_identity("i", 4)
    with pytest.raises(InvalidArgumentError, match=r"ids must be in \[0, 4\)"):
        run(fc.input_layer({"i": tf.constant(ids)}, [fc.indicator_column(strict)]))


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_embedding_combiners(combiner):
    table = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    ids = np.array([[0, 4, 4], [2, -1, -1], [-1, -1, -1], [1, 3, -1]], np.int64)
    col = fc.embedding_column(fc.categorical_column_with_identity("i", 5), 3,
                              combiner=combiner, initializer=tf.constant_initializer(table))
    out = run(fc.input_layer({"i": tf.constant(ids)}, [col]))
    want = np.zeros((4, 3), np.float32)
    for r, row in enumerate(ids):
        rows = table[row[row >= 0]]
        if len(rows):
            want[r] = {"sum": rows.sum(0), "mean": rows.mean(0),
                       "sqrtn": rows.sum(0) / np.sqrt(len(rows))}[combiner]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert [v.name for v in tf.global_variables()] == [
        "input_layer/i_embedding/embedding_weights:0"]


def test_embedding_default_initializer_and_training():
    col = fc.embedding_column(fc.categorical_column_with_vocabulary_list(
        "w", ["a", "b", "c"]), 4)
    out = fc.input_layer({"w": tf.constant(["a", "c", "a"])}, [col])
    loss = tf.reduce_sum(tf.square(out - 1.0))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        t0 = s.run(tf.global_variables()[0])
        assert np.abs(t0).max() <= 2 / np.sqrt(4) + 1e-6 and t0.std() > 0.1  # truncated N
        for _ in range(60):
            s.run(step)
        t1 = s.run(tf.global_variables()[0])
    np.testing.assert_allclose(t1[[0, 2]], 1.0, atol=1e-3)
    np.testing.assert_array_equal(t1[1], t0[1])          # "b" never looked up


def test_linear_model_values_and_names():
    feats = consts({"x": np.array([1.0, -2.0, 0.5], np.float32),
                    "w": np.array([["a", "b"], ["zz", ""], ["b", "b"]])})
    x = fc.numeric_column("x")
    w = fc.categorical_column_with_vocabulary_list("w", ["a", "b"], num_oov_buckets=1)
    out = fc.linear_model(feats, [x, w], units=2, sparse_combiner="mean")
    names = [v.name for v in tf.global_variables()]
    assert names == ["linear_model/w/weights:0", "linear_model/x/weights:0",
                     "linear_model/bias_weights:0"]
    wx = np.array([[2.0, -1.0]], np.float32)
    ww = np.array([[1.0, 0.0], [0.0, 3.0], [-5.0, 5.0]], np.float32)
    bias = np.array([0.5, -0.5], np.float32)
    vs = {v.name: v for v in tf.global_variables()}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert not s.run(out).any()                        # zeros until trained
        s.run([vs["linear_model/x/weights:0"].assign(wx),
               vs["linear_model/w/weights:0"].assign(ww),
               vs["linear_model/bias_weights:0"].assign(bias)])
        got = s.run(out)
    xv = np.array([[1.0], [-2.0], [0.5]])
    cat = np.stack([(ww[0] + ww[1]) / 2, ww[2], ww[1]])     # "zz" -> the OOV bucket 2
    np.testing.assert_allclose(got, xv @ wx + cat + bias, rtol=1e-6)


def test_input_layer_errors():
    cat = fc.categorical_column_with_identity("i", 3)
    with pytest.raises(InvalidArgumentError, match="indicator_column"):
        fc.input_layer({"i": tf.constant([1])}, [cat])
    with pytest.raises(InvalidArgumentError, match="not in features"):
        fc.input_layer({"j": tf.constant([1.0])}, [fc.numeric_column("i")])
    with pytest.raises(InvalidArgumentError, match="sorted"):
        fc.bucketized_column(fc.numeric_column("a"), [3.0, 1.0])
    with pytest.raises(InvalidArgumentError, match="Duplicate feature column"):
        fc.input_layer({"a": tf.constant([1.0])}, [fc.numeric_column("a")] * 2)


def test_string_tensors_stay_out_of_clusters():
    idx = tf.placeholder(tf.int32, [None])
    names = tf.gather(tf.constant([b"zero", b"one", b"two"]), idx)
    x = tf.cast(idx, tf.float32) * 2.0 + 1.0
    sess = tf.Session(config=jit_config())
    got, xv = sess.run([names, x], {idx: [2, 0]})
    assert list(got) == [b"two", b"zero"] and list(xv) == [5.0, 1.0]
    assert "XLA does not compute strings" in sess.cluster_summary([names, x], {idx: [2, 0]})
