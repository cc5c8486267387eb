"""The rest of tf.keras that TF 1.x-era scripts use: keras.utils and keras.preprocessing
against NumPy / hand-computed references, the new layers against NumPy with set
weights, regularizers / constraints / metrics entering training, custom layers and
subclassed models, save / load_model and to_json round trips, fit on Datasets and
generators, keras.backend functions, and a classic MNIST-style script with and without
XLA."""

import hashlib

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError


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
