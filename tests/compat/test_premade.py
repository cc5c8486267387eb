"""tf.feature_column and the premade estimators: each column's output through input_layer
and linear_model against NumPy (vocabulary lookups with OOV buckets and default values,
bucket boundaries, multi-hot indicators, embedding combiners, TF's FarmHash buckets); the
"Premade Estimators" iris tutorial (DNNClassifier), a binary LinearClassifier over string
features, wide-and-deep, and regressors, in the executor and with XLA auto-jit."""

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


def test_crossed_column_matches_tf():
    # TF's sparse_cross_op_test: these three strings cross to 1971693436396284976 (no
    # buckets), 83 (100 buckets), and 31 with hash_key + 1
    from xlapy.compat.v1.ops.lookup_ops import DEFAULT_HASH_KEY, cross_hashed
    c = [tf.constant([[s]]) for s in ["batch1-FC1-F1", "batch1-FC2-F1", "batch1-FC3-F1"]]
    got = run([cross_hashed(c), cross_hashed(c, 100),
               cross_hashed(c, 100, hash_key=DEFAULT_HASH_KEY + 1)])
    assert [int(g[0, 0]) for g in got] == [1971693436396284976, 83, 31]
    # a feature key crossed with a vocabulary column's ids: every pair, as TF's
    from xlapy.compat.v1.ops.lookup_ops import fingerprint_cat64
    vocab = fc.categorical_column_with_vocabulary_list("b", ["u", "v"])
    cross = fc.crossed_column(["a", vocab], 50)
    assert cross.name == "a_X_b" and cross.num_buckets == 50
    feats = {"a": tf.constant([["x", "y"], ["x", "x"]]), "b": tf.constant(["v", "w"])}
    out = run(fc.input_layer(feats, [fc.indicator_column(cross)]))
    want = np.zeros((2, 50))
    for a in ("x", "y"):      # row 0: b = "v" (id 1); row 1: "w" is out of vocabulary
        h = fingerprint_cat64(fingerprint_cat64(DEFAULT_HASH_KEY, fingerprint64(a)), 1)
        want[0, h % 50] += 1
    np.testing.assert_array_equal(out, want)
    with pytest.raises(InvalidArgumentError, match="not supported for crossing"):
        fc.crossed_column(["a", fc.categorical_column_with_hash_bucket("c", 3)], 10)


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
    assert "string tensors (XLA has no string type)" in sess.cluster_summary(
        [names, x], {idx: [2, 0]})


# ---- premade estimators ------------------------------------------------------------------------

R = np.random.default_rng(0)
IRIS_KEYS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
IRIS_CENTERS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
IRIS_Y = R.integers(0, 3, 300)
IRIS_X = (IRIS_CENTERS[IRIS_Y] + 0.25 * R.standard_normal((300, 4))).astype(np.float32)
IRIS = {k: IRIS_X[:, i] for i, k in enumerate(IRIS_KEYS)}


def config(xla=False):
    return tf.estimator.RunConfig(tf_random_seed=1, log_step_count_steps=100000,
                                  session_config=jit_config() if xla else None)


def inp(x, y=None, batch_size=100, train=False):
    return tf.estimator.inputs.numpy_input_fn(x, y, batch_size=batch_size,
                                              num_epochs=None if train else 1, shuffle=train)


def iris_classifier(tmp_path, xla):
    cols = [fc.numeric_column(k) for k in IRIS_KEYS]
    clf = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=cols, n_classes=3,
                                     model_dir=str(tmp_path), config=config(xla))
    clf.train(inp(IRIS, IRIS_Y, 32, train=True), steps=200)
    return clf, clf.evaluate(inp(IRIS, IRIS_Y))


def test_dnn_classifier_iris_tutorial(tmp_path):
    clf, ev = iris_classifier(tmp_path / "plain", xla=False)
    assert set(ev) == {"accuracy", "average_loss", "loss", "global_step"}, ev
    assert ev["accuracy"] > 0.95 and ev["global_step"] == 200, ev
    # SUM reduction (TF 1.15): the loss of a batch of 100 is 100 x its mean loss
    np.testing.assert_allclose(ev["loss"], 100 * ev["average_loss"], rtol=1e-4)
    names = clf.get_variable_names()
    for n in ("dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel",
              "dnn/logits/bias"):
        assert n in names, names
    assert clf.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (4, 10)
    preds = list(clf.predict(inp({k: v[:30] for k, v in IRIS.items()})))
    assert len(preds) == 30
    p = preds[0]
    assert set(p) == {"logits", "probabilities", "class_ids", "classes", "all_class_ids",
                      "all_classes"}
    assert p["logits"].shape == (3,) and p["class_ids"].shape == (1,)
    np.testing.assert_allclose(p["probabilities"].sum(), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(p["all_class_ids"], [0, 1, 2])
    assert list(p["all_classes"]) == [b"0", b"1", b"2"]
    ids = np.array([q["class_ids"][0] for q in preds])
    assert [q["classes"][0] for q in preds] == [str(i).encode() for i in ids]
    assert np.mean(ids == IRIS_Y[:30]) > 0.9
    # the same training with XLA auto-jit: the same model to float precision
    _, ev_xla = iris_classifier(tmp_path / "xla", xla=True)
    assert ev_xla["accuracy"] == ev["accuracy"]
    np.testing.assert_allclose(ev_xla["average_loss"], ev["average_loss"], rtol=1e-3)


COLORS = np.array(["red", "green", "blue", "black"])
N_BIN = 400
COLOR = COLORS[R.integers(0, 4, N_BIN)]
SIZE = R.standard_normal(N_BIN).astype(np.float32)
# "yes" for red/green, or when large
BIN_Y = np.where(np.isin(COLOR, ["red", "green"]) | (SIZE > 1.5), "yes", "no")
BIN = {"color": COLOR, "size": SIZE}


def test_linear_classifier_binary_strings(tmp_path):
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"],
                                                       num_oov_buckets=1)
    size = fc.bucketized_column(fc.numeric_column("size"), [-1.0, 0.0, 1.5])
    clf = tf.estimator.LinearClassifier([color, size], label_vocabulary=["no", "yes"],
                                        model_dir=str(tmp_path), config=config())
    clf.train(inp(BIN, BIN_Y, 40, train=True), steps=150)
    ev = clf.evaluate(inp(BIN, BIN_Y))
    assert set(ev) == {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                       "average_loss", "label/mean", "loss", "precision", "prediction/mean",
                       "recall", "global_step"}, ev
    assert ev["accuracy"] > 0.95 and ev["auc"] > 0.97, ev
    lm = np.mean(BIN_Y == "yes")
    np.testing.assert_allclose(ev["label/mean"], lm, rtol=1e-5)
    np.testing.assert_allclose(ev["accuracy_baseline"], max(lm, 1 - lm), rtol=1e-5)
    assert 0.9 < ev["precision"] <= 1 and 0.9 < ev["recall"] <= 1
    assert abs(ev["prediction/mean"] - lm) < 0.1
    names = clf.get_variable_names()
    assert "linear/linear_model/color/weights" in names
    assert "linear/linear_model/size_bucketized/weights" in names
    assert "linear/linear_model/bias_weights" in names
    w = clf.get_variable_value("linear/linear_model/color/weights")
    assert w.shape == (4, 1) and w[0, 0] > 0 and w[2, 0] < 0   # red up, blue down
    preds = list(clf.predict(inp({k: v[:40] for k, v in BIN.items()})))
    p = preds[0]
    assert set(p) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                      "all_class_ids", "all_classes"}
    np.testing.assert_allclose(p["probabilities"][1], p["logistic"][0], rtol=1e-6)
    np.testing.assert_allclose(p["logistic"][0], 1 / (1 + np.exp(-p["logits"][0])),
                               rtol=1e-5)
    assert list(p["all_classes"]) == [b"no", b"yes"]
    got = np.array([q["classes"][0].decode() for q in preds])
    assert np.mean(got == BIN_Y[:40]) > 0.9


def test_wide_and_deep_with_xla(tmp_path):
    color = fc.categorical_column_with_hash_bucket("color", 16)
    size = fc.numeric_column("size")
    clf = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=[color, fc.crossed_column(
            ["color", fc.bucketized_column(size, [0.0, 1.5])], 32)],
        dnn_feature_columns=[fc.embedding_column(color, 3), size],
        dnn_hidden_units=[8], label_vocabulary=["no", "yes"], model_dir=str(tmp_path),
        config=config(xla=True))
    clf.train(inp(BIN, BIN_Y, 40, train=True), steps=200)
    ev = clf.evaluate(inp(BIN, BIN_Y))
    assert ev["accuracy"] > 0.95 and ev["global_step"] == 200, ev
    names = clf.get_variable_names()
    assert "dnn/input_from_feature_columns/input_layer/color_embedding/embedding_weights" \
        in names and "linear/linear_model/color/weights" in names
    assert clf.get_variable_value("linear/linear_model/color_X_size_bucketized/weights").shape \
        == (32, 1)


def linear_target(n=300):
    x = R.standard_normal((n, 2)).astype(np.float32)
    return {"a": x[:, 0], "b": x[:, 1]}, (3.0 * x[:, 0] - 2.0 * x[:, 1] + 1.0)


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_regressors(tmp_path, kind):
    x, y = linear_target()
    cols = [fc.numeric_column("a"), fc.numeric_column("b")]
    if kind == "dnn":
        est = tf.estimator.DNNRegressor([16], cols, optimizer="Adam",
                                        model_dir=str(tmp_path), config=config())
        steps = 300
    else:
        est = tf.estimator.LinearRegressor(cols, model_dir=str(tmp_path), config=config())
        steps = 200
    est.train(inp(x, y, 30, train=True), steps=steps)
    ev = est.evaluate(inp(x, y))
    assert set(ev) == {"average_loss", "label/mean", "prediction/mean", "loss",
                       "global_step"}, ev
    assert ev["average_loss"] < 0.05 * np.var(y), ev
    np.testing.assert_allclose(ev["label/mean"], y.mean(), rtol=1e-5)
    np.testing.assert_allclose(ev["loss"], 100 * ev["average_loss"], rtol=1e-4)
    preds = list(est.predict(inp({k: v[:5] for k, v in x.items()})))
    assert set(preds[0]) == {"predictions"} and preds[0]["predictions"].shape == (1,)
    got = np.array([p["predictions"][0] for p in preds])
    np.testing.assert_allclose(got, y[:5], atol=0.5)
    if kind == "linear":
        w = [est.get_variable_value(f"linear/linear_model/{k}/weights")[0, 0]
             for k in "ab"]
        np.testing.assert_allclose(w, [3.0, -2.0], atol=0.2)


def test_weight_column_and_optimizers(tmp_path):
    x, y = linear_target(200)
    cols = [fc.numeric_column("a"), fc.numeric_column("b")]
    est = tf.estimator.LinearRegressor(cols, weight_column="w", model_dir=str(tmp_path),
                                       optimizer=lambda: tf.train.FtrlOptimizer(0.3),
                                       config=config())
    xw = dict(x, w=np.ones(200, np.float32))
    est.train(inp(xw, y, 20, train=True), steps=20)
    # weights 0 for the second half: evaluating everything is evaluating the first half
    w = np.r_[np.ones(100), np.zeros(100)].astype(np.float32)
    ev_all = est.evaluate(inp(dict(x, w=w), y))
    half = {k: v[:100] for k, v in x.items()}
    ev_half = est.evaluate(inp(dict(half, w=np.ones(100, np.float32)), y[:100]))
    for k in ("average_loss", "label/mean", "prediction/mean"):
        np.testing.assert_allclose(ev_all[k], ev_half[k], rtol=1e-5, err_msg=k)
    with pytest.raises(InvalidArgumentError, match="Unsupported optimizer name"):
        tf.estimator.DNNClassifier([4], cols, optimizer="Nesterov").train(
            inp(x, (y > 0).astype(np.int32), train=True), steps=1)
    # an Optimizer instance; SUM_OVER_BATCH_SIZE makes the eval loss the mean loss
    clf = tf.estimator.DNNClassifier(
        [4], cols, optimizer=tf.train.AdamOptimizer(0.01), config=config(),
        loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    clf.train(inp(x, (y > 0).astype(np.int32), train=True), steps=5)
    ev = clf.evaluate(inp(x, (y > 0).astype(np.int32)))
    np.testing.assert_allclose(ev["loss"], ev["average_loss"], rtol=1e-5)
    assert clf.get_variable_names().count("dnn/logits/kernel/Adam") == 1


@pytest.mark.parametrize("activation", [None, tf.nn.relu])
def test_dnn_activation_fn(tmp_path, activation):
    # activation_fn=None makes the network linear (as TF's), relu's default does not
    cols = [fc.numeric_column("a", shape=2)]
    est = tf.estimator.DNNRegressor([8, 8], cols, activation_fn=activation,
                                    model_dir=str(tmp_path), config=config())
    x = np.random.default_rng(3).standard_normal((1, 2)).astype(np.float32)
    batch = {"a": np.concatenate([0 * x, x, 2 * x, -x])}
    f0, f1, f2, fm = (p["predictions"][0] for p in est.predict(inp(batch)))
    linear = np.isclose(f2 - f0, 2 * (f1 - f0), rtol=1e-4, atol=1e-6) and \
        np.isclose(fm - f0, -(f1 - f0), rtol=1e-4, atol=1e-6)
    assert linear == (activation is None), (f0, f1, f2, fm)
