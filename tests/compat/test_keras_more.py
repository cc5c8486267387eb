"""The rest of tf.keras that TF 1.x-era scripts use: keras.utils and keras.preprocessing
against NumPy / hand-computed references, the new layers against NumPy with set
weights, regularizers / constraints / metrics entering training, custom layers and
subclassed models, save / load_model and to_json round trips, fit on Datasets and
generators, keras.backend functions, and a classic MNIST-style script with and without
XLA."""

import hashlib
import json
import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError

from .conftest import jit_config


keras = tf.keras
K = keras.backend
R = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh():
    K.clear_session()
    yield
    K.clear_session()


# ---- keras.utils -----------------------------------------------------------------------------
def test_to_categorical_and_normalize():
    y = np.array([[1], [0], [3]])
    np.testing.assert_array_equal(keras.utils.to_categorical(y), np.eye(4)[[1, 0, 3]])
    out = keras.utils.to_categorical([[0, 2], [1, 1]], num_classes=3, dtype="int32")
    assert out.shape == (2, 2, 3) and out.dtype == np.int32
    np.testing.assert_array_equal(out.argmax(-1), [[0, 2], [1, 1]])
    with pytest.raises(InvalidArgumentError, match="class indices"):
        keras.utils.to_categorical([0, 5], num_classes=3)
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(keras.utils.normalize(x), [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_allclose(keras.utils.normalize(x, axis=0, order=1),
                               [[1.0, 1.0], [0.0, 0.0]])


def test_get_file_plot_model_custom_objects(tmp_path):
    with pytest.raises(NotFoundError, match="does not download"):
        keras.utils.get_file("nope.npz", "https://example.invalid/nope.npz",
                             cache_dir=str(tmp_path))
    src = tmp_path / "src.bin"
    src.write_bytes(b"hello")
    p = keras.utils.get_file("data.bin", "file://" + str(src), cache_dir=str(tmp_path),
                             file_hash=hashlib.md5(b"hello").hexdigest())
    assert p == str(tmp_path / "datasets" / "data.bin") and open(p, "rb").read() == b"hello"
    assert keras.utils.get_file("data.bin", "https://x/y", cache_dir=str(tmp_path)) == p
    with pytest.raises(InvalidArgumentError, match="hash"):
        keras.utils.get_file("data.bin", cache_dir=str(tmp_path), file_hash="0" * 32)
    with pytest.raises(UnimplementedError, match="plot_model"):
        keras.utils.plot_model(None)
    with keras.utils.CustomObjectScope({"Foo": int}):
        assert keras.utils.get_custom_objects()["Foo"] is int
        with keras.utils.custom_object_scope({"Bar": float}):
            assert set(keras.utils.get_custom_objects()) == {"Foo", "Bar"}
    assert keras.utils.get_custom_objects() == {}


# ---- keras.preprocessing ---------------------------------------------------------------------
SEQS = [[1, 2, 3], [4], [5, 6, 7, 8, 9], []]


@pytest.mark.parametrize("padding", ["pre", "post"])
@pytest.mark.parametrize("truncating", ["pre", "post"])
def test_pad_sequences_modes(padding, truncating):
    out = keras.preprocessing.sequence.pad_sequences(SEQS, maxlen=4, padding=padding,
                                                     truncating=truncating, value=-1)
    want = []
    for s in SEQS:
        t = s[-4:] if truncating == "pre" else s[:4]
        pad = [-1] * (4 - len(t))
        want.append(pad + t if padding == "pre" else t + pad)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == np.int32


def test_pad_sequences_defaults_and_errors():
    S = keras.preprocessing.sequence
    out = S.pad_sequences(SEQS)
    assert out.shape == (4, 5)
    np.testing.assert_array_equal(out[0], [0, 0, 1, 2, 3])
    f = S.pad_sequences([[0.5, 1.5]], maxlen=3, dtype="float32", padding="post")
    np.testing.assert_array_equal(f, [[0.5, 1.5, 0.0]])
    v = S.pad_sequences([[[1, 2]], [[3, 4], [5, 6]]])      # per-step vectors
    np.testing.assert_array_equal(v, [[[0, 0], [1, 2]], [[3, 4], [5, 6]]])
    with pytest.raises(InvalidArgumentError, match="Padding type"):
        S.pad_sequences(SEQS, padding="middle")
    with pytest.raises(InvalidArgumentError, match="non-iterable"):
        S.pad_sequences([1, 2])
    table = S.make_sampling_table(5)
    rank = np.array([1, 1, 2, 3, 4.0])
    f_ = 1e-5 * (rank * (np.log(rank) + 0.577) + 0.5 - 1 / (12 * rank))
    np.testing.assert_allclose(table, np.minimum(1, f_ / np.sqrt(f_)))
    couples, labels = S.skipgrams([1, 2, 3], 10, window_size=1, negative_samples=1.0,
                                  seed=3)
    pos = sorted(tuple(c) for c, lab in zip(couples, labels) if lab == 1)
    assert pos == [(1, 2), (2, 1), (2, 3), (3, 2)] and labels.count(0) == 4


TEXTS = ["The cat sat on the mat.", "The dog ate the cat!", "a dog"]


def test_tokenizer_counts_indices_and_matrices():
    T = keras.preprocessing.text
    tok = T.Tokenizer()
    tok.fit_on_texts(TEXTS)
    assert tok.document_count == 3
    assert tok.word_counts == {"the": 4, "cat": 2, "sat": 1, "on": 1, "mat": 1, "dog": 2,
                               "ate": 1, "a": 1}
    # by count, ties in first-seen order; index 0 is never used
    assert tok.word_index == {"the": 1, "cat": 2, "dog": 3, "sat": 4, "on": 5, "mat": 6,
                              "ate": 7, "a": 8}
    assert tok.index_word[3] == "dog" and tok.word_docs["the"] == 2
    assert tok.texts_to_sequences(["the cat, the zebra"]) == [[1, 2, 1]]
    assert tok.sequences_to_texts([[1, 2, 99]]) == ["the cat"]
    m = tok.texts_to_matrix(["the cat the", ""], mode="count")
    assert m.shape == (2, 9)
    np.testing.assert_array_equal(m[0], [0, 2, 1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(m[1], 0)
    np.testing.assert_array_equal(tok.texts_to_matrix(["the cat the"])[0],
                                  [0, 1, 1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(tok.texts_to_matrix(["the cat the"], "freq")[0][:3],
                               [0, 2 / 3, 1 / 3])
    tfidf = tok.texts_to_matrix(["the cat the"], "tfidf")[0]
    # "the" in 2 documents of 3, twice here; "cat" in 2, once
    np.testing.assert_allclose(tfidf[1], (1 + np.log(2)) * np.log(1 + 3 / 3))
    np.testing.assert_allclose(tfidf[2], 1 * np.log(1 + 3 / 3))
    with pytest.raises(InvalidArgumentError, match="vectorization mode"):
        tok.sequences_to_matrix([[1]], mode="bm25")
    # num_words keeps indices below it; the oov token takes index 1
    tok2 = T.Tokenizer(num_words=4, oov_token="<unk>")
    tok2.fit_on_texts(TEXTS)
    assert tok2.word_index["<unk>"] == 1 and tok2.word_index["the"] == 2
    assert tok2.texts_to_sequences(["the dog flew"]) == [[2, 1, 1]]
    assert tok2.texts_to_matrix(["the"]).shape == (1, 4)
    back = T.tokenizer_from_json(tok2.to_json())
    assert back.word_index == tok2.word_index and back.texts_to_sequences(["the dog"]) == \
        tok2.texts_to_sequences(["the dog"])
    chars = T.Tokenizer(char_level=True)
    chars.fit_on_texts(["abca"])
    assert chars.word_index == {"a": 1, "b": 2, "c": 3}


def test_text_helpers():
    T = keras.preprocessing.text
    assert T.text_to_word_sequence("Hello, World! hello") == ["hello", "world", "hello"]
    assert T.text_to_word_sequence("a-b", filters="", lower=False, split="-") == ["a", "b"]
    h = T.hashing_trick("x y x", 10, hash_function="md5")
    want = [int(hashlib.md5(w.encode()).hexdigest(), 16) % 9 + 1 for w in "x y x".split()]
    assert h == want
    oh = T.one_hot("a b a", 5)
    assert len(oh) == 3 and oh[0] == oh[2] and all(1 <= i <= 4 for i in oh)


def test_image_data_generator():
    I = keras.preprocessing.image
    x = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2)
    g = I.ImageDataGenerator(rescale=0.5)
    it = g.flow(x, np.array([0, 1]), batch_size=2, shuffle=False)
    assert len(it) == 1
    xb, yb = next(it)
    np.testing.assert_array_equal(xb, x * 0.5)
    np.testing.assert_array_equal(yb, [0, 1])
    g = I.ImageDataGenerator(horizontal_flip=True, width_shift_range=1,
                             height_shift_range=2)
    img = x[0]
    np.testing.assert_array_equal(g.apply_transform(img, {"flip_horizontal": True}),
                                  img[:, ::-1])
    # a shift of ty columns: out[i, j] = x[i, j + ty], the border repeated (fill 'nearest')
    sh = g.apply_transform(img, {"ty": 1, "tx": -1})
    want = img[np.clip(np.arange(3) - 1, 0, 2)][:, np.clip(np.arange(4) + 1, 0, 3)]
    np.testing.assert_array_equal(sh, want)
    for _ in range(5):
        p = g.get_random_transform(img.shape, rng=np.random.default_rng(_))
        assert p["ty"] in (-0, 0, 1, -1) and abs(p["tx"]) <= 1
    batches = [next(g.flow(x, batch_size=1, seed=1)) for _ in range(2)]
    assert batches[0].shape == (1, 3, 4, 2)
    g = I.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True)
    with pytest.raises(InvalidArgumentError, match="fit"):
        g.standardize(x[0])
    g.fit(x)
    np.testing.assert_allclose(g.mean.ravel(), x.mean((0, 1, 2)))
    z = g.flow(x, batch_size=2, shuffle=False)[0]
    np.testing.assert_allclose(z.mean((0, 1, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(z.std((0, 1, 2)), 1, atol=1e-4)
    with pytest.raises(UnimplementedError, match="rotation_range"):
        I.ImageDataGenerator(rotation_range=10)
    with pytest.raises(UnimplementedError, match="zoom_range"):
        I.ImageDataGenerator(zoom_range=0.2)


# ---- layers ----------------------------------------------------------------------------------
def _run(layer, x, weights=None, training=False):
    inp = keras.layers.Input(shape=x.shape[1:])
    out = layer(inp)
    if weights is not None:
        layer.set_weights(weights)
    fd = {inp: x}
    if training:
        fd[K.learning_phase()] = True
    return K.get_session().run(out, fd), tuple(out.shape.as_list())


X4 = R.standard_normal((2, 5, 6, 3)).astype(np.float32)


def _conv_np(x, k, stride=1):
    """Valid cross-correlation, NHWC x HWIO."""
    kh, kw = k.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, k, [[1, 2, 3], [0, 1, 2]])
    return out


def test_shape_layers_against_numpy():
    L = keras.layers
    y, s = _run(L.UpSampling2D((2, 3)), X4)
    np.testing.assert_array_equal(y, X4.repeat(2, 1).repeat(3, 2))
    assert s == (None, 10, 18, 3)
    y, s = _run(L.ZeroPadding2D(((1, 0), (2, 1))), X4)
    np.testing.assert_array_equal(y, np.pad(X4, [(0, 0), (1, 0), (2, 1), (0, 0)]))
    assert s == (None, 6, 9, 3)
    y, _ = _run(L.ZeroPadding2D(1), X4)
    np.testing.assert_array_equal(y, np.pad(X4, [(0, 0), (1, 1), (1, 1), (0, 0)]))
    y, s = _run(L.Cropping2D(((1, 2), (0, 1))), X4)
    np.testing.assert_array_equal(y, X4[:, 1:3, 0:5])
    assert s == (None, 2, 5, 3)
    y, s = _run(L.Permute((3, 1, 2)), X4)
    np.testing.assert_array_equal(y, X4.transpose(0, 3, 1, 2))
    assert s == (None, 3, 5, 6)
    x3 = X4[:, :, :, 0]
    y, s = _run(L.UpSampling1D(2), x3)
    np.testing.assert_array_equal(y, x3.repeat(2, 1))
    y, _ = _run(L.ZeroPadding1D((1, 2)), x3)
    np.testing.assert_array_equal(y, np.pad(x3, [(0, 0), (1, 2), (0, 0)]))
    y, _ = _run(L.Cropping1D((1, 2)), x3)
    np.testing.assert_array_equal(y, x3[:, 1:3])


def test_activation_layers_against_numpy():
    L = keras.layers
    x = R.standard_normal((4, 6)).astype(np.float32) * 3
    y, _ = _run(L.ELU(0.5), x)
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), rtol=1e-5,
                               atol=1e-6)
    y, _ = _run(L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5), x)
    want = np.where(x > 0.5, np.minimum(x, 2.0), 0.1 * (x - 0.5))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    y, _ = _run(L.ReLU(), x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    y, _ = _run(L.Softmax(axis=0), x)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(y, e / e.sum(0), rtol=1e-5)
    alpha = R.standard_normal(6).astype(np.float32)
    layer = L.PReLU()
    y, _ = _run(layer, x, [alpha])
    np.testing.assert_allclose(y, np.where(x > 0, x, alpha * x), rtol=1e-5)
    layer = L.PReLU(shared_axes=[1, 2])
    y, _ = _run(layer, X4, [np.full((1, 1, 3), 0.25, np.float32)])
    np.testing.assert_allclose(y, np.where(X4 > 0, X4, 0.25 * X4), rtol=1e-6)
    y, _ = _run(L.ThresholdedReLU(1.0), x)
    np.testing.assert_array_equal(y, np.where(x > 1, x, 0))


def test_conv_layers_against_numpy():
    L = keras.layers
    k = R.standard_normal((3, 2, 3, 2)).astype(np.float32)
    b = np.float32([0.5, -1])
    # DepthwiseConv2D: channel c with its own multiplier filters (output c * m + j)
    layer = L.DepthwiseConv2D((3, 2), depth_multiplier=2)
    y, s = _run(layer, X4, [k, np.arange(6, dtype=np.float32)])
    want = np.concatenate([_conv_np(X4[..., c:c + 1], k[:, :, c:c + 1, :])
                           for c in range(3)], -1) + np.arange(6)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    assert s == (None, 3, 5, 6)
    # SeparableConv2D: depthwise then pointwise
    pw = R.standard_normal((1, 1, 6, 2)).astype(np.float32)
    y, s = _run(L.SeparableConv2D(2, (3, 2), depth_multiplier=2), X4, [k, pw, b])
    np.testing.assert_allclose(y, np.tensordot(want - np.arange(6), pw[0, 0], 1) + b,
                               rtol=1e-4, atol=1e-4)
    # Conv2DTranspose: the adjoint of a stride-2 conv: out[2i + a, 2j + c] += x[i, j] k[a, c]
    kt = R.standard_normal((2, 2, 2, 3)).astype(np.float32)
    y, s = _run(L.Conv2DTranspose(2, 2, strides=2), X4, [kt, b])
    want = np.zeros((2, 10, 12, 2))
    for a in range(2):
        for c in range(2):
            want[:, a::2, c::2] += np.tensordot(X4, kt[a, c], [[3], [1]])
    np.testing.assert_allclose(y, want + b, rtol=1e-4, atol=1e-4)
    assert s == (None, 10, 12, 2)
    # Conv3D and 3-D pooling
    x5 = R.standard_normal((1, 4, 4, 4, 2)).astype(np.float32)
    k3 = R.standard_normal((2, 2, 2, 2, 3)).astype(np.float32)
    y, s = _run(L.Conv3D(3, 2, use_bias=False), x5, [k3])
    want = np.zeros((1, 3, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            for m in range(3):
                want[:, i, j, m] = np.tensordot(x5[:, i:i + 2, j:j + 2, m:m + 2], k3, 4)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    y, s = _run(L.MaxPooling3D(2), x5)
    np.testing.assert_allclose(y, x5.reshape(1, 2, 2, 2, 2, 2, 2, 2).max((2, 4, 6)))
    assert s == (None, 2, 2, 2, 2)
    y, _ = _run(L.AveragePooling3D(2), x5)
    np.testing.assert_allclose(y, x5.reshape(1, 2, 2, 2, 2, 2, 2, 2).mean((2, 4, 6)),
                               rtol=1e-5)


def test_noise_dropout_masking_layernorm():
    L = keras.layers
    x = np.ones((64, 8, 16), np.float32)
    y, _ = _run(L.GaussianNoise(0.5), x)
    np.testing.assert_array_equal(y, x)                     # not training: identity
    y, _ = _run(L.GaussianNoise(0.5), x, training=True)
    assert abs(y.std() - 0.5) < 0.03 and abs(y.mean() - 1) < 0.03
    y, _ = _run(L.GaussianDropout(0.2), x, training=True)
    assert abs(y.std() - np.sqrt(0.2 / 0.8)) < 0.03
    y, _ = _run(L.SpatialDropout1D(0.5), x, training=True)
    # whole channels dropped: constant along time, 0 or 2
    assert set(np.unique(y)) <= {0.0, 2.0} and (y == y[:, :1, :]).all()
    assert 0.4 < (y == 0).mean() < 0.6
    y, _ = _run(L.SpatialDropout2D(0.5), X4 * 0 + 1, training=True)
    assert (y == y[:, :1, :1, :]).all()
    xm = R.standard_normal((3, 4, 2)).astype(np.float32)
    xm[0, 1] = 0
    xm[2, 3] = 0
    layer = L.Masking(0.0)
    inp = L.Input(shape=(4, 2))
    out = layer(inp)
    y, m = K.get_session().run([out, out._keras_mask], {inp: xm})
    np.testing.assert_array_equal(m, np.abs(xm).sum(-1) != 0)
    np.testing.assert_array_equal(y, xm)
    g = R.standard_normal(6).astype(np.float32)
    bta = R.standard_normal(6).astype(np.float32)
    x2 = R.standard_normal((4, 6)).astype(np.float32)
    y, s = _run(L.LayerNormalization(), x2, [g, bta])
    mu, var = x2.mean(-1, keepdims=True), x2.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x2 - mu) / np.sqrt(var + 1e-3) * g + bta, rtol=1e-4,
                               atol=1e-5)


def test_cudnn_layers_against_numpy():
    from .test_keras_rnn import np_rnn, sigmoid
    x = R.standard_normal((2, 4, 3)).astype(np.float32)
    layer = keras.layers.CuDNNLSTM(5, return_sequences=True)
    inp = keras.layers.Input(shape=(4, 3))
    out = layer(inp)
    assert [tuple(w.shape.as_list()) for w in layer.weights] == [(3, 20), (5, 20), (40,)]
    b0 = K.get_value(layer.weights[2])
    np.testing.assert_array_equal(b0[25:30], 1)      # unit_forget_bias: recurrent half
    assert (np.delete(b0, range(25, 30)) == 0).all()
    ws = [R.uniform(-0.5, 0.5, w.shape.as_list()).astype(np.float32) for w in layer.weights]
    layer.set_weights(ws)
    y = K.get_session().run(out, {inp: x})
    want, _, _ = np_rnn("LSTM", x, [ws[0], ws[1], ws[2][:20] + ws[2][20:]], 5, ra=sigmoid)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    layer = keras.layers.CuDNNGRU(5)
    out = layer(inp)
    assert [tuple(w.shape.as_list()) for w in layer.weights] == [(3, 15), (5, 15), (30,)]
    ws = [R.uniform(-0.5, 0.5, w.shape.as_list()).astype(np.float32) for w in layer.weights]
    layer.set_weights(ws)
    y = K.get_session().run(out, {inp: x})
    _, want, _ = np_rnn("GRU", x, [ws[0], ws[1], ws[2].reshape(2, 15)], 5, reset_after=True,
                        ra=sigmoid)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(InvalidArgumentError, match="activation"):
        keras.layers.CuDNNLSTM(3, activation="relu")


# ---- training: regularizers, constraints, metrics --------------------------------------------
XS = R.standard_normal((40, 5)).astype(np.float32)
YS = (XS[:, 0] + XS[:, 1] > 0).astype(np.int64)


def test_regularizer_losses_enter_the_loss():
    w = R.standard_normal((5, 3)).astype(np.float32)
    b = np.float32([0.1, -0.2, 0.3])
    m = keras.Sequential([keras.layers.Dense(
        3, activation="softmax", input_dim=5, kernel_regularizer=keras.regularizers.l2(0.01),
        bias_regularizer="l1", activity_regularizer=keras.regularizers.l1_l2(0.1, 0.2))])
    m.compile("sgd", "sparse_categorical_crossentropy")
    m.set_weights([w, b])
    z = XS @ w + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    ce = -np.log(np.clip(p[np.arange(40), YS], 1e-7, 1)).mean()
    act = (0.1 * np.abs(p).sum() + 0.2 * (p ** 2).sum()) / 40   # divided by the batch
    want = ce + 0.01 * (w ** 2).sum() + 0.01 * np.abs(b).sum() + act
    np.testing.assert_allclose(m.evaluate(XS, YS, batch_size=40, verbose=0), want,
                               rtol=1e-5)
    assert len(m.layers[0].losses) == 3
    with pytest.raises(InvalidArgumentError, match="Unknown regularizer"):
        keras.regularizers.get("l3")


def test_constraints_apply_after_each_update():
    m = keras.Sequential([
        keras.layers.Dense(4, input_dim=5, kernel_constraint=keras.constraints.max_norm(0.5),
                           bias_constraint=keras.constraints.non_neg()),
        keras.layers.Dense(2, activation="softmax",
                           kernel_constraint=keras.constraints.unit_norm())])
    m.compile(keras.optimizers.SGD(lr=1.0), "sparse_categorical_crossentropy")
    m.set_weights([w * 10 - 5 for w in m.get_weights()])
    m.train_on_batch(XS, YS)
    k1, b1, k2, _ = m.get_weights()
    assert np.linalg.norm(k1, axis=0).max() <= 0.5 + 1e-5
    assert (b1 >= 0).all()
    np.testing.assert_allclose(np.linalg.norm(k2, axis=0), 1, rtol=1e-5)
    w = R.standard_normal((3, 4)).astype(np.float32)
    mm = keras.constraints.min_max_norm(1.0, 2.0, rate=0.5)(tf.constant(w))
    n = np.sqrt((w ** 2).sum(0, keepdims=True))
    want = w * (0.5 * np.clip(n, 1, 2) + 0.5 * n) / (1e-7 + n)
    np.testing.assert_allclose(K.get_session().run(mm), want, rtol=1e-5)


def test_metrics_by_name_and_function():
    y1 = keras.utils.to_categorical(YS % 3, 3)
    m = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_dim=5)])
    m.compile("adam", "categorical_crossentropy",
              metrics=["accuracy", "mae", "mse", keras.metrics.categorical_accuracy,
                       keras.metrics.top_k_categorical_accuracy, "mape"])
    assert m.metrics_names == ["loss", "acc", "mean_absolute_error", "mean_squared_error",
                               "categorical_accuracy", "top_k_categorical_accuracy",
                               "mean_absolute_percentage_error"]
    h = m.fit(XS, y1, epochs=1, batch_size=40, verbose=0, validation_split=0.25)
    assert "val_mean_squared_error" in h.history and "val_acc" in h.history
    p = m.predict(XS)
    vals = m.evaluate(XS, y1, batch_size=40, verbose=0)
    acc = (p.argmax(1) == y1.argmax(1)).mean()
    np.testing.assert_allclose(vals[1:6], [acc, np.abs(p - y1).mean(), ((p - y1) ** 2).mean(),
                                           acc, 1.0], rtol=1e-5)
    np.testing.assert_allclose(vals[6], 100 * (np.abs(y1 - p) / np.clip(np.abs(y1), 1e-7,
                                                                         None)).mean(),
                               rtol=1e-4)
    sess = K.get_session()
    t, pr = tf.constant([[1.0], [0.0]]), tf.constant([[0.7], [0.6]])
    np.testing.assert_array_equal(sess.run(keras.metrics.binary_accuracy(t, pr)), [1, 0])
    st, sp = tf.constant([[2], [0]]), tf.constant([[0.1, 0.2, 0.7], [0.2, 0.5, 0.3]])
    np.testing.assert_array_equal(sess.run(keras.metrics.sparse_categorical_accuracy(st, sp)),
                                  [1, 0])
    with pytest.raises(InvalidArgumentError, match="Unknown metric"):
        keras.metrics.get("f1_of_nothing")


# ---- custom layers and subclassed models -----------------------------------------------------
class Scale(keras.layers.Layer):
    """y = x . kernel * scale (a custom layer as TF 1.x tutorials write them)."""

    def __init__(self, units, **kwargs):
        self.units = units
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", shape=(int(input_shape[-1]), self.units),
                                      initializer="uniform",
                                      regularizer=keras.regularizers.l2(0.5))
        self.scale = self.add_weight("scale", shape=(), initializer=keras.initializers.Ones(),
                                     trainable=False)
        super().build(input_shape)

    def call(self, inputs):
        return K.dot(inputs, self.kernel) * self.scale

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.units)

    def get_config(self):
        return dict(super().get_config(), units=self.units)


class TwoLayer(keras.Model):
    def __init__(self):
        super().__init__(name="two_layer")
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(2, activation="softmax")

    def call(self, inputs):
        return self.out(self.hidden(inputs))


def test_custom_layer_and_subclassed_model(tmp_path):
    layer = Scale(3)
    m = keras.Sequential([layer, keras.layers.Activation("softmax")])
    m.compile(keras.optimizers.SGD(lr=0.1), "sparse_categorical_crossentropy")
    m.train_on_batch(XS, YS)          # built from the data
    assert [w.op.name for w in layer.trainable_weights] == ["scale/kernel"]
    assert len(layer.weights) == 2 and len(layer.losses) == 1
    k, s = layer.get_weights()
    np.testing.assert_allclose(m.predict(XS[:3], batch_size=3),
                               np.exp(XS[:3] @ k) / np.exp(XS[:3] @ k).sum(1, keepdims=True),
                               rtol=1e-5)
    assert s == 1 and layer.compute_output_shape((None, 5)) == (None, 3)
    assert layer.get_config()["units"] == 3
    loss = m.evaluate(XS, YS, batch_size=40, verbose=0)
    p = m.predict(XS)
    ce = -np.log(p[np.arange(40), YS]).mean()
    np.testing.assert_allclose(loss, ce + 0.5 * (k ** 2).sum(), rtol=1e-5)
    # saved and loaded back with custom_objects
    path = str(tmp_path / "scale.h5")
    m.save(path)
    with pytest.raises(InvalidArgumentError, match="Unknown layer: Scale"):
        keras.models.load_model(path)
    m2 = keras.models.load_model(path, custom_objects={"Scale": Scale})
    np.testing.assert_allclose(m2.predict(XS), p, rtol=1e-6)

    tf.set_random_seed(3)
    sub = TwoLayer()
    sub.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    h = sub.fit(XS, YS, epochs=30, batch_size=10, verbose=0)
    assert h.history["loss"][-1] < 0.7 * h.history["loss"][0]
    assert len(sub.weights) == 4 and sub.predict(XS).shape == (40, 2)
    y = sub(tf.constant(XS[:2]))                       # called on a tensor
    np.testing.assert_allclose(K.get_session().run(y), sub.predict(XS[:2]), rtol=1e-6)


# ---- saving ----------------------------------------------------------------------------------
def _conv_model(rate=0.1):
    L = keras.layers
    return keras.Sequential([
        L.Conv2D(4, 3, padding="same", activation="relu", input_shape=(6, 6, 1),
                 kernel_initializer=keras.initializers.he_normal(seed=1)),
        L.BatchNormalization(), L.MaxPooling2D(), L.Flatten(),
        L.Dropout(rate), L.Dense(8, kernel_regularizer=keras.regularizers.l2(1e-3)),
        L.PReLU(), L.Dense(3, activation="softmax")])


def test_save_load_roundtrip_with_optimizer_state(tmp_path):
    import h5py
    x = R.standard_normal((30, 6, 6, 1)).astype(np.float32)
    y = R.integers(0, 3, 30)
    m = _conv_model(rate=0.0)        # (no random masks: the same step in both models)
    m.compile(keras.optimizers.Adam(lr=0.01), "sparse_categorical_crossentropy",
              metrics=["accuracy"])
    m.fit(x, y, epochs=2, batch_size=10, verbose=0)
    path = str(tmp_path / "model.h5")
    m.save(path)
    with h5py.File(path, "r") as f:      # Keras' layout
        cfg = json.loads(f.attrs["model_config"])
        assert cfg["class_name"] == "Sequential"
        assert [c["class_name"] for c in cfg["config"]["layers"]][:2] == \
            ["Conv2D", "BatchNormalization"]
        names = [n.decode() for n in f["model_weights"].attrs["layer_names"]]
        assert names[0] == m.layers[0].name
        conv = f["model_weights"][names[0]]
        assert [w.decode() for w in conv.attrs["weight_names"]] == \
            [f"{names[0]}/kernel:0", f"{names[0]}/bias:0"]
        np.testing.assert_array_equal(conv[f"{names[0]}/kernel:0"], m.get_weights()[0])
        tc = json.loads(f.attrs["training_config"])
        assert tc["optimizer_config"]["class_name"] == "Adam" and tc["metrics"] == ["accuracy"]
        assert len(f["optimizer_weights"].attrs["weight_names"]) > 2
    m2 = keras.models.load_model(path)
    p0 = m.predict(x)
    np.testing.assert_allclose(m2.predict(x), p0, rtol=1e-6)
    np.testing.assert_allclose(m2.evaluate(x, y, verbose=0), m.evaluate(x, y, verbose=0),
                               rtol=1e-6)
    # the optimizer state came along: one more step moves both models alike
    opt1 = [K.get_value(v) for v in m.optimizer.variables()]
    opt2 = [K.get_value(v) for v in m2.optimizer.variables()]
    for a, b in zip(opt1, opt2):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    m.train_on_batch(x[:10], y[:10])
    m2.train_on_batch(x[:10], y[:10])
    for a, b in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    m3 = keras.models.load_model(path, compile=False)
    np.testing.assert_allclose(m3.predict(x), p0, rtol=1e-6)
    with pytest.raises(InvalidArgumentError, match="compile"):
        m3.evaluate(x, y, verbose=0)


def test_to_json_model_from_json_and_config():
    m = _conv_model()
    js = m.to_json()
    cfg = json.loads(js)
    dense = cfg["config"]["layers"][5]["config"]
    assert dense["units"] == 8 and dense["kernel_regularizer"] == {
        "class_name": "L1L2", "config": {"l1": 0.0, "l2": 0.001}}
    assert cfg["config"]["layers"][0]["config"]["kernel_initializer"] == {
        "class_name": "HeNormal", "config": {"seed": 1}}
    m2 = keras.models.model_from_json(js)
    assert [type(a) for a in m2.layers] == [type(a) for a in m.layers]
    assert [w.shape.as_list() for w in m2.weights] == [w.shape.as_list() for w in m.weights]
    m2.set_weights(m.get_weights())
    x = R.standard_normal((4, 6, 6, 1)).astype(np.float32)
    np.testing.assert_allclose(m2.predict(x), m.predict(x), rtol=1e-6)
    m3 = keras.Sequential.from_config(m.get_config())
    assert m3.count_params() == m.count_params()
    m4 = keras.models.clone_model(m)
    assert m4.count_params() == m.count_params()
    fn = keras.Model(m.input, m.output)
    with pytest.raises(UnimplementedError, match="Sequential"):
        fn.to_json()


# ---- data sources ----------------------------------------------------------------------------
class Batches(keras.utils.Sequence):
    def __init__(self):
        self.epochs_ended = 0

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return XS[i * 10:(i + 1) * 10], YS[i * 10:(i + 1) * 10]

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_fit_dataset_generators_and_sequences():
    def model():
        m = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_dim=5)])
        m.compile(keras.optimizers.SGD(lr=0.5), "sparse_categorical_crossentropy",
                  metrics=["acc"])
        m.set_weights([np.zeros((5, 2), np.float32), np.zeros(2, np.float32)])
        return m
    # the same 4 batches in the same order: the same weights whatever the source
    ref = model()
    ref.fit(XS, YS, batch_size=10, epochs=2, shuffle=False, verbose=0)
    ds = tf.data.Dataset.from_tensor_slices((XS, YS)).batch(10)
    a = model()
    h = a.fit(ds, epochs=2, steps_per_epoch=4, verbose=0)
    assert len(h.history["loss"]) == 2
    b = model()
    b.fit(ds, epochs=2, verbose=0)                     # until the data set ends
    seq = Batches()
    c = model()
    c.fit_generator(seq, epochs=2, verbose=0)
    assert seq.epochs_ended == 2

    def gen():
        while True:
            for i in range(4):
                yield XS[i * 10:(i + 1) * 10], YS[i * 10:(i + 1) * 10]
    d = model()
    d.fit_generator(gen(), steps_per_epoch=4, epochs=2, verbose=0,
                    validation_data=gen(), validation_steps=4)
    for m in (a, b, c, d):
        for w, r in zip(m.get_weights(), ref.get_weights()):
            np.testing.assert_allclose(w, r, rtol=1e-5, atol=1e-6)
    want = ref.evaluate(XS, YS, batch_size=10, verbose=0)
    np.testing.assert_allclose(d.evaluate_generator(gen(), steps=4), want, rtol=1e-5)
    np.testing.assert_allclose(d.evaluate(ds), want, rtol=1e-5)
    np.testing.assert_allclose(d.predict_generator(Batches()), ref.predict(XS), rtol=1e-5)
    np.testing.assert_allclose(d.predict_on_batch(XS[:3]), ref.predict(XS[:3]), rtol=1e-5)
    np.testing.assert_allclose(d.test_on_batch(XS, YS), ref.evaluate(XS, YS, batch_size=40,
                                                                     verbose=0), rtol=1e-5)
    with pytest.raises(InvalidArgumentError, match="steps"):
        d.fit_generator(gen(), epochs=1, verbose=0)


# ---- backend ---------------------------------------------------------------------------------
def test_backend_functions():
    s = K.get_session()
    a = R.standard_normal((2, 3)).astype(np.float32)
    b = R.standard_normal((3, 4)).astype(np.float32)
    c = R.standard_normal((4, 3, 5)).astype(np.float32)
    x = K.placeholder(shape=(None, 3))
    assert K.int_shape(x) == (None, 3) and K.ndim(x) == 2 and K.floatx() == "float32"
    checks = [
        (K.mean(x, axis=1), a.mean(1)), (K.sum(x), a.sum()), (K.square(x), a ** 2),
        (K.sqrt(x), np.sqrt(np.maximum(a, 0))), (K.exp(x), np.exp(a)),
        (K.abs(x), np.abs(a)), (K.clip(x, -0.5, 0.5), np.clip(a, -0.5, 0.5)),
        (K.dot(x, K.constant(b)), a @ b), (K.dot(x, K.constant(c)), np.dot(a, c)),
        (K.transpose(x), a.T), (K.expand_dims(x, 1), a[:, None]),
        (K.squeeze(K.expand_dims(x, 1), 1), a),
        (K.concatenate([x, x]), np.concatenate([a, a], -1)),
        (K.reshape(x, (3, 2)), a.reshape(3, 2)),
        (K.maximum(x, 0.0), np.maximum(a, 0)), (K.minimum(x, 0.0), np.minimum(a, 0)),
        (K.sigmoid(x), 1 / (1 + np.exp(-a))), (K.tanh(x), np.tanh(a)),
        (K.relu(x, alpha=0.1), np.where(a > 0, a, 0.1 * a)),
        (K.softmax(x), np.exp(a) / np.exp(a).sum(1, keepdims=True)),
        (K.argmax(x), a.argmax(-1)), (K.equal(x, x), np.ones_like(a, bool)),
        (K.cast(K.greater(x, 0.0), "float32"), (a > 0).astype(np.float32)),
        (K.l2_normalize(x, axis=1), a / np.linalg.norm(a, axis=1, keepdims=True)),
        (K.switch(K.greater(x, 0.0), x, -x), np.abs(a)),
        (K.stop_gradient(x), a), (K.shape(x), [2, 3]),
        (K.batch_dot(x, x, axes=1), (a * a).sum(1, keepdims=True)),
        (K.batch_dot(K.constant(c), K.constant(np.swapaxes(c, 1, 2))),
         c @ np.swapaxes(c, 1, 2)),
    ]
    outs = s.run([t for t, _ in checks], {x: a})
    for (t, want), got in zip(checks, outs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=t.name)
    p = np.float32([[0.2, 0.8], [0.6, 0.4]])
    t1 = np.float32([[0, 1], [1, 0]])
    np.testing.assert_allclose(s.run(K.categorical_crossentropy(K.constant(t1),
                                                                K.constant(p))),
                               -np.log([0.8, 0.6]), rtol=1e-5)
    np.testing.assert_allclose(s.run(K.sparse_categorical_crossentropy(
        K.constant([1, 0], "int64"), K.constant(p))), -np.log([0.8, 0.6]), rtol=1e-5)
    np.testing.assert_allclose(s.run(K.binary_crossentropy(K.constant(t1), K.constant(p))),
                               -(t1 * np.log(p) + (1 - t1) * np.log(1 - p)), rtol=1e-5)
    v = K.variable(a, name="kv")
    assert K.get_value(v).tolist() == a.tolist()
    K.set_value(v, a * 2)
    np.testing.assert_array_equal(K.batch_get_value([v])[0], a * 2)
    z = K.zeros((2, 2))
    np.testing.assert_array_equal(K.get_value(z), 0)
    np.testing.assert_array_equal(K.get_value(K.ones((3,))), 1)
    g = K.gradients(K.sum(K.square(v)), [v])[0]
    np.testing.assert_allclose(s.run(g), 4 * a, rtol=1e-6)
    ph = K.learning_phase()
    f = K.function([x, ph], [K.in_train_phase(x * 2.0, x), K.sum(x)])
    r_train, total = f([a, True])
    np.testing.assert_allclose(r_train, 2 * a)
    np.testing.assert_allclose(f([a, False])[0], a)
    np.testing.assert_allclose(total, a.sum(), rtol=1e-6)
    f2 = K.function([x], [K.dropout(x, 0.5)])
    d = f2([np.ones((100, 3), np.float32)])[0]
    assert set(np.unique(d)) <= {0.0, 2.0}
    u = K.random_uniform((1000,), 1.0, 2.0)
    n = K.random_normal((1000,), 3.0, 0.1)
    uu, nn = s.run([u, n])
    assert 1 <= uu.min() and uu.max() < 2 and abs(nn.mean() - 3) < 0.05
    assert K.image_data_format() == "channels_last"
    K.set_image_data_format("channels_first")
    assert K.image_data_format() == "channels_first"
    K.set_image_data_format("channels_last")
    assert K.epsilon() == 1e-7


# ---- a classic script ------------------------------------------------------------------------
@pytest.mark.parametrize("xla", [False, True])
def test_mnist_mlp_script(xla, tmp_path):
    tf.set_random_seed(0)
    if xla:
        K.set_session(tf.Session(config=jit_config()))
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data(
        path=str(tmp_path / "none.npz"))
    x_train = x_train[:3000].reshape(-1, 784).astype("float32") / 255
    x_test = x_test[:300].reshape(-1, 784).astype("float32") / 255
    y_train = keras.utils.to_categorical(y_train[:3000], 10)
    y_test = keras.utils.to_categorical(y_test[:300], 10)
    model = keras.models.Sequential()
    model.add(keras.layers.Dense(64, activation="relu", input_shape=(784,)))
    model.add(keras.layers.Dropout(0.2))
    model.add(keras.layers.Dense(10, activation="softmax"))
    model.compile(loss="categorical_crossentropy", optimizer=keras.optimizers.RMSprop(),
                  metrics=["accuracy"])
    lines = []
    model.summary(print_fn=lines.append)
    assert "Total params: 50,890" in lines and "Trainable params: 50,890" in lines
    h = model.fit(x_train, y_train, batch_size=64, epochs=5, verbose=0,
                  validation_split=0.1)
    assert sorted(h.history) == ["acc", "loss", "val_acc", "val_loss"]
    score = model.evaluate(x_test, y_test, verbose=0)
    assert score[1] > 0.8, score
    path = str(tmp_path / "mlp.h5")
    model.save(path)
    loaded = keras.models.load_model(path)
    classes = loaded.predict_classes(x_test)
    np.testing.assert_array_equal(classes, model.predict(x_test).argmax(1))
    assert (classes == y_test.argmax(1)).mean() == pytest.approx(score[1], abs=1e-6)
    np.testing.assert_allclose(loaded.predict_proba(x_test[:5]).sum(1), 1, rtol=1e-5)


def test_model_checkpoint_saves_whole_models(tmp_path):
    m = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_dim=5)])
    m.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    path = str(tmp_path / "ck-{epoch:02d}.h5")
    m.fit(XS, YS, epochs=2, verbose=0,
          callbacks=[keras.callbacks.ModelCheckpoint(path)])
    assert sorted(os.listdir(tmp_path)) == ["ck-01.h5", "ck-02.h5"]
    back = keras.models.load_model(str(tmp_path / "ck-02.h5"))
    np.testing.assert_allclose(back.predict(XS), m.predict(XS), rtol=1e-6)
