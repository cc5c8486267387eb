"""More of TF 1.x's contrib and app/test helpers: contrib.rnn's wrappers and cells,
LSTMBlockFusedCell, the convolutional LSTMs, contrib.cudnn_rnn, contrib.layers' group_norm /
instance_norm / activation summaries / apply_regularization, contrib.opt.LazyAdamOptimizer,
contrib.learn, tf.flags' list / enum / multi / required flags, tf.test.mock and Benchmark,
tf.errors.raise_exception_on_not_ok_status. Values against NumPy references computed from
the layers' own variables, in the executor and compiled (auto-jit)."""

import io
import os
import sys
import unittest.mock

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .conftest import jit_config
from .helpers import assert_close

R = np.random.default_rng(11)
rnn = tf.contrib.rnn
XLA = pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])


def sig(x):
    return 1 / (1 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _session(g, xla):
    sess = tf.Session(graph=g, config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    return sess


def _vars(sess, cell):
    return {v.op.name.rsplit("/", 1)[-1] if "/" in v.op.name else v.op.name: sess.run(v)
            for v in cell.variables}


def _names():
    return [v.op.name for v in tf.global_variables()]


def _values(sess, names, prefix=""):
    """{name without prefix: value} of the variables named."""
    return {nm[len(prefix):]: sess.run(sess.graph.get_tensor_by_name(nm + ":0"))
            for nm in names}


def _lstm_np(x, c, h, k, b, fb=1.0):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ k + b, 4, axis=1)
    c = c * sig(f + fb) + sig(i) * np.tanh(j)
    return np.tanh(c) * sig(o), c


def _run_rnn(cell, xs, xla, extra=()):
    """dynamic_rnn of the cell over xs [batch, time, depth]: (session, outputs, state,
    all the gradients finite)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xs)
        out, st = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        grads = [gr for gr in tf.gradients(tf.reduce_sum(out), tf.trainable_variables())
                 if gr is not None]
        sess = _session(g, xla)
        got = sess.run([out, st] + list(extra))
        assert all(np.isfinite(v).all() for v in sess.run(grads))
        names = _names()
    return sess, got, names


# ---- contrib.rnn wrappers ------------------------------------------------------------------

@XLA
def test_output_and_input_projection_wrappers(xla):
    xs = R.standard_normal((2, 4, 3)).astype(np.float32)
    cell = rnn.OutputProjectionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), 2,
                                       activation=tf.tanh)
    assert cell.output_size == 2 and cell.state_size == (4, 4)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert names == ["rnn/output_projection_wrapper/basic_lstm_cell/kernel",
                     "rnn/output_projection_wrapper/basic_lstm_cell/bias",
                     "rnn/output_projection_wrapper/kernel",
                     "rnn/output_projection_wrapper/bias"]
    v = _values(sess, names, "rnn/output_projection_wrapper/")
    lk, lb, pk, pb = (v[k] for k in ("basic_lstm_cell/kernel", "basic_lstm_cell/bias",
                                     "kernel", "bias"))
    c = h = np.zeros((2, 4), np.float32)
    want = []
    for t in range(4):
        h, c = _lstm_np(xs[:, t], c, h, lk, lb)
        want.append(np.tanh(h @ pk + pb))
    assert_close(out, np.stack(want, 1), rtol=1e-4, atol=1e-5)
    assert_close(st.h, h, rtol=1e-4, atol=1e-5)

    cell = rnn.InputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(4), 5, activation=tf.nn.relu)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert names == ["rnn/input_projection_wrapper/kernel",
                     "rnn/input_projection_wrapper/bias",
                     "rnn/input_projection_wrapper/basic_rnn_cell/kernel",
                     "rnn/input_projection_wrapper/basic_rnn_cell/bias"]
    pk, pb, k, b = _values(sess, names).values()
    h = np.zeros((2, 4), np.float32)
    for t in range(4):
        p = np.maximum(xs[:, t] @ pk + pb, 0)
        h = np.tanh(np.concatenate([p, h], 1) @ k + b)
    assert_close(st, h, rtol=1e-4, atol=1e-5)


def test_wrapper_errors():
    with pytest.raises(ValueError, match="output_size must be > 0"):
        rnn.OutputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(2), 0)
    with pytest.raises(TypeError, match="not RNNCell"):
        rnn.OutputProjectionWrapper("cell", 2)
    with pytest.raises(ValueError, match="attn_length should be greater than zero"):
        rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(2), 0)
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(2), 3, state_is_tuple=False)
    cell = rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(4))
    with pytest.raises(ValueError, match="incompatible"):
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 3]), dtype=tf.float32)


@XLA
def test_attention_cell_wrapper(xla):
    xs = R.standard_normal((2, 5, 3)).astype(np.float32)
    n, length, a, vec = 4, 3, 4, 6
    cell = rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(n), length,
                                    attn_vec_size=vec)
    assert cell.state_size == ((n, n), a, a * length) and cell.output_size == a
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    base = "rnn/attention_cell_wrapper/"
    assert sorted(names) == sorted(base + s for s in (
        "kernel", "bias", "basic_lstm_cell/kernel", "basic_lstm_cell/bias",
        "attention/attn_w", "attention/attn_v", "attention/kernel", "attention/bias",
        "attn_output_projection/kernel", "attn_output_projection/bias"))
    v = {name[len(base):]: val for name, val in zip(names, sess.run(
        [sess.graph.get_tensor_by_name(nm + ":0") for nm in names]))}
    b = 2
    c = h = np.zeros((b, n), np.float32)
    attns = np.zeros((b, a), np.float32)
    states = np.zeros((b, length * a), np.float32)
    outs = []
    for t in range(5):
        inp = np.concatenate([xs[:, t], attns], 1) @ v["kernel"] + v["bias"]
        h, c = _lstm_np(inp, c, h, v["basic_lstm_cell/kernel"], v["basic_lstm_cell/bias"])
        q = np.concatenate([c, h], 1)
        hidden = states.reshape(b, length, a)
        feats = hidden @ v["attention/attn_w"].reshape(a, vec)
        y = q @ v["attention/kernel"] + v["attention/bias"]
        s = (v["attention/attn_v"] * np.tanh(feats + y[:, None])).sum(-1)
        attns = (softmax(s)[..., None] * hidden).sum(1)
        o = np.concatenate([h, attns], 1) @ v["attn_output_projection/kernel"] + \
            v["attn_output_projection/bias"]
        states = np.concatenate([hidden[:, 1:], o[:, None]], 1).reshape(b, length * a)
        outs.append(o)
    assert_close(out, np.stack(outs, 1), rtol=1e-4, atol=1e-5)
    assert_close(st[1], attns, rtol=1e-4, atol=1e-5)
    assert_close(st[2], states, rtol=1e-4, atol=1e-5)


@XLA
@pytest.mark.parametrize("couple", [True, False])
def test_highway_wrapper(xla, couple):
    xs = R.standard_normal((2, 4, 3)).astype(np.float32)
    cell = rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(3),
                              couple_carry_transform_gates=couple, carry_bias_init=0.5)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    extra = [] if couple else ["rnn/transform_w", "rnn/transform_b"]
    assert names == ["rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias", "rnn/carry_w",
                     "rnn/carry_b"] + extra
    vals = list(_values(sess, names).values())
    k, b, cw, cb = vals[:4]
    assert_close(cb, np.full(3, 0.5, np.float32))
    h = np.zeros((2, 3), np.float32)
    outs = []
    for t in range(4):
        x = xs[:, t]
        h = np.tanh(np.concatenate([x, h], 1) @ k + b)
        carry = sig(x @ cw + cb)
        transform = 1 - carry if couple else sig(x @ vals[4] + vals[5])
        outs.append(x * carry + h * transform)
    assert_close(out, np.stack(outs, 1), rtol=1e-4, atol=1e-5)


# ---- contrib.rnn cells -----------------------------------------------------------------------

@XLA
def test_ugrnn_and_indrnn_cells(xla):
    xs = R.standard_normal((3, 4, 2)).astype(np.float32)
    cell = rnn.UGRNNCell(5, forget_bias=0.5)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert names == ["rnn/ugrnn_cell/kernel", "rnn/ugrnn_cell/bias"]
    k, b = (sess.run(v) for v in cell.variables)
    assert k.shape == (7, 10)
    h = np.zeros((3, 5), np.float32)
    for t in range(4):
        g_act, c_act = np.split(np.concatenate([xs[:, t], h], 1) @ k + b, 2, axis=1)
        g = sig(g_act + 0.5)
        h = g * h + (1 - g) * np.tanh(c_act)
    assert_close(st, h, rtol=1e-4, atol=1e-5)

    cell = rnn.IndRNNCell(5)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert names == ["rnn/ind_rnn_cell/kernel_w", "rnn/ind_rnn_cell/kernel_u",
                     "rnn/ind_rnn_cell/bias"]
    v = _vars(sess, cell)
    assert v["kernel_u"].shape == (1, 5) and np.abs(v["kernel_u"]).max() <= 1
    h = np.zeros((3, 5), np.float32)
    outs = []
    for t in range(4):
        h = np.maximum(xs[:, t] @ v["kernel_w"] + h * v["kernel_u"] + v["bias"], 0)
        outs.append(h)
    assert_close(out, np.stack(outs, 1), rtol=1e-4, atol=1e-5)


def _cifg_np(xs, v, n, peep, proj, ln, fb=1.0):
    b = xs.shape[0]
    p = proj or n
    c, m = np.zeros((b, n), np.float32), np.zeros((b, p), np.float32)

    def norm(x, k):
        mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * v[f"{k}/gamma"] + v[f"{k}/beta"]
    for t in range(xs.shape[1]):
        z = np.concatenate([xs[:, t], m], 1) @ v["W_0"]
        if not ln:
            z = z + v["B"]
        j, f, o = np.split(z, 3, axis=1)
        if ln:
            j, f, o = norm(j, "transform"), norm(f, "forget"), norm(o, "output")
        f_act = sig(f + fb + (v["W_F_diag"] * c if peep else 0))
        c = f_act * c + (1 - f_act) * np.tanh(j)
        if ln:
            c = norm(c, "state")
        m = sig(o + (v["W_O_diag"] * c if peep else 0)) * np.tanh(c)
        if proj:
            m = m @ v["W_P_0"]
    return c, m


@XLA
@pytest.mark.parametrize("kind", ["peephole_proj", "layer_norm"])
def test_coupled_input_forget_gate_lstm_cell(xla, kind):
    xs = R.standard_normal((2, 4, 3)).astype(np.float32)
    peep, proj, ln = (True, 2, False) if kind == "peephole_proj" else (False, None, True)
    cell = rnn.CoupledInputForgetGateLSTMCell(4, use_peepholes=peep, num_proj=proj,
                                              layer_norm=ln, norm_gain=1.3, norm_shift=0.2)
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    base = "rnn/coupled_input_forget_gate_lstm_cell/"
    v = {nm[len(base):]: sess.run(sess.graph.get_tensor_by_name(nm + ":0")) for nm in names}
    want = {"W_0", "B"} | ({"W_F_diag", "W_O_diag", "W_P_0"} if peep else set()) | (
        {f"{k}/{p}" for k in ("transform", "forget", "output", "state")
         for p in ("gamma", "beta")} if ln else set())
    assert set(v) == want
    c, m = _cifg_np(xs, v, 4, peep, proj, ln)
    assert_close(st.c, c, rtol=1e-4, atol=1e-4)
    assert_close(st.h, m, rtol=1e-4, atol=1e-4)
    assert_close(out[:, -1], m, rtol=1e-4, atol=1e-4)


def test_cifg_sharded_weights_and_tuple_false():
    xs = R.standard_normal((2, 3, 3)).astype(np.float32)
    cell = rnn.CoupledInputForgetGateLSTMCell(4, num_unit_shards=2, state_is_tuple=False)
    assert cell.state_size == 8
    sess, (out, st), names = _run_rnn(cell, xs, False)
    base = "rnn/coupled_input_forget_gate_lstm_cell/"
    v = {nm[len(base):]: sess.run(sess.graph.get_tensor_by_name(nm + ":0")) for nm in names}
    assert v["W_0"].shape == (4, 12) and v["W_1"].shape == (3, 12)
    v["W_0"] = np.concatenate([v["W_0"], v["W_1"]], 0)
    c, m = _cifg_np(xs, v, 4, False, None, False)
    assert_close(st, np.concatenate([c, m], 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Too many shards"):
        rnn.CoupledInputForgetGateLSTMCell(1, num_unit_shards=9)(tf.zeros([2, 1]),
                                                                (tf.zeros([2, 1]),) * 2)


@XLA
def test_nas_cell(xla):
    xs = R.standard_normal((2, 3, 3)).astype(np.float32)
    cell = rnn.NASCell(4, num_proj=2, use_biases=True)
    assert cell.state_size == (4, 2) and cell.output_size == 2
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert sorted(names) == ["rnn/nas_cell/bias", "rnn/nas_cell/kernel",
                             "rnn/nas_cell/projection_weights",
                             "rnn/nas_cell/recurrent_kernel"]
    v = _vars(sess, cell)
    c, m = np.zeros((2, 4), np.float32), np.zeros((2, 2), np.float32)
    relu = lambda z: np.maximum(z, 0)
    for t in range(3):
        mm = np.split(m @ v["recurrent_kernel"] + v["bias"], 8, axis=1)
        xx = np.split(xs[:, t] @ v["kernel"], 8, axis=1)
        l1 = [sig(xx[0] + mm[0]), relu(xx[1] + mm[1]), sig(xx[2] + mm[2]),
              relu(xx[3] * mm[3]), np.tanh(xx[4] + mm[4]), sig(xx[5] + mm[5]),
              np.tanh(xx[6] + mm[6]), sig(xx[7] + mm[7])]
        l2 = [np.tanh(l1[0] * l1[1]), np.tanh(l1[2] + l1[3]), np.tanh(l1[4] * l1[5]),
              sig(l1[6] + l1[7])]
        c = np.tanh(l2[0] + c) * l2[1]
        m = np.tanh(c * np.tanh(l2[2] + l2[3])) @ v["projection_weights"]
    assert_close(st.c, c, rtol=1e-4, atol=1e-5)
    assert_close(out[:, -1], m, rtol=1e-4, atol=1e-5)


# ---- LSTMBlockFusedCell, ConvLSTM ----------------------------------------------------------

@XLA
def test_lstm_block_fused_cell(xla):
    t_len, b, d, n = 5, 3, 2, 4
    xs = R.standard_normal((t_len, b, d)).astype(np.float32)
    c0 = R.standard_normal((b, n)).astype(np.float32)
    h0 = R.standard_normal((b, n)).astype(np.float32)
    lens = np.array([5, 2, 0], np.int32)
    g = tf.Graph()
    with g.as_default():
        cell = rnn.LSTMBlockFusedCell(n, forget_bias=0.5, cell_clip=0.8, use_peephole=True)
        assert cell.num_units == n
        out, st = cell(tf.constant(xs), initial_state=(tf.constant(c0), tf.constant(h0)),
                       sequence_length=tf.constant(lens))
        assert out.shape.as_list() == [t_len, b, n] and isinstance(st, rnn.LSTMStateTuple)
        lst, _ = cell([tf.constant(x) for x in xs], dtype=tf.float32)
        assert isinstance(lst, list) and len(lst) == t_len
        grads = tf.gradients(tf.reduce_sum(out), cell.variables)
        assert _names() == ["lstm_fused_cell/kernel", "lstm_fused_cell/bias",
                            "lstm_fused_cell/w_i_diag", "lstm_fused_cell/w_f_diag",
                            "lstm_fused_cell/w_o_diag"]
        sess = _session(g, xla)
        got, k, bias, wi, wf, wo = sess.run([[out, st.c, st.h]] + cell.variables)
        assert all(np.isfinite(x).all() for x in sess.run(grads))
    c, h = c0.copy(), h0.copy()
    outs = np.zeros((t_len, b, n), np.float32)
    fc, fh = c0.copy(), h0.copy()
    for t in range(t_len):
        i, j, f, o = np.split(np.concatenate([xs[t], h], 1) @ k + bias, 4, axis=1)
        c = np.clip(sig(f + 0.5 + wf * c) * c + sig(i + wi * c) * np.tanh(j), -0.8, 0.8)
        h = sig(o + wo * c) * np.tanh(c)
        alive = (t < lens)[:, None]
        outs[t] = np.where(alive, h, 0)
        fc, fh = np.where(alive, c, fc), np.where(alive, h, fh)
    assert_close(got, [outs, fc, fh], rtol=1e-4, atol=1e-5)
    assert_close(got[1][2], c0[2]) and assert_close(got[2][2], h0[2])


def test_lstm_block_fused_cell_errors():
    cell = rnn.LSTMBlockFusedCell(2)
    with pytest.raises(ValueError, match="Either initial_state or dtype"):
        cell(tf.zeros([3, 2, 2]))
    with pytest.raises(ValueError, match="must have rank 3"):
        cell(tf.zeros([3, 2]), dtype=tf.float32)
    with pytest.raises(ValueError, match="inputs_shape\\[2\\] to be set"):
        cell(tf.placeholder(tf.float32, [3, 2, None]), dtype=tf.float32)


def _conv_same_np(x, k):
    """'SAME' stride-1 convolution, x [b, *spatial, cin], k [*ks, cin, cout]."""
    nd = x.ndim - 2
    ks = k.shape[:nd]
    pads = [(0, 0)] + [((s - 1) // 2, s - 1 - (s - 1) // 2) for s in ks] + [(0, 0)]
    xp = np.pad(x, pads)
    out = np.zeros(x.shape[:-1] + (k.shape[-1],), np.float64)
    for off in np.ndindex(*ks):
        sl = (slice(None),) + tuple(slice(o, o + x.shape[1 + i]) for i, o in enumerate(off))
        out += np.tensordot(xp[sl], k[off], axes=([x.ndim - 1], [0]))
    return out


@XLA
def test_conv2d_lstm_cell(xla):
    xs = R.standard_normal((2, 3, 4, 5, 2)).astype(np.float32)  # [batch, time, h, w, c]
    cell = rnn.Conv2DLSTMCell(input_shape=[4, 5, 2], output_channels=3, kernel_shape=[3, 2],
                              forget_bias=0.7)
    assert cell.output_size.as_list() == [4, 5, 3]
    sess, (out, st), names = _run_rnn(cell, xs, xla)
    assert names == ["rnn/conv_2d_lstm_cell/kernel", "rnn/conv_2d_lstm_cell/biases"]
    k, b = (sess.run(v) for v in cell.variables)
    assert k.shape == (3, 2, 5, 12)
    c = h = np.zeros((2, 4, 5, 3), np.float32)
    for t in range(3):
        z = _conv_same_np(np.concatenate([xs[:, t], h], -1), k) + b
        i, j, f, o = np.split(z, 4, axis=-1)
        c = sig(f + 0.7) * c + sig(i) * np.tanh(j)
        h = np.tanh(c) * sig(o)
    assert_close(st.c, c, rtol=1e-4, atol=1e-4)
    assert_close(out[:, -1], h, rtol=1e-4, atol=1e-4)


def test_conv1d_lstm_cell_skip_connection_and_errors():
    xs = R.standard_normal((2, 3, 6, 2)).astype(np.float32)
    cell = rnn.Conv1DLSTMCell(input_shape=[6, 2], output_channels=3, kernel_shape=[3],
                              skip_connection=True, use_bias=False)
    sess, (out, st), names = _run_rnn(cell, xs, False)
    assert names == ["rnn/conv_1d_lstm_cell/kernel"]
    k = sess.run(cell.variables[0])
    c = np.zeros((2, 6, 3), np.float32)
    h = np.zeros((2, 6, 5), np.float32)
    for t in range(3):
        i, j, f, o = np.split(_conv_same_np(np.concatenate([xs[:, t], h], -1), k), 4, -1)
        c = sig(f + 1.0) * c + sig(i) * np.tanh(j)
        h = np.concatenate([np.tanh(c) * sig(o), xs[:, t]], -1)
    assert_close(out[:, -1], h, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="Invalid input_shape"):
        rnn.Conv2DLSTMCell(input_shape=[4, 2], output_channels=1, kernel_shape=[3, 3])
    with pytest.raises(ValueError, match="kernel_shape"):
        rnn.Conv2DLSTMCell(input_shape=[4, 4, 2], output_channels=1, kernel_shape=[3])


# ---- contrib.cudnn_rnn -----------------------------------------------------------------------

def _gru_cudnn_np(x, h, v):
    r, u = np.split(sig(np.concatenate([x, h], 1) @ v["gates/kernel"] + v["gates/bias"]), 2, 1)
    cand = np.tanh(x @ v["candidate/input_projection/kernel"] +
                   v["candidate/input_projection/bias"] +
                   r * (h @ v["candidate/hidden_projection/kernel"] +
                        v["candidate/hidden_projection/bias"]))
    return (1 - u) * cand + u * h


def _cudnn_np(kind, xs, lens, layers, bidir, v, h0, c0):
    """Time-major reference: (outputs, h_n, c_n)."""
    t_len, b, _ = xs.shape
    inp = xs
    hs, cs = [], []
    for li in range(layers):
        outs = []
        for d in range(2 if bidir else 1):
            prefix = (f"stack_bidirectional_rnn/cell_{li}/bidirectional_rnn/"
                      f"{'fw' if d == 0 else 'bw'}/" if bidir else
                      f"rnn/multi_rnn_cell/cell_{li}/")
            cellv = {k[len(prefix):].split("/", 1)[1]: val for k, val in v.items()
                     if k.startswith(prefix)}
            idx = li * (2 if bidir else 1) + d
            h, c = h0[idx].copy(), c0[idx].copy() if c0 is not None else None
            out = np.zeros((t_len, b, h.shape[1]), np.float32)
            for bi in range(b):
                steps = range(lens[bi]) if d == 0 else range(lens[bi] - 1, -1, -1)
                hb, cb = h[bi:bi + 1], None if c is None else c[bi:bi + 1]
                for t in steps:
                    if kind == "lstm":
                        hb, cb = _lstm_np(inp[t, bi:bi + 1], cb, hb, cellv["kernel"],
                                          cellv["bias"], fb=0.0)
                    else:
                        hb = _gru_cudnn_np(inp[t, bi:bi + 1], hb, cellv)
                    out[t, bi] = hb[0]
                h[bi] = hb[0]
                if c is not None:
                    c[bi] = cb[0]
            outs.append(out)
            hs.append(h)
            cs.append(c)
        inp = np.concatenate(outs, -1)
    return inp, np.stack(hs), (np.stack(cs) if c0 is not None else None)


@XLA
@pytest.mark.parametrize("kind,direction", [("lstm", "unidirectional"),
                                            ("lstm", "bidirectional"),
                                            ("gru", "bidirectional")])
def test_cudnn_layers_against_numpy(xla, kind, direction):
    t_len, b, d, n, layers = 4, 3, 2, 3, 2
    dirs = 2 if direction == "bidirectional" else 1
    xs = R.standard_normal((t_len, b, d)).astype(np.float32)
    lens = np.array([4, 2, 3], np.int32)
    h0 = R.standard_normal((layers * dirs, b, n)).astype(np.float32)
    c0 = R.standard_normal((layers * dirs, b, n)).astype(np.float32) if kind == "lstm" \
        else None
    g = tf.Graph()
    with g.as_default():
        cls = tf.contrib.cudnn_rnn.CudnnLSTM if kind == "lstm" else \
            tf.contrib.cudnn_rnn.CudnnGRU
        layer = cls(layers, n, direction=direction, dropout=0.3)
        assert layer.num_dirs == dirs and layer.state_shape(b)[0] == [layers * dirs, b, n]
        init = (tf.constant(h0), tf.constant(c0)) if kind == "lstm" else (tf.constant(h0),)
        out, states = layer(tf.constant(xs), initial_state=init,
                            sequence_lengths=tf.constant(lens), training=False)
        assert out.shape.as_list() == [t_len, b, dirs * n]
        assert len(states) == (2 if kind == "lstm" else 1)
        # batch-major, the same variables
        out_bm, _ = layer(tf.constant(xs.transpose(1, 0, 2)), initial_state=init,
                          sequence_lengths=tf.constant(lens), time_major=False,
                          training=False)
        names = _names()
        assert len(layer.variables) == len(names)
        sess = _session(g, xla)
        got = sess.run([out, list(states), out_bm])
        v = {nm.split("/", 1)[1]: sess.run(g.get_tensor_by_name(nm + ":0")) for nm in names}
    cell = f"cudnn_compatible_{kind}_cell"
    if direction == "unidirectional":
        assert names[:2] == [f"cudnn_{kind}/rnn/multi_rnn_cell/cell_0/{cell}/kernel",
                             f"cudnn_{kind}/rnn/multi_rnn_cell/cell_0/{cell}/bias"]
    else:
        assert f"cudnn_{kind}/stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/{cell}/" \
            f"{'kernel' if kind == 'lstm' else 'gates/kernel'}" in names
    want_out, want_h, want_c = _cudnn_np(kind, xs, lens, layers, dirs == 2, v, h0, c0)
    assert_close(got[0], want_out, rtol=1e-4, atol=1e-5)
    assert_close(got[1][0], want_h, rtol=1e-4, atol=1e-5)
    if kind == "lstm":
        assert_close(got[1][1], want_c, rtol=1e-4, atol=1e-5)
    assert_close(got[2], want_out.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


def test_cudnn_training_dropout_initializers_and_errors():
    cudnn = tf.contrib.cudnn_rnn
    xs = R.standard_normal((3, 2, 2)).astype(np.float32)
    layer = cudnn.CudnnLSTM(2, 3, dropout=0.5, seed=1,
                            bias_initializer=tf.constant_initializer(0.25))
    out_train, (h, c) = layer(tf.constant(xs), training=True)
    out_inf, _ = layer(tf.constant(xs), training=False)
    assert h.shape.as_list() == [2, 2, 3] and c.shape.as_list() == [2, 2, 3]
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    assert np.isfinite(sess.run(out_train)).all()
    a, b = sess.run(out_inf), sess.run(out_inf)
    assert_close(a, b)   # no dropout at inference
    bias = sess.run(layer.variables[1])
    assert_close(bias, np.full(12, 0.5, np.float32))   # cuDNN's two biases, summed
    assert len(layer.variables) == 4
    with pytest.raises(ValueError, match="Invalid direction"):
        cudnn.CudnnLSTM(1, 2, direction="sideways")
    with pytest.raises(ValueError, match="Invalid input mode"):
        cudnn.CudnnGRU(1, 2, input_mode="other")
    with pytest.raises(ValueError, match="Only support float16, float32, float64"):
        cudnn.CudnnGRU(1, 2, dtype=tf.int32)
    with pytest.raises(ValueError, match="rank 3"):
        cudnn.CudnnGRU(1, 2)(tf.zeros([3, 2]))
    with pytest.raises(ValueError, match="num_layers \\* num_dirs = 2"):
        cudnn.CudnnGRU(1, 2, direction="bidirectional")(tf.zeros([3, 2, 2]),
                                                        initial_state=(tf.zeros([1, 2, 2]),))
    with pytest.raises(ValueError, match="tuple of 2"):
        cudnn.CudnnLSTM(1, 2)(tf.zeros([3, 2, 2]), initial_state=(tf.zeros([1, 2, 2]),))


def test_cudnn_compatible_cells():
    xs = R.standard_normal((2, 3, 2)).astype(np.float32)
    cell = tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell(4)
    sess, (out, st), names = _run_rnn(cell, xs, False)
    assert names == ["rnn/cudnn_compatible_gru_cell/gates/kernel",
                     "rnn/cudnn_compatible_gru_cell/gates/bias",
                     "rnn/cudnn_compatible_gru_cell/candidate/input_projection/kernel",
                     "rnn/cudnn_compatible_gru_cell/candidate/hidden_projection/kernel",
                     "rnn/cudnn_compatible_gru_cell/candidate/input_projection/bias",
                     "rnn/cudnn_compatible_gru_cell/candidate/hidden_projection/bias"]
    v = {nm.split("cudnn_compatible_gru_cell/")[1]: sess.run(
        sess.graph.get_tensor_by_name(nm + ":0")) for nm in names}
    assert_close(v["gates/bias"], np.ones(8, np.float32))
    h = np.zeros((2, 4), np.float32)
    for t in range(3):
        h = _gru_cudnn_np(xs[:, t], h, v)
    assert_close(st, h, rtol=1e-4, atol=1e-5)
    cell = tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell(4)
    sess, (out, st), names = _run_rnn(cell, xs, False)
    assert names == ["rnn/cudnn_compatible_lstm_cell/kernel",
                     "rnn/cudnn_compatible_lstm_cell/bias"]
    k, b = (sess.run(x) for x in cell.variables)
    c = h = np.zeros((2, 4), np.float32)
    for t in range(3):
        h, c = _lstm_np(xs[:, t], c, h, k, b, fb=0.0)
    assert_close(st.h, h, rtol=1e-4, atol=1e-5)


# ---- contrib.layers --------------------------------------------------------------------------

def _group_norm_np(x, groups, ch, red, gamma, beta, eps):
    shape = x.shape
    c = shape[ch]
    xg = x.reshape(shape[:ch] + (groups, c // groups) + shape[ch + 1:])
    axes = tuple(sorted([a + 1 if a > ch else a for a in red] + [ch + 1]))
    mu = xg.mean(axes, keepdims=True)
    var = xg.var(axes, keepdims=True)
    y = ((xg - mu) / np.sqrt(var + eps)).reshape(shape)
    pshape = [1] * len(shape)
    pshape[ch] = c
    return y * gamma.reshape(pshape) + beta.reshape(pshape)


@XLA
def test_group_norm_and_instance_norm(xla):
    x_nhwc = R.standard_normal((2, 3, 4, 6)).astype(np.float32) * 3 + 1
    x_nchw = R.standard_normal((2, 4, 3, 5)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        gamma_init = tf.constant_initializer(np.linspace(0.5, 1.5, 6).astype(np.float32))
        beta_init = tf.constant_initializer(np.linspace(-1, 1, 6).astype(np.float32))
        ph = tf.placeholder(tf.float32, [None, 3, 4, 6])
        gn = tf.contrib.layers.group_norm(ph, groups=3, epsilon=1e-5,
                                          param_initializers={"gamma": gamma_init,
                                                              "beta": beta_init},
                                          activation_fn=tf.nn.relu)
        gn2 = tf.contrib.layers.group_norm(tf.constant(x_nchw), groups=2, channels_axis=1,
                                           reduction_axes=(2, 3), center=False, scale=False)
        inn = tf.contrib.layers.instance_norm(tf.constant(x_nhwc), epsilon=1e-3,
                                              param_initializers={"gamma": gamma_init})
        inn2 = tf.contrib.layers.instance_norm(tf.constant(x_nchw), data_format="NCHW",
                                               scope="in2")
        assert gn.shape.as_list() == [None, 3, 4, 6]
        names = _names()
        grads = [x for x in tf.gradients(tf.reduce_sum(gn * gn) + tf.reduce_sum(inn * inn),
                                         [ph] + tf.trainable_variables()) if x is not None]
        assert len(grads) == 5
        sess = _session(g, xla)
        got = sess.run([gn, gn2, inn, inn2], {ph: x_nhwc})
        assert all(np.isfinite(v).all() for v in sess.run(grads, {ph: x_nhwc}))
    assert names == ["GroupNorm/beta", "GroupNorm/gamma", "InstanceNorm/beta",
                     "InstanceNorm/gamma", "in2/beta", "in2/gamma"]
    gamma = np.linspace(0.5, 1.5, 6).astype(np.float32)
    beta = np.linspace(-1, 1, 6).astype(np.float32)
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    assert_close(got[0], np.maximum(_group_norm_np(x_nhwc, 3, 3, (1, 2), gamma, beta, 1e-5),
                                    0), rtol=1e-4, atol=1e-4)
    assert_close(got[1], _group_norm_np(x_nchw, 2, 1, (2, 3), ones, zeros, 1e-6),
                 rtol=1e-4, atol=1e-4)
    mu, var = x_nhwc.mean((1, 2), keepdims=True), x_nhwc.var((1, 2), keepdims=True)
    assert_close(got[2], (x_nhwc - mu) / np.sqrt(var + 1e-3) * gamma, rtol=1e-4, atol=1e-4)
    mu, var = x_nchw.mean((2, 3), keepdims=True), x_nchw.var((2, 3), keepdims=True)
    assert_close(got[3], (x_nchw - mu) / np.sqrt(var + 1e-6), rtol=1e-4, atol=1e-4)


def test_norm_errors():
    layers = tf.contrib.layers
    with pytest.raises(ValueError, match="Invalid groups 8 for 6 channels"):
        layers.group_norm(tf.zeros([1, 2, 2, 6]), groups=8)
    with pytest.raises(ValueError, match="not commensurate"):
        layers.group_norm(tf.zeros([1, 2, 2, 6]), groups=4)
    with pytest.raises(ValueError, match="mutually exclusive"):
        layers.group_norm(tf.zeros([1, 2, 2, 6]), groups=2, reduction_axes=(1, 3))
    with pytest.raises(ValueError, match="undefined rank"):
        layers.group_norm(tf.placeholder(tf.float32), groups=2)
    with pytest.raises(ValueError, match="undefined channel"):
        layers.group_norm(tf.placeholder(tf.float32, [1, 2, 2, None]), groups=2)
    with pytest.raises(ValueError, match="NCHW or NHWC"):
        layers.instance_norm(tf.zeros([1, 2, 2, 3]), data_format="NWC")
    with pytest.raises(ValueError, match="undefined rank"):
        layers.instance_norm(tf.placeholder(tf.float32))


def test_summarize_activations():
    x = tf.constant(np.array([[-1.0, 0.5, 7.0, -2.0]], np.float32))
    r6 = tf.nn.relu6(x, name="act6")
    r = tf.nn.relu(x, name="act")
    th = tf.tanh(x, name="th")
    for t in (r6, r, th):
        tf.add_to_collection("activations", t)
    hists = tf.contrib.layers.summarize_activations()
    assert len(hists) == 3
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    tags = sorted(s.op.get_attr("tag") for s in summaries)
    assert tags == sorted(["act6/zero_fraction", "act6/zero", "act6/six", "act6/activation",
                           "act/zero_fraction", "act/zero", "act/activation",
                           "th/activation"])
    by_tag = {s.op.get_attr("tag"): s.op.inputs[0] for s in summaries}
    sess = tf.Session()
    vals = sess.run({k: by_tag[k] for k in ("act6/zero_fraction", "act6/zero", "act6/six")})
    assert_close(vals, {"act6/zero_fraction": np.float32(0.5), "act6/zero": np.float32(0.5),
                        "act6/six": np.float32(0.25)})
    assert len(tf.contrib.layers.summarize_activations(name_filter="th")) == 1
    merged = sess.run(tf.summary.merge_all())
    assert isinstance(merged, bytes) and merged


def test_apply_regularization():
    w1 = tf.get_variable("w1", initializer=np.array([[1.0, -2.0]], np.float32))
    w2 = tf.get_variable("w2", initializer=np.array([3.0], np.float32))
    reg = tf.contrib.layers.l2_regularizer(0.1)
    total = tf.contrib.layers.apply_regularization(reg, [w1, w2])
    assert total in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    tf.add_to_collection("weights", w2)
    default = tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(0.5))
    zero = tf.contrib.layers.apply_regularization(tf.contrib.layers.l2_regularizer(0.0),
                                                  [w1])
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    assert_close(sess.run([total, default, zero]),
                 [np.float32(0.1 * (1 + 4 + 9) / 2), np.float32(1.5), np.float32(0.0)],
                 rtol=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No weights to regularize"):
            tf.contrib.layers.apply_regularization(reg)
        w = tf.get_variable("w", [2])
        with pytest.raises(ValueError, match="must return a scalar Tensor"):
            tf.contrib.layers.apply_regularization(lambda t: t * 2.0, [w])


# ---- contrib.opt, contrib.learn ---------------------------------------------------------------

@XLA
def test_lazy_adam_is_adam_on_dense_gradients(xla):
    table0 = R.standard_normal((5, 3)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        table = tf.get_variable("table", initializer=table0)
        ids = tf.constant([1, 3, 1])
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids)))
        opt = tf.contrib.opt.LazyAdamOptimizer(0.1, beta1=0.8, beta2=0.9, epsilon=1e-6)
        assert opt.get_name() == "LazyAdam"
        train = opt.minimize(loss)
        slots = sorted(v.op.name for v in tf.global_variables())
        sess = _session(g, xla)
        for _ in range(3):
            sess.run(train)
        got = sess.run(table)
    assert "table/LazyAdam" in slots and "table/LazyAdam_1" in slots
    w, m, v = table0.astype(np.float64), 0.0, 0.0
    for t in range(1, 4):
        grad = np.zeros_like(w)
        for i in (1, 3, 1):
            grad[i] += 2 * w[i]
        m = 0.8 * m + 0.2 * grad
        v = 0.9 * v + 0.1 * grad * grad
        lr = 0.1 * np.sqrt(1 - 0.9 ** t) / (1 - 0.8 ** t)
        w = w - lr * m / (np.sqrt(v) + 1e-6)
    assert_close(got, w.astype(np.float32), rtol=1e-4, atol=1e-5)


def test_contrib_learn_mode_keys_and_datasets():
    learn = tf.contrib.learn
    assert (learn.ModeKeys.TRAIN, learn.ModeKeys.EVAL, learn.ModeKeys.INFER) == \
        ("train", "eval", "infer")
    assert learn.ModeKeys.INFER == tf.estimator.ModeKeys.PREDICT
    iris = learn.datasets.load_dataset("iris")
    assert iris.data.shape == (150, 4) and iris.data.dtype == np.float64
    assert iris.target.dtype == np.int64 and np.bincount(iris.target).tolist() == [50] * 3
    assert_close(iris.data[0], np.array([5.1, 3.5, 1.4, 0.2]))
    boston = learn.datasets.load_dataset("boston")
    assert boston.data.shape == (506, 13) and boston.target.shape == (506,)
    assert_close(boston.target[:2], np.array([24.0, 21.6]))
    mnist = learn.datasets.load_dataset("mnist")
    assert mnist.train.images.shape[1] == 784 and mnist.test.num_examples > 0
    with pytest.raises(ValueError, match="Name of dataset is not found: cifar"):
        learn.datasets.load_dataset("cifar")
    with pytest.raises(tf.errors.NotFoundError, match="dbpedia"):
        learn.datasets.load_dataset("dbpedia")


# ---- tf.flags, tf.test, tf.errors -----------------------------------------------------------

def _app_run(argv):
    seen = {}

    def main(rest):
        seen["rest"] = rest
        return 0
    err = io.StringIO()
    with unittest.mock.patch.object(sys, "stderr", err), pytest.raises(SystemExit) as e:
        tf.app.run(main=main, argv=argv)
    return e.value.code, seen, err.getvalue()


def test_flags_list_enum_multi_and_required():
    flags = tf.flags
    assert tf.app.flags is flags
    flags.DEFINE_list("tcm_layers", "64,32", "layer sizes")
    flags.DEFINE_enum("tcm_mode", "train", ["train", "eval"], "mode")
    flags.DEFINE_enum("tcm_opt", "Adam", ["Adam", "SGD"], "optimizer", case_sensitive=False)
    flags.DEFINE_multi_string("tcm_file", "a.txt", "files")
    flags.DEFINE_multi_integer("tcm_seed", [1, 2], "seeds")
    flags.DEFINE_string("tcm_out", None, "output")
    flags.mark_flag_as_required("tcm_out")
    try:
        F = flags.FLAGS
        assert F.tcm_layers == ["64", "32"] and F.tcm_mode == "train"
        code, seen, err = _app_run(["prog"])
        assert code == 1 and "FATAL Flags parsing error" in err and "--tcm_out" in err
        assert "rest" not in seen
        code, seen, _ = _app_run(["prog", "--tcm_out=o", "--tcm_layers=128, 8,2", "--tcm_mode",
                                  "eval", "--tcm_opt=sgd", "--tcm_file=x", "--tcm_file", "y",
                                  "--tcm_seed=5", "extra"])
        assert code == 0 and seen["rest"] == ["prog", "extra"]
        assert (F.tcm_out, F.tcm_layers, F.tcm_mode, F.tcm_opt, F.tcm_file, F.tcm_seed) == \
            ("o", ["128", "8", "2"], "eval", "SGD", ["x", "y"], [5])
        code, _, _ = _app_run(["prog", "--tcm_out=o", "--tcm_layers="])
        assert code == 0 and F.tcm_layers == [] and F.tcm_file == ["a.txt"] and \
            F.tcm_seed == [1, 2]
        code, _, err = _app_run(["prog", "--tcm_out=o", "--tcm_mode=predict"])
        assert code == 1 and "one of <train|eval>" in err
        with pytest.raises(flags.IllegalFlagValueError):
            flags.DEFINE_enum("tcm_bad", "x", ["a", "b"], "bad default")
        with pytest.raises(ValueError):
            flags.DEFINE_multi_integer("tcm_bad_int", ["z"], "bad default")
        with pytest.raises(flags.Error):
            flags.mark_flag_as_required("tcm_undefined")
    finally:
        flags.FLAGS._required.discard("tcm_out")


def test_test_mock_and_benchmark(tmp_path, monkeypatch):
    assert tf.test.mock is unittest.mock
    monkeypatch.setenv("TEST_REPORT_FILE_PREFIX", str(tmp_path) + "/bench_")
    x = tf.Variable(0.0)
    inc = tf.assign_add(x, 1.0)

    class AddBenchmark(tf.test.Benchmark):
        def benchmarkAdd(self):
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                res = self.run_op_benchmark(sess, inc, burn_iters=3, min_iters=4, mbs=2,
                                            extras={"k": 1})
                return res, sess.run(x)

    res, count = AddBenchmark().benchmarkAdd()
    assert count == 7.0    # 3 burn-in + 4 timed runs
    assert res["iters"] == 4 and res["wall_time"] > 0 and res["extras"] == {"k": 1}
    assert res["throughput"] == pytest.approx(2 / res["wall_time"])
    path = tmp_path / "bench_AddBenchmark.benchmarkAdd"
    assert path.exists() and '"iters": 4' in path.read_text()
    entry = tf.test.Benchmark().report_benchmark(iters=3, wall_time=0.5, name="custom")
    assert entry["name"] == "custom" and (tmp_path / "bench_custom").exists()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        traced = tf.test.Benchmark().run_op_benchmark(sess, inc, min_iters=1,
                                                      store_trace=True, name="t")
    assert "traceEvents" in traced["extras"]["full_trace_chrome_format"]
    assert os.path.exists(tmp_path / "bench_t")


def test_raise_exception_on_not_ok_status():
    with tf.errors.raise_exception_on_not_ok_status() as status:
        assert status.code == tf.errors.OK
    with pytest.raises(tf.errors.NotFoundError, match="no such thing") as e:
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.set(tf.errors.NOT_FOUND, "no such thing")
    assert e.value.error_code == tf.errors.NOT_FOUND
    with pytest.raises(tf.errors.InvalidArgumentError):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.code = tf.errors.INVALID_ARGUMENT
    with pytest.raises(KeyError):   # an exception inside the block passes through
        with tf.errors.raise_exception_on_not_ok_status():
            raise KeyError("inner")
