"""tf.keras recurrent layers in graph mode: SimpleRNN, LSTM and GRU against a NumPy
transcription of Keras' equations with the layers' own weights (Keras' weight layout and
gate order), Bidirectional, TimeDistributed, masks from Embedding(mask_zero=True), an
Embedding + LSTM classifier trained with and without XLA (one compiled cluster), the
callbacks, and errors."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .conftest import jit_config
from .helpers import single_cluster

R = np.random.default_rng(3)
B, T, D, U = 3, 5, 4, 6
XS = R.standard_normal((B, T, D)).astype(np.float32)


@pytest.fixture(autouse=True)
def _fresh():
    tf.keras.backend.clear_session()
    yield
    tf.keras.backend.clear_session()


def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_rnn(kind, x, weights, units, go_backwards=False, reset_after=False, act=np.tanh,
           ra=hard_sigmoid, mask=None):
    """Keras' recurrences written out: (the output sequence in processing order, h, c)."""
    k, rk = weights[0], weights[1]
    b = weights[2] if len(weights) > 2 else np.zeros(k.shape[1], np.float32)
    u = units
    h = np.zeros((x.shape[0], u), np.float64)
    c = np.zeros_like(h)
    outs = []
    steps = range(x.shape[1])
    for t in (reversed(steps) if go_backwards else steps):
        xt = x[:, t].astype(np.float64)
        cn = c
        if kind == "SimpleRNN":
            hn = act(xt @ k + b + h @ rk)
        elif kind == "LSTM":
            z = xt @ k + h @ rk + b
            i, f, cc, o = (z[:, j * u:(j + 1) * u] for j in range(4))
            cn = ra(f) * c + ra(i) * act(cc)
            hn = ra(o) * act(cn)
        else:
            if reset_after:
                xz = xt @ k + b[0]
                inner = h @ rk + b[1]
                z = ra(xz[:, :u] + inner[:, :u])
                r = ra(xz[:, u:2 * u] + inner[:, u:2 * u])
                hh = act(xz[:, 2 * u:] + r * inner[:, 2 * u:])
            else:
                xz = xt @ k + b
                z = ra(xz[:, :u] + h @ rk[:, :u])
                r = ra(xz[:, u:2 * u] + h @ rk[:, u:2 * u])
                hh = act(xz[:, 2 * u:] + (r * h) @ rk[:, 2 * u:])
            hn = z * h + (1 - z) * hh
        if mask is not None:
            m = mask[:, t][:, None]
            hn, cn = np.where(m, hn, h), np.where(m, cn, c)
        h, c = hn, cn
        outs.append(h)
    return np.stack(outs, 1), h, c


def _random_weights(layer):
    return [R.uniform(-0.6, 0.6, w.shape.as_list()).astype(np.float32) for w in layer.weights]


def _run(out, inp, x):
    return tf.keras.backend.get_session().run(out, {inp: x})


CASES = [(False, False, False), (True, False, False), (False, True, False),
         (True, True, True), (False, False, True)]


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("seqs,state,backwards", CASES)
def test_matches_keras_equations(kind, seqs, state, backwards):
    inp = tf.keras.layers.Input(shape=(T, D))
    layer = getattr(tf.keras.layers, kind)(U, return_sequences=seqs, return_state=state,
                                           go_backwards=backwards)
    out = layer(inp)
    gates = {"SimpleRNN": 1, "LSTM": 4, "GRU": 3}[kind]
    assert [w.shape.as_list() for w in layer.weights] == [[D, gates * U], [U, gates * U],
                                                          [gates * U]]
    assert [w.op.name for w in layer.weights] == [
        f"{layer.name}/kernel", f"{layer.name}/recurrent_kernel", f"{layer.name}/bias"]
    ws = _random_weights(layer)
    layer.set_weights(ws)
    for a, b in zip(layer.get_weights(), ws):
        np.testing.assert_array_equal(a, b)
    got = _run(out, inp, XS)
    seq, h, c = np_rnn(kind, XS, ws, U, go_backwards=backwards)
    want = seq if seqs else h
    if state:
        assert len(got) == (3 if kind == "LSTM" else 2)
        np.testing.assert_allclose(got[1], h, rtol=1e-4, atol=1e-5)
        if kind == "LSTM":
            np.testing.assert_allclose(got[2], c, rtol=1e-4, atol=1e-5)
        got = got[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gru_reset_after_sigmoid_and_no_bias():
    inp = tf.keras.layers.Input(shape=(T, D))
    gru = tf.keras.layers.GRU(U, reset_after=True, recurrent_activation="sigmoid",
                              return_sequences=True)
    plain = tf.keras.layers.SimpleRNN(U, use_bias=False, activation="relu")
    o1, o2 = gru(inp), plain(inp)
    assert gru.weights[2].shape.as_list() == [2, 3 * U]
    assert len(plain.weights) == 2
    w1, w2 = _random_weights(gru), _random_weights(plain)
    gru.set_weights(w1)
    plain.set_weights(w2)
    g1, g2 = _run([o1, o2], inp, XS)
    np.testing.assert_allclose(g1, np_rnn("GRU", XS, w1, U, reset_after=True, ra=sigmoid)[0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g2, np_rnn("SimpleRNN", XS, w2, U,
                                          act=lambda v: np.maximum(v, 0))[1],
                               rtol=1e-4, atol=1e-5)


def test_initializers_and_unit_forget_bias():
    tf.set_random_seed(4)
    inp = tf.keras.layers.Input(shape=(T, D))
    lstm = tf.keras.layers.LSTM(U)
    lstm(inp)
    k, rk, b = lstm.get_weights()
    np.testing.assert_array_equal(b, np.r_[np.zeros(U), np.ones(U), np.zeros(2 * U)])
    # recurrent_kernel [U, 4U]: orthogonal rows; kernel glorot_uniform within its limit
    np.testing.assert_allclose(rk @ rk.T, np.eye(U), atol=1e-5)
    assert np.abs(k).max() <= np.sqrt(6 / (D + 4 * U)) and np.abs(k).std() > 0.05
    emb = tf.keras.layers.Embedding(50, 3)
    emb(tf.keras.layers.Input(shape=(4,)))
    (e,) = emb.get_weights()
    assert e.shape == (50, 3) and np.abs(e).max() <= 0.05 and e.std() > 0.01


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(mode):
    inp = tf.keras.layers.Input(shape=(T, D))
    bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(U, return_sequences=True),
                                       merge_mode=mode)
    out = bi(inp)
    assert [w.op.name for w in bi.weights][:3] == [
        "bidirectional/forward_lstm/kernel", "bidirectional/forward_lstm/recurrent_kernel",
        "bidirectional/forward_lstm/bias"]
    assert len(bi.weights) == 6 and bi.weights[3].op.name.startswith(
        "bidirectional/backward_lstm/")
    ws = _random_weights(bi)
    bi.set_weights(ws)
    got = _run(out, inp, XS)
    fw = np_rnn("LSTM", XS, ws[:3], U)[0]
    bw = np_rnn("LSTM", XS, ws[3:], U, go_backwards=True)[0][:, ::-1]
    want = {"concat": lambda: np.concatenate([fw, bw], -1), "sum": lambda: fw + bw,
            "mul": lambda: fw * bw, "ave": lambda: (fw + bw) / 2,
            None: lambda: [fw, bw]}[mode]()
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_bidirectional_last_output_and_states():
    inp = tf.keras.layers.Input(shape=(T, D))
    bi = tf.keras.layers.Bidirectional(tf.keras.layers.GRU(U, return_state=True))
    out, h_fw, h_bw = bi(inp)
    ws = _random_weights(bi)
    bi.set_weights(ws)
    got = _run([out, h_fw, h_bw], inp, XS)
    fw = np_rnn("GRU", XS, ws[:3], U)[1]
    bw = np_rnn("GRU", XS, ws[3:], U, go_backwards=True)[1]
    np.testing.assert_allclose(got[0], np.concatenate([fw, bw], -1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], fw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], bw, rtol=1e-4, atol=1e-5)


def test_time_distributed_dense_and_stacked_rnns():
    m = tf.keras.Sequential([
        tf.keras.layers.SimpleRNN(U, return_sequences=True, input_shape=(T, D)),
        tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2, activation="softmax"))])
    rnn_w = _random_weights(m.layers[0])
    td = m.layers[1]
    assert [w.shape.as_list() for w in td.weights] == [[U, 2], [2]]
    dense_w = _random_weights(td)
    m.set_weights(rnn_w + dense_w)
    got = m.predict(XS)
    seq = np_rnn("SimpleRNN", XS, rnn_w, U)[0]
    logits = seq @ dense_w[0] + dense_w[1]
    want = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    assert got.shape == (B, T, 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_embedding_mask_zero_skips_padding():
    ids = np.array([[3, 1, 0, 0, 0], [2, 2, 4, 1, 3], [0, 0, 4, 2, 0]], np.int32)
    inp = tf.keras.layers.Input(shape=(T,), dtype="int32")
    emb = tf.keras.layers.Embedding(5, D, mask_zero=True)
    lstm = tf.keras.layers.LSTM(U, return_sequences=True)
    seq = lstm(emb(inp))
    pooled = tf.keras.layers.GlobalAveragePooling1D()(seq)
    gru = tf.keras.layers.GRU(U, go_backwards=True)
    last = gru(emb(inp))
    e = R.standard_normal((5, D)).astype(np.float32)
    emb.set_weights([e])
    lw = _random_weights(lstm)
    lstm.set_weights(lw)
    got_seq, got_pool = _run([seq, pooled], inp, ids)
    want, _, _ = np_rnn("LSTM", e[ids], lw, U, mask=ids != 0)
    np.testing.assert_allclose(got_seq, want, rtol=1e-4, atol=1e-5)
    m = (ids != 0)[:, :, None]
    np.testing.assert_allclose(got_pool, (want * m).sum(1) / m.sum(1), rtol=1e-4, atol=1e-5)
    gw = _random_weights(gru)
    gru.set_weights(gw)
    np.testing.assert_allclose(_run(last, inp, ids),
                               np_rnn("GRU", e[ids], gw, U, go_backwards=True,
                                      mask=ids != 0)[1], rtol=1e-4, atol=1e-5)
    with pytest.raises(InvalidArgumentError, match="does not support masking"):
        tf.keras.layers.Flatten()(emb(inp))


def _sentiment_data(n, rng):
    """Token sequences of filler words (5..19) with two or three words of their class:
    1, 2 (positive) or 3, 4 (negative), and some padding zeros in front."""
    x = rng.integers(5, 20, (n, 10))
    y = rng.integers(0, 2, n)
    for i in range(n):
        words = [1, 2] if y[i] else [3, 4]
        pos = rng.choice(np.arange(2, 10), rng.integers(2, 4), replace=False)
        x[i, pos] = rng.choice(words, len(pos))
        x[i, :rng.integers(0, 3)] = 0
    return x.astype(np.int32), y.astype(np.float32)


@pytest.mark.parametrize("xla,mask_zero", [(False, False), (True, False), (True, True)])
def test_embedding_lstm_sentiment(xla, mask_zero):
    tf.set_random_seed(5)
    rng = np.random.default_rng(5)
    x, y = _sentiment_data(320, rng)
    if xla:
        tf.keras.backend.set_session(tf.Session(config=jit_config()))
    m = tf.keras.Sequential([tf.keras.layers.Embedding(20, 8, input_length=10,
                                                       mask_zero=mask_zero),
                             tf.keras.layers.LSTM(8, dropout=0.1),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
    m.compile(tf.keras.optimizers.Adam(lr=0.02), "binary_crossentropy", metrics=["acc"])
    hist = m.fit(x[:256], y[:256], batch_size=32, epochs=6, verbose=0,
                 validation_data=(x[256:], y[256:]))
    assert sorted(hist.history) == ["acc", "loss", "val_acc", "val_loss"]
    assert hist.history["loss"][-1] < 0.5 * hist.history["loss"][0]
    loss, acc = m.evaluate(x[256:], y[256:], verbose=0)
    assert acc >= 0.9, (loss, acc)
    if xla:
        s = tf.keras.backend.get_session()
        with s.graph.as_default():
            summary = single_cluster(s, m._train_op, m._feed(x[:32], y[:32], True))
        assert "While" in summary and "WhileGrad" in summary and "ApplyAdam" in summary


def test_errors():
    inp = tf.keras.layers.Input(shape=(D,))
    with pytest.raises(InvalidArgumentError, match="expected ndim=3, found ndim=2"):
        tf.keras.layers.LSTM(2)(inp)
    with pytest.raises(InvalidArgumentError, match="Unknown activation"):
        tf.keras.layers.GRU(2, recurrent_activation="hard_sigmoidish")
    with pytest.raises(InvalidArgumentError, match="Unknown initializer"):
        tf.keras.layers.SimpleRNN(2, recurrent_initializer="orthogonalish")
    with pytest.raises(InvalidArgumentError, match="Invalid merge mode"):
        tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2), merge_mode="max")
    with pytest.raises(InvalidArgumentError, match="recurrent layer"):
        tf.keras.layers.Bidirectional(tf.keras.layers.Dense(2))
    with pytest.raises(UnimplementedError, match="stateful"):
        tf.keras.layers.LSTM(2, stateful=True)
    with pytest.raises(InvalidArgumentError, match="dropout must be in"):
        tf.keras.layers.LSTM(2, dropout=1.5)
    lstm = tf.keras.layers.LSTM(2)
    lstm(tf.keras.layers.Input(shape=(T, D)))
    with pytest.raises(InvalidArgumentError, match="expecting 3 weights"):
        lstm.set_weights([np.zeros((D, 8))])
    with pytest.raises(InvalidArgumentError, match="not compatible"):
        lstm.set_weights([np.zeros((D, 4)), np.zeros((2, 8)), np.zeros(8)])


# ---- callbacks -------------------------------------------------------------------------------
def _diverging(lr=0.05, optimizer=None):
    """Dense(1) learning y = x . 1 while the validation targets are -y: the validation loss
    is best after the first epoch and worse after every later one."""
    x = R.standard_normal((64, 3)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_dim=3, kernel_initializer="zeros")])
    m.compile(optimizer or tf.keras.optimizers.SGD(lr=lr), "mse")
    return m, x, y, (x[:16], -y[:16])


def test_history_validation_split_and_initial_epoch():
    m, x, y, _ = _diverging()
    seen = []
    cb = tf.keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: seen.append(("params", m.history is not None)),
        on_epoch_begin=lambda e, logs: seen.append(("begin", e)),
        on_batch_end=lambda b, logs: seen.append(("batch", b, logs["size"])))
    h = m.fit(x, y, batch_size=16, epochs=3, initial_epoch=1, validation_split=0.25,
              shuffle=False, verbose=0, callbacks=[cb])
    assert h is m.history and h.epoch == [1, 2]
    assert sorted(h.history) == ["loss", "val_loss"] and len(h.history["val_loss"]) == 2
    # 48 training samples (the last quarter validates): 3 batches of 16 per epoch
    assert seen[1:] == [("begin", 1), ("batch", 0, 16), ("batch", 1, 16), ("batch", 2, 16),
                        ("begin", 2), ("batch", 0, 16), ("batch", 1, 16), ("batch", 2, 16)]
    np.testing.assert_allclose(h.history["val_loss"][-1],
                               m.evaluate(x[48:], y[48:], verbose=0), rtol=1e-5)


def test_early_stopping_stops_and_restores_best_weights():
    m, x, y, val = _diverging()
    snaps = []
    keep = tf.keras.callbacks.LambdaCallback(
        on_epoch_end=lambda e, logs: snaps.append(m.get_weights()))
    stop = tf.keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    h = m.fit(x, y, epochs=20, validation_data=val, verbose=0, callbacks=[keep, stop])
    vl = h.history["val_loss"]
    assert len(vl) == 3 and vl[0] < vl[1] < vl[2], vl
    assert m.stop_training and stop.stopped_epoch == 2
    for a, b in zip(m.get_weights(), snaps[0]):
        np.testing.assert_array_equal(a, b)
    assert not np.allclose(m.get_weights()[0], snaps[2][0])
    # monitoring the (improving) training loss: no early stop
    m2, x, y, val = _diverging()
    h2 = m2.fit(x, y, epochs=4, validation_data=val, verbose=0,
                callbacks=[tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0)])
    assert len(h2.history["loss"]) == 4 and not m2.stop_training


def test_model_checkpoint_writes_formatted_files(tmp_path):
    m, x, y, val = _diverging()
    snaps = []
    every = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "w.{epoch:02d}-{val_loss:.2f}.npz"),
                                               save_weights_only=True)
    best = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "best.{epoch:02d}.npz"),
                                              save_best_only=True, save_weights_only=True)
    h = m.fit(x, y, epochs=3, validation_data=val, verbose=0, callbacks=[
        every, best, tf.keras.callbacks.LambdaCallback(
            on_epoch_end=lambda e, logs: snaps.append(m.get_weights()))])
    want = sorted(f"w.{e + 1:02d}-{v:.2f}.npz" for e, v in enumerate(h.history["val_loss"]))
    assert sorted(p.name for p in tmp_path.glob("w.*")) == want
    assert [p.name for p in tmp_path.glob("best.*")] == ["best.01.npz"]
    m.load_weights(str(tmp_path / "best.01.npz"))
    np.testing.assert_array_equal(m.get_weights()[0], snaps[0][0])
    m.load_weights(str(tmp_path / want[2]))
    np.testing.assert_array_equal(m.get_weights()[0], snaps[2][0])


@pytest.mark.parametrize("xla", [False, True])
def test_learning_rate_scheduler_changes_lr(xla):
    if xla:
        tf.keras.backend.set_session(tf.Session(config=jit_config()))
    m, x, y, _ = _diverging(lr=0.3)
    snaps = []
    sched = tf.keras.callbacks.LearningRateScheduler(lambda e, lr: 0.1 if e == 0 else lr * 0.0)
    h = m.fit(x, y, epochs=3, verbose=0, callbacks=[sched, tf.keras.callbacks.LambdaCallback(
        on_epoch_end=lambda e, logs: snaps.append(m.get_weights()[0]))])
    assert h.history["lr"] == pytest.approx([0.1, 0.0, 0.0])
    assert tf.keras.backend.get_value(m.optimizer.lr) == 0.0
    assert np.abs(snaps[0]).min() > 0.01          # moved with lr 0.1, then lr 0: frozen
    np.testing.assert_array_equal(snaps[1], snaps[0])
    np.testing.assert_array_equal(snaps[2], snaps[0])
    tf.keras.backend.set_value(m.optimizer.lr, 0.5)
    m.train_on_batch(x[:8], y[:8])
    assert not np.array_equal(m.get_weights()[0], snaps[0])


def test_reduce_lr_on_plateau_and_csv_logger(tmp_path):
    m, x, y, val = _diverging(optimizer=tf.keras.optimizers.Adam(lr=0.1))
    reduce = tf.keras.callbacks.ReduceLROnPlateau(factor=0.5, patience=1, min_lr=0.02)
    path = tmp_path / "log.csv"
    h = m.fit(x, y, epochs=5, validation_data=val, verbose=0,
              callbacks=[reduce, tf.keras.callbacks.CSVLogger(str(path))])
    assert h.history["lr"] == pytest.approx([0.1, 0.1, 0.05, 0.025, 0.02])
    assert tf.keras.backend.get_value(m.optimizer.lr) == pytest.approx(0.02)
    lines = path.read_text().splitlines()
    assert lines[0] == "epoch,loss,lr,val_loss" and len(lines) == 6
    row = lines[3].split(",")
    assert row[0] == "2" and float(row[1]) == pytest.approx(h.history["loss"][2])
    assert float(row[3]) == pytest.approx(h.history["val_loss"][2])


def test_terminate_on_nan_and_custom_callback():
    m, x, y, _ = _diverging()
    batches = []

    class Count(tf.keras.callbacks.Callback):
        def on_batch_end(self, batch, logs=None):
            batches.append((batch, self.params["epochs"], self.model is m))

    bad = y.copy()
    bad[:] = np.nan
    h = m.fit(x, bad, batch_size=16, epochs=3, shuffle=False, verbose=0,
              callbacks=[tf.keras.callbacks.TerminateOnNaN(), Count()])
    assert batches == [(0, 3, True)] and m.stop_training
    assert len(h.epoch) == 1 and np.isnan(h.history["loss"][0])


def test_callback_errors():
    with pytest.raises(InvalidArgumentError, match="factor >= 1.0"):
        tf.keras.callbacks.ReduceLROnPlateau(factor=2.0)
    m, x, y, _ = _diverging(optimizer=tf.train.GradientDescentOptimizer(0.1))
    with pytest.raises(InvalidArgumentError, match='must have a "lr" attribute'):
        m.fit(x, y, verbose=0, callbacks=[tf.keras.callbacks.LearningRateScheduler(
            lambda e: 0.1)])
    with pytest.raises(InvalidArgumentError, match="callbacks must be"):
        m.fit(x, y, verbose=0, callbacks=[print])


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_dropout_only_while_training(kind):
    inp = tf.keras.layers.Input(shape=(None, D))    # (the time length known only when fed)
    layer = getattr(tf.keras.layers, kind)(U, dropout=0.4, recurrent_dropout=0.3,
                                           return_sequences=True,
                                           reset_after=kind == "GRU")
    out = layer(inp)
    ws = _random_weights(layer)
    layer.set_weights(ws)
    s = tf.keras.backend.get_session()
    lp = tf.keras.backend.learning_phase()
    infer = s.run(out, {inp: XS})
    want = np_rnn(kind, XS, ws, U, reset_after=kind == "GRU")[0]
    np.testing.assert_allclose(infer, want, rtol=1e-4, atol=1e-5)
    a, b = s.run(out, {inp: XS, lp: True}), s.run(out, {inp: XS, lp: True})
    assert a.shape == want.shape and not np.allclose(a, want, atol=1e-3)
    assert not np.allclose(a, b, atol=1e-3)     # new masks every run


def test_other_layers():
    x = R.standard_normal((B, 6, D)).astype(np.float32)
    inp = tf.keras.layers.Input(shape=(6, D))
    conv = tf.keras.layers.Conv1D(3, 2, activation="relu")
    c = conv(inp)
    pooled = tf.keras.layers.MaxPooling1D()(c)
    gap = tf.keras.layers.GlobalAveragePooling1D()(inp)
    gmp = tf.keras.layers.GlobalMaxPooling1D()(inp)
    cat = tf.keras.layers.concatenate([gap, gmp])
    added = tf.keras.layers.Add()([gap, gmp])
    lam = tf.keras.layers.Lambda(lambda t, k: t * k, arguments={"k": 3.0})(gap)
    rep = tf.keras.layers.RepeatVector(2)(gap)
    leaky = tf.keras.layers.LeakyReLU(alpha=0.1)(inp)
    img = tf.keras.layers.Input(shape=(3, 3, 2))
    gap2 = tf.keras.layers.GlobalAveragePooling2D()(img)
    k, b = _random_weights(conv)
    conv.set_weights([k, b])
    im = R.standard_normal((B, 3, 3, 2)).astype(np.float32)
    got = tf.keras.backend.get_session().run(
        [c, pooled, gap, gmp, cat, added, lam, rep, leaky, gap2], {inp: x, img: im})
    want_c = np.maximum(np.einsum("btd,df->btf", x[:, :-1], k[0]) +
                        np.einsum("btd,df->btf", x[:, 1:], k[1]) + b, 0)
    want = [want_c, want_c[:, :4].reshape(B, 2, 2, 3).max(2), x.mean(1), x.max(1),
            np.concatenate([x.mean(1), x.max(1)], -1), x.mean(1) + x.max(1), 3 * x.mean(1),
            np.repeat(x.mean(1)[:, None], 2, 1), np.where(x > 0, x, 0.1 * x),
            im.mean((1, 2))]
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidArgumentError, match="expected ndim=2"):
        tf.keras.layers.RepeatVector(2)(inp)
    with pytest.raises(InvalidArgumentError, match="list of at least 2 inputs"):
        tf.keras.layers.Add()(gap)


def test_sequence_tagging_bidirectional_time_distributed():
    """Tag each token with whether the token before it was 1: Embedding, a Bidirectional
    GRU over the sequence and a per-step softmax, sparse targets [batch, time]."""
    tf.set_random_seed(6)
    rng = np.random.default_rng(6)
    x = rng.integers(1, 4, (256, 6)).astype(np.int32)
    y = np.zeros_like(x)
    y[:, 1:] = x[:, :-1] == 1
    m = tf.keras.Sequential([
        tf.keras.layers.Embedding(4, 6, input_length=6),
        tf.keras.layers.Bidirectional(tf.keras.layers.GRU(6, return_sequences=True)),
        tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2, activation="softmax"))])
    m.compile(tf.keras.optimizers.Adam(lr=0.05), "sparse_categorical_crossentropy",
              metrics=["accuracy"])
    h = m.fit(x[:224], y[:224], batch_size=32, epochs=5, verbose=0)
    loss, acc = m.evaluate(x[224:], y[224:], verbose=0)
    assert acc > 0.95 and h.history["loss"][-1] < h.history["loss"][0], (loss, acc)
    assert m.predict(x[:3]).shape == (3, 6, 2)


def test_sgd_decay_matches_keras_formula():
    """lr_t = lr / (1 + decay * iterations), iterations counting the updates before."""
    x = R.standard_normal((4, 2)).astype(np.float32)
    y = R.standard_normal((4, 1)).astype(np.float32)
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_dim=2, use_bias=False)])
    m.compile(tf.keras.optimizers.SGD(lr=0.1, decay=0.5), "mse")
    w = m.get_weights()[0].astype(np.float64)
    for it in range(3):
        grad = 2 * x.T @ (x @ w - y) / len(x)
        w = w - 0.1 / (1 + 0.5 * it) * grad
        m.train_on_batch(x, y)
        np.testing.assert_allclose(m.get_weights()[0], w, rtol=1e-5, atol=1e-6)
    assert tf.keras.backend.get_value(m.optimizer.iterations) == 3


def test_initial_state_and_training_argument():
    inp = tf.keras.layers.Input(shape=(T, D))
    h0 = tf.keras.layers.Input(shape=(U,))
    c0 = tf.keras.layers.Input(shape=(U,))
    lstm = tf.keras.layers.LSTM(U, return_sequences=True, dropout=0.5)
    out = lstm(inp, initial_state=[h0, c0])
    always = tf.keras.layers.SimpleRNN(U, dropout=0.5)
    out2 = always(inp, training=True)
    ws = _random_weights(lstm)
    lstm.set_weights(ws)
    hv = R.standard_normal((B, U)).astype(np.float32)
    cv = R.standard_normal((B, U)).astype(np.float32)
    got = tf.keras.backend.get_session().run(out, {inp: XS, h0: hv, c0: cv})
    # the reference with a nonzero initial state: prepend a step that produces it
    k, rk, b = ws
    u = U
    h, c = hv.astype(np.float64), cv.astype(np.float64)
    want = []
    for t in range(T):
        z = XS[:, t] @ k + h @ rk + b
        i, f, cc, o = (z[:, j * u:(j + 1) * u] for j in range(4))
        c = hard_sigmoid(f) * c + hard_sigmoid(i) * np.tanh(cc)
        h = hard_sigmoid(o) * np.tanh(c)
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want, 1), rtol=1e-4, atol=1e-5)
    s = tf.keras.backend.get_session()
    assert not np.allclose(s.run(out2, {inp: XS}), s.run(out2, {inp: XS}))
    with pytest.raises(InvalidArgumentError, match="expects 2 initial state"):
        tf.keras.layers.LSTM(U)(inp, initial_state=[h0])


def test_pretrained_frozen_embedding():
    """Embedding(weights=[matrix], trainable=False), as GloVe scripts do: the matrix is
    loaded when the layer is built and training leaves it alone."""
    tf.set_random_seed(8)
    rng = np.random.default_rng(8)
    x, y = _sentiment_data(64, rng)
    table = rng.standard_normal((20, 4)).astype(np.float32)
    m = tf.keras.Sequential([
        tf.keras.layers.Embedding(20, 4, weights=[table], input_length=10, trainable=False),
        tf.keras.layers.GRU(4), tf.keras.layers.Dense(1, activation="sigmoid")])
    m.compile("rmsprop", "binary_crossentropy")
    assert len(m.trainable_weights) == 5 and len(m.weights) == 6
    np.testing.assert_array_equal(m.layers[0].get_weights()[0], table)
    before = m.get_weights()
    m.fit(x, y, epochs=1, verbose=0)
    after = m.get_weights()
    np.testing.assert_array_equal(after[0], table)
    assert not np.allclose(after[1], before[1])


def test_functional_model_layers_and_summary(capsys):
    inp = tf.keras.layers.Input(shape=(T,), dtype="int32")
    e = tf.keras.layers.Embedding(10, 4)(inp)
    a = tf.keras.layers.LSTM(3)(e)
    b = tf.keras.layers.GlobalMaxPooling1D()(
        tf.keras.layers.Bidirectional(tf.keras.layers.SimpleRNN(2, return_sequences=True))(e))
    tf.keras.layers.Dense(7)(b)                       # (not part of the model)
    out = tf.keras.layers.Dense(1, activation="sigmoid")(tf.keras.layers.concatenate([a, b]))
    m = tf.keras.Model(inp, out)
    names = [type(layer).__name__ for layer in m.layers]
    assert names == ["Embedding", "LSTM", "Bidirectional", "GlobalMaxPooling1D",
                     "Concatenate", "Dense"]
    m.compile("adam", "binary_crossentropy")
    assert [w.op.name for w in m.weights] == [
        "embedding/embeddings", "lstm/kernel", "lstm/recurrent_kernel", "lstm/bias"] + [
        f"bidirectional/{d}_simple_rnn/{w}" for d in ("forward", "backward")
        for w in ("kernel", "recurrent_kernel", "bias")] + ["dense_1/kernel", "dense_1/bias"]
    m.fit(R.integers(0, 10, (8, T)), np.ones(8), verbose=0)
    m.summary()
    text = capsys.readouterr().out
    n = 40 + 96 + 2 * (4 * 2 + 2 * 2 + 2) + 8
    assert "lstm (LSTM)" in text and "(None, 3)" in text and f"Total params: {n}" in text
    assert "forward" not in text and m.count_params() == n
