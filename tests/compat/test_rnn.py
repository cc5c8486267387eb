"""RNN cells, dynamic_rnn (a While over time), static_rnn, bidirectional RNNs: values
against NumPy re-implementations of TF's cell formulas, gradients against JAX, variable
names as TF's, and an LSTM training step compiling into one cluster."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config
from .helpers import assert_close, single_cluster

R = np.random.default_rng(21)
B, T, D = 3, 4, 2
XS = R.uniform(-1, 1, (B, T, D)).astype(np.float32)
SEQ = np.array([4, 2, 0], np.int32)


def sig(v):
    return 1 / (1 + np.exp(-v))


def lstm_ref(x, c, h, kernel, bias, forget_bias=1.0):
    z = np.concatenate([x, h], 1) @ kernel + bias
    i, j, f, o = np.split(z, 4, axis=1)
    c = c * sig(f + forget_bias) + sig(i) * np.tanh(j)
    return np.tanh(c) * sig(o), c


def gru_ref(x, h, gk, gb, ck, cb):
    r, u = np.split(sig(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    return u * h + (1 - u) * cand


def _run(build, xla):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, T, D])
        fetches = build(x)
        sess = tf.Session(graph=g, config=jit_config() if xla else None)
        sess.run(tf.global_variables_initializer())
        names = [v.name for v in tf.global_variables()]
        return sess.run(fetches, {x: XS}), sess.run({v.name: v for v in tf.global_variables()}), \
            names


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_cells_against_reference_formulas(xla):
    def build(x):
        out = {}
        cells = {"basic_lstm": tf.nn.rnn_cell.BasicLSTMCell(5),
                 "gru": tf.nn.rnn_cell.GRUCell(3),
                 "basic_rnn": tf.nn.rnn_cell.BasicRNNCell(4),
                 "lstm": tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=3,
                                                 cell_clip=0.5),
                 "multi": tf.nn.rnn_cell.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(3),
                                                       tf.contrib.rnn.GRUCell(2)])}
        for k, cell in cells.items():
            out[k] = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope=k)
        return out
    got, vs, names = _run(build, xla)
    assert names == [
        "basic_lstm/basic_lstm_cell/kernel:0", "basic_lstm/basic_lstm_cell/bias:0",
        "gru/gru_cell/gates/kernel:0", "gru/gru_cell/gates/bias:0",
        "gru/gru_cell/candidate/kernel:0", "gru/gru_cell/candidate/bias:0",
        "basic_rnn/basic_rnn_cell/kernel:0", "basic_rnn/basic_rnn_cell/bias:0",
        "lstm/lstm_cell/kernel:0", "lstm/lstm_cell/bias:0", "lstm/lstm_cell/w_f_diag:0",
        "lstm/lstm_cell/w_i_diag:0", "lstm/lstm_cell/w_o_diag:0",
        "lstm/lstm_cell/projection/kernel:0",
        "multi/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
        "multi/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
        "multi/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0",
        "multi/multi_rnn_cell/cell_1/gru_cell/gates/bias:0",
        "multi/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0",
        "multi/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0"]
    assert_close(vs["gru/gru_cell/gates/bias:0"], np.ones(6))   # GRU gates start open

    def v(name):
        return vs[name + ":0"]

    # BasicLSTMCell
    c = h = np.zeros((B, 5), np.float32)
    outs = []
    for t in range(T):
        h, c = lstm_ref(XS[:, t], c, h, v("basic_lstm/basic_lstm_cell/kernel"),
                        v("basic_lstm/basic_lstm_cell/bias"))
        outs.append(h)
    o, st = got["basic_lstm"]
    assert_close(o, np.stack(outs, 1), rtol=1e-5, atol=1e-6)
    assert_close(st.c, c, rtol=1e-5, atol=1e-6) and assert_close(st.h, h, 1e-5, 1e-6)
    # GRU
    h = np.zeros((B, 3), np.float32)
    for t in range(T):
        h = gru_ref(XS[:, t], h, v("gru/gru_cell/gates/kernel"), v("gru/gru_cell/gates/bias"),
                    v("gru/gru_cell/candidate/kernel"), v("gru/gru_cell/candidate/bias"))
    assert_close(got["gru"][1], h, rtol=1e-5, atol=1e-6)
    # BasicRNNCell
    h = np.zeros((B, 4), np.float32)
    for t in range(T):
        h = np.tanh(np.concatenate([XS[:, t], h], 1) @ v("basic_rnn/basic_rnn_cell/kernel") +
                    v("basic_rnn/basic_rnn_cell/bias"))
    assert_close(got["basic_rnn"][1], h, rtol=1e-5, atol=1e-6)
    # LSTMCell with peepholes, clipping and a projection
    p = "lstm/lstm_cell/"
    c, m = np.zeros((B, 4), np.float32), np.zeros((B, 3), np.float32)
    for t in range(T):
        z = np.concatenate([XS[:, t], m], 1) @ v(p + "kernel") + v(p + "bias")
        i, j, f, o = np.split(z, 4, axis=1)
        c = sig(f + 1 + v(p + "w_f_diag") * c) * c + sig(i + v(p + "w_i_diag") * c) * np.tanh(j)
        c = np.clip(c, -0.5, 0.5)
        m = (sig(o + v(p + "w_o_diag") * c) * np.tanh(c)) @ v(p + "projection/kernel")
    assert_close(got["lstm"][1], (c, m), rtol=1e-5, atol=1e-6)
    assert got["lstm"][0].shape == (B, T, 3)
    # MultiRNNCell: the LSTM's output feeds the GRU
    q = "multi/multi_rnn_cell/cell_"
    c = h1 = np.zeros((B, 3), np.float32)
    h2 = np.zeros((B, 2), np.float32)
    for t in range(T):
        h1, c = lstm_ref(XS[:, t], c, h1, v(q + "0/basic_lstm_cell/kernel"),
                         v(q + "0/basic_lstm_cell/bias"))
        h2 = gru_ref(h1, h2, v(q + "1/gru_cell/gates/kernel"), v(q + "1/gru_cell/gates/bias"),
                     v(q + "1/gru_cell/candidate/kernel"), v(q + "1/gru_cell/candidate/bias"))
    o, (s1, s2) = got["multi"]
    assert_close(o[:, -1], h2, rtol=1e-5, atol=1e-6)
    assert_close((s1.c, s1.h, s2), (c, h1, h2), rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_sequence_length_static_rnn_and_time_major():
    def build(x):
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        dyn = tf.nn.dynamic_rnn(cell, x, sequence_length=SEQ, dtype=tf.float32)
        stat = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=SEQ,
                                dtype=tf.float32)
        tm = tf.nn.dynamic_rnn(cell, tf.transpose(x, [1, 0, 2]), time_major=True,
                               dtype=tf.float32)
        full = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        return dyn, stat, tm, full
    (dyn, stat, tm, full), vs, names = _run(build, xla=True)
    assert len(names) == 2  # one cell, shared by all four RNNs
    (o, st), (so, sst) = dyn, stat
    assert_close(o, np.stack(so, 1), rtol=1e-5, atol=1e-6)
    assert_close(st, sst, rtol=1e-5, atol=1e-6)
    for b, n in enumerate(SEQ):
        assert np.all(o[b, n:] == 0)                       # zeros past the length
        if n:
            assert_close(st.h[b], full[0][b, n - 1], rtol=1e-5, atol=1e-6)  # state at length
        else:
            assert np.all(st.h[b] == 0) and np.all(st.c[b] == 0)
    assert_close(tm[0].transpose(1, 0, 2), full[0], rtol=1e-6)
    assert_close(tm[1], full[1], rtol=1e-6)


def test_bidirectional_dynamic_rnn():
    def build(x):
        fw, bw = tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2)
        (of, ob), (sf, sb) = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=SEQ,
                                                             dtype=tf.float32)
        # the backward direction is a forward RNN over each sequence reversed in its length
        rev = tf.reverse_sequence(x, SEQ, seq_axis=1, batch_axis=0)
        with tf.variable_scope("bidirectional_rnn", reuse=True):
            ref_o, ref_s = tf.nn.dynamic_rnn(bw, rev, sequence_length=SEQ, dtype=tf.float32,
                                             scope="bw")
        return of, ob, sb, tf.reverse_sequence(ref_o, SEQ, seq_axis=1, batch_axis=0), ref_s
    (of, ob, sb, want_o, want_s), _, names = _run(build, xla=False)
    assert names[0].startswith("bidirectional_rnn/fw/gru_cell/") and \
        names[4].startswith("bidirectional_rnn/bw/gru_cell/")
    assert_close(ob, want_o, rtol=1e-6)
    assert_close(sb, want_s, rtol=1e-6)
    assert of.shape == ob.shape == (B, T, 2)


def _jax_lstm_loss(x, kernel, bias):
    def step(carry, xt):
        c, h = carry
        z = jnp.concatenate([xt, h], 1) @ kernel + bias
        i, j, f, o = jnp.split(z, 4, axis=1)
        c = c * jax.nn.sigmoid(f + 1.0) + jax.nn.sigmoid(i) * jnp.tanh(j)
        h = jnp.tanh(c) * jax.nn.sigmoid(o)
        return (c, h), h
    n = kernel.shape[1] // 4
    (c, h), hs = jax.lax.scan(step, (jnp.zeros((B, n)), jnp.zeros((B, n))), x.transpose(1, 0, 2))
    return jnp.sum(hs ** 2) + jnp.sum(c)


_JAX_LSTM = jax.jit(lambda *a: [_jax_lstm_loss(*a), *jax.grad(_jax_lstm_loss, (0, 1, 2))(*a)])


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_lstm_gradients_against_jax(xla):
    def build(x):
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        o, st = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_sum(o * o) + tf.reduce_sum(st.c)
        return [loss] + tf.gradients(loss, [x] + tf.trainable_variables())
    got, vs, _ = _run(build, xla)
    k, b = vs["rnn/basic_lstm_cell/kernel:0"], vs["rnn/basic_lstm_cell/bias:0"]
    want = _JAX_LSTM(XS, k, b)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_lstm_classifier_training_step_is_one_cluster():
    """MNIST rows through an LSTM (mnist_rnn.py's model, small): the training step is one
    compiled cluster holding the forward and the backward while loops, and training matches
    the executor step for step."""
    xs = R.uniform(0, 1, (8, 6, 5)).astype(np.float32)
    ys = R.integers(0, 3, 8)
    results = []
    for cfg in (None, jit_config()):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(7)
            x = tf.placeholder(tf.float32, [None, 6, 5])
            y = tf.placeholder(tf.int64, [None])
            _, state = tf.nn.dynamic_rnn(tf.contrib.rnn.BasicLSTMCell(8), x, dtype=tf.float32)
            logits = tf.layers.dense(state.h, 3)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                                 logits=logits))
            train = tf.train.AdamOptimizer(0.05).minimize(loss)
            sess = tf.Session(graph=g, config=cfg)
            sess.run(tf.global_variables_initializer())
            if cfg is not None:
                summary = single_cluster(sess, train, {x: xs, y: ys})
                assert "While" in summary and "WhileGrad" in summary and "ApplyAdam" in summary
            results.append([sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(6)])
    assert_close(results[1], results[0], rtol=2e-5, atol=1e-6)
    assert results[1][-1] < results[1][0]


def test_dropout_wrapper_and_errors():
    x = tf.placeholder(tf.float32, [None, T, D])
    plain = tf.nn.rnn_cell.BasicRNNCell(5)
    wrapped = tf.nn.rnn_cell.DropoutWrapper(plain, output_keep_prob=0.5, seed=1)
    var = tf.nn.rnn_cell.DropoutWrapper(plain, output_keep_prob=0.5, variational_recurrent=True,
                                        dtype=tf.float32, seed=2)
    o_plain, _ = tf.nn.dynamic_rnn(plain, x, dtype=tf.float32)
    o_drop, _ = tf.nn.dynamic_rnn(wrapped, x, dtype=tf.float32)
    o_var, _ = tf.nn.dynamic_rnn(var, x, dtype=tf.float32)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    a, b, c = sess.run([o_plain, o_drop, o_var], {x: XS})
    for got in (b, c):
        kept = got != 0
        assert_close(got[kept], 2 * a[kept], rtol=1e-5)
        assert 0 < kept.mean() < 1
    kept = c != 0
    assert np.all(kept == kept[:1, :1])   # variational: one [1, units] mask for all steps
    with pytest.raises(InvalidArgumentError, match="you must give a dtype"):
        tf.nn.dynamic_rnn(plain, x)
    with pytest.raises(InvalidArgumentError, match="last dimension"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [2, 3, None]),
                          dtype=tf.float32)
