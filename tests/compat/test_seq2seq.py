"""tf.contrib.seq2seq: TrainingHelper + BasicDecoder against dynamic_rnn + dense, greedy
decoding against a NumPy step-by-step reference (stopping at end_token), the attention
mechanisms and AttentionWrapper against NumPy references of TF's equations, variable names
as TF's, and a reverse-the-sequence model with attention that learns, in the executor and
compiled."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import UnimplementedError

from .conftest import jit_config
from .helpers import all_compiled, assert_close

R = np.random.default_rng(8)
s2s = tf.contrib.seq2seq


def sig(v):
    return 1 / (1 + np.exp(-v))


def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def gru_ref(x, h, vs, p):
    r, u = np.split(sig(np.concatenate([x, h], 1) @ vs[p + "gates/kernel:0"]
                        + vs[p + "gates/bias:0"]), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ vs[p + "candidate/kernel:0"]
                + vs[p + "candidate/bias:0"])
    return u * h + (1 - u) * c


def _values(sess):
    return sess.run({v.name: v for v in tf.global_variables()})


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_training_helper_basic_decoder_equals_dynamic_rnn_and_dense(xla):
    b, t, d, v = 3, 5, 4, 6
    xs = R.standard_normal((b, t, d)).astype(np.float32)
    seq = np.array([4, 2, 3], np.int32)
    x = tf.placeholder(tf.float32, [b, t, d])
    cell = tf.nn.rnn_cell.GRUCell(5)
    proj = tf.layers.Dense(v, name="output_projection")
    helper = s2s.TrainingHelper(x, seq)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(b, tf.float32), proj)
    out, state, lengths = s2s.dynamic_decode(decoder, impute_finished=True)
    with tf.variable_scope("decoder", reuse=True):
        ref_out, ref_state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float32)
        ref_logits = proj(ref_out)
    assert isinstance(out, s2s.BasicDecoderOutput)
    assert [w.name for w in tf.global_variables()] == [
        "decoder/gru_cell/gates/kernel:0", "decoder/gru_cell/gates/bias:0",
        "decoder/gru_cell/candidate/kernel:0", "decoder/gru_cell/candidate/bias:0",
        "decoder/output_projection/kernel:0", "decoder/output_projection/bias:0"]
    loss = tf.reduce_sum(out.rnn_output ** 2)
    grads = tf.gradients(loss, tf.trainable_variables())
    ref_grads = tf.gradients(tf.reduce_sum(ref_logits[:, :4] ** 2 * tf.sequence_mask(
        seq, 4, dtype=tf.float32)[:, :, None]), tf.trainable_variables())
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    if xla:   # the forward loop, then what needs its number of steps (a gather's indices)
        summary = all_compiled(sess, [out, grads], {x: xs})
        assert "While" in summary and "WhileGrad" in summary
    (o, st, n, g), (ro, rst, rg) = sess.run([(out, state, lengths, grads),
                                             (ref_logits, ref_state, ref_grads)], {x: xs})
    assert o.rnn_output.shape == (b, 4, v) and o.sample_id.shape == (b, 4)   # max(seq) steps
    np.testing.assert_array_equal(n, seq)
    mask = np.arange(4)[None, :] < seq[:, None]
    assert_close(o.rnn_output, np.where(mask[..., None], ro[:, :4], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o.sample_id[mask], ro[:, :4].argmax(-1)[mask])
    assert_close(st, rst, rtol=1e-5, atol=1e-6)   # impute_finished: the state at the length
    assert_close(g, rg, rtol=1e-4, atol=1e-5)


def _greedy_reference(vs, start, end_token, max_steps):
    emb = vs["embedding:0"]
    h = np.zeros((len(start), 6), np.float32)
    ids, finished, lengths, logits_all = start, np.zeros(len(start), bool), \
        np.zeros(len(start), int), []
    for step in range(max_steps):
        h = gru_ref(emb[ids], h, vs, "decoder/gru_cell/")
        logits = h @ vs["decoder/dense/kernel:0"] + vs["decoder/dense/bias:0"]
        ids = logits.argmax(-1)
        lengths = np.where(finished, lengths, step + 1)
        finished = finished | (ids == end_token)
        logits_all.append((logits, ids))
        if finished.all():
            break
    return logits_all, lengths


def test_greedy_embedding_helper_stops_at_end_token():
    b, vocab, steps = 4, 7, 10
    tf.set_random_seed(2)
    embedding = tf.get_variable("embedding", [vocab, 3])
    end_token = tf.placeholder(tf.int32, [])
    start = np.array([0, 1, 2, 3], np.int32)
    cell = tf.nn.rnn_cell.GRUCell(6)
    helper = s2s.GreedyEmbeddingHelper(embedding, start, end_token)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(b, tf.float32),
                               tf.layers.Dense(vocab))
    out, _, lengths = s2s.dynamic_decode(decoder, maximum_iterations=steps)
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    vs = _values(sess)
    all_compiled(sess, out, {end_token: -1})
    # no end token: runs maximum_iterations steps; then stop at a token batch entry 0 emits
    ref, _ = _greedy_reference(vs, start, -1, steps)
    o, n = sess.run([out, lengths], {end_token: -1})
    assert o.sample_id.shape == (b, steps) and np.all(n == steps)
    end = int(ref[2][1][0])
    ref, ref_lengths = _greedy_reference(vs, start, end, steps)
    o, n = sess.run([out, lengths], {end_token: end})
    np.testing.assert_array_equal(n, ref_lengths)
    assert n[0] <= 3 and o.sample_id.shape == (b, len(ref))
    np.testing.assert_array_equal(o.sample_id, np.stack([ids for _, ids in ref], 1))
    assert_close(o.rnn_output, np.stack([lg for lg, _ in ref], 1), rtol=1e-4, atol=1e-5)
    for i in range(b):
        if n[i] < len(ref):
            assert o.sample_id[i, n[i] - 1] == end


def _mechanism_refs(vs, keys, values, query, seq, kind):
    if kind.startswith("bahdanau"):
        p = "attention_wrapper/bahdanau_attention/"
        pq = query @ vs[p + "query_layer/kernel:0"]
        v = vs[p + "attention_v:0"]
        if kind == "bahdanau_norm":
            v = vs[p + "attention_g:0"] * v / np.sqrt((v * v).sum())
            score = (v * np.tanh(keys + pq[:, None] + vs[p + "attention_b:0"])).sum(-1)
        else:
            score = (v * np.tanh(keys + pq[:, None])).sum(-1)
    else:
        score = np.einsum("bd,btd->bt", query, keys)
        score = score * vs["attention_wrapper/luong_attention/attention_g:0"]
    score = np.where(np.arange(keys.shape[1])[None] < seq[:, None], score, -np.inf)
    return softmax(score)


@pytest.mark.parametrize("kind", ["bahdanau", "bahdanau_norm", "luong_scale"])
def test_attention_wrapper_step_against_numpy(kind):
    b, tm, dm, units, d_in = 3, 5, 4, 4, 2
    mem = R.standard_normal((b, tm, dm)).astype(np.float32)
    seq = np.array([5, 3, 1], np.int32)
    inputs = R.standard_normal((b, d_in)).astype(np.float32)
    tf.set_random_seed(4)
    memory = tf.placeholder(tf.float32, [b, tm, dm])
    if kind.startswith("bahdanau"):
        mech = s2s.BahdanauAttention(units, memory, seq, normalize=kind == "bahdanau_norm")
    else:
        mech = s2s.LuongAttention(units, memory, seq, scale=True)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(units), mech, attention_layer_size=3)
    state0 = cell.zero_state(b, tf.float32)
    out1, state1 = cell(tf.constant(inputs), state0)
    out2, state2 = cell(tf.constant(inputs), state1)       # a second step reuses everything
    sess = tf.Session()
    sess.run(tf.global_variables_initializer(), {memory: mem})
    names = sorted(v.name for v in tf.global_variables())
    mech_vars = {"bahdanau": ["attention_v:0", "query_layer/kernel:0"],
                 "bahdanau_norm": ["attention_b:0", "attention_g:0", "attention_v:0",
                                   "query_layer/kernel:0"],
                 "luong_scale": ["attention_g:0"]}[kind]
    scope = "bahdanau_attention/" if kind.startswith("bahdanau") else "luong_attention/"
    assert names == sorted(
        ["memory_layer/kernel:0", "attention_wrapper/attention_layer/kernel:0"]
        + [f"attention_wrapper/gru_cell/{k}" for k in (
            "gates/kernel:0", "gates/bias:0", "candidate/kernel:0", "candidate/bias:0")]
        + ["attention_wrapper/" + scope + n for n in mech_vars])
    got = sess.run([out1, state1, out2, state2], {memory: mem})
    vs = _values(sess)
    masked_mem = mem * (np.arange(tm)[None, :, None] < seq[:, None, None])
    keys = masked_mem @ vs["memory_layer/kernel:0"]
    h = np.zeros((b, units), np.float32)
    attention = np.zeros((b, 3), np.float32)
    for out, st in ((got[0], got[1]), (got[2], got[3])):
        h = gru_ref(np.concatenate([inputs, attention], 1), h, vs, "attention_wrapper/gru_cell/")
        align = _mechanism_refs(vs, keys, masked_mem, h, seq, kind)
        context = np.einsum("bt,btd->bd", align, masked_mem)
        attention = np.concatenate([h, context], 1) @ vs[
            "attention_wrapper/attention_layer/kernel:0"]
        assert_close(out, attention, rtol=1e-4, atol=1e-5)
        assert_close(st.alignments, align, rtol=1e-4, atol=1e-6)
        assert_close(st.cell_state, h, rtol=1e-5, atol=1e-6)
        assert np.all(st.alignments[2, 1:] == 0)   # masked past memory_sequence_length
    assert got[3].time == 2


def test_alignment_history_in_greedy_decoding():
    b, tm, steps = 2, 4, 5
    memory = tf.constant(R.standard_normal((b, tm, 3)).astype(np.float32))
    mech = s2s.LuongAttention(6, memory, [4, 2])
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(6), mech, alignment_history=True)
    helper = s2s.GreedyEmbeddingHelper(tf.get_variable("emb", [5, 3]), [0, 1], -1)
    decoder = s2s.BasicDecoder(cell, helper, cell.zero_state(b, tf.float32))
    out, state, _ = s2s.dynamic_decode(decoder, maximum_iterations=steps)
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    all_compiled(sess, [out, state.alignment_history.stack()], None)
    history, last, n = sess.run([state.alignment_history.stack(), state.alignments,
                                 state.alignment_history.size()])
    assert n == steps and history.shape == (steps, b, tm)
    assert_close(history.sum(-1), np.ones((steps, b), np.float32), rtol=1e-5)
    assert_close(history[-1], last) and np.all(history[:, 1, 2:] == 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="maximum_iterations"):
        s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, cell.zero_state(b, tf.float32)))


def test_zero_state_clone_tile_batch_and_missing():
    mem = tf.zeros([2, 3, 4])
    mech = s2s.LuongAttention(4, mem)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), mech, output_attention=False)
    lstm_state = tf.nn.rnn_cell.LSTMStateTuple(tf.ones([2, 4]), tf.ones([2, 4]) * 2)
    st = cell.zero_state(2, tf.float32).clone(cell_state=lstm_state)
    assert isinstance(st, s2s.AttentionWrapperState) and st.cell_state.h is lstm_state.h
    assert cell.output_size == 4 and st.attention.shape.as_list() == [2, 4]
    tiled = s2s.tile_batch((tf.constant([[1, 2], [3, 4]]), tf.constant([5, 6])), 3)
    a, b2 = tf.Session().run(tiled)
    np.testing.assert_array_equal(a, [[1, 2]] * 3 + [[3, 4]] * 3)
    np.testing.assert_array_equal(b2, [5, 5, 5, 6, 6, 6])
    assert tiled[0].shape.as_list() == [6, 2]
    with pytest.raises(UnimplementedError, match="InferenceHelper"):
        s2s.InferenceHelper   # noqa: B018
    with pytest.raises(AttributeError):
        s2s.NoSuchThing   # noqa: B018


# ---- a reverse-the-sequence model with attention ---------------------------------------------

VOCAB, LEN, GO, EOS = 8, 5, 8, 9     # tokens 0..7; GO and EOS extra ids of the target side


def _reverse_batch(rng, n):
    src = rng.integers(0, VOCAB, (n, LEN)).astype(np.int32)
    tgt = src[:, ::-1]
    return src, np.concatenate([np.full((n, 1), GO, np.int32), tgt], 1), \
        np.concatenate([tgt, np.full((n, 1), EOS, np.int32)], 1)


def _encoder(batch, beam=1):
    """The source placeholder, the encoder's outputs, state and lengths (tiled beam times),
    the decoder's embedding."""
    src = tf.placeholder(tf.int32, [batch, LEN], name="src")
    src_len = tf.fill([batch], LEN)
    enc_emb = tf.get_variable("enc_embedding", [VOCAB, 8])
    dec_emb = tf.get_variable("dec_embedding", [VOCAB + 2, 8])
    with tf.variable_scope("encoder"):
        enc_out, enc_state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(16),
                                               tf.nn.embedding_lookup(enc_emb, src),
                                               sequence_length=src_len, dtype=tf.float32)
    if beam > 1:
        enc_out, enc_state, src_len = s2s.tile_batch((enc_out, enc_state, src_len), beam)
    return src, enc_out, enc_state, src_len, dec_emb


def _attention_cell(batch, enc_out, enc_state, src_len):
    mech = s2s.BahdanauAttention(16, enc_out, src_len)
    cell = s2s.AttentionWrapper(tf.nn.rnn_cell.GRUCell(16), mech, attention_layer_size=16)
    init = cell.zero_state(batch, tf.float32).clone(cell_state=enc_state)
    return cell, init, tf.layers.Dense(VOCAB + 2, use_bias=False, name="output_projection")


def _model(batch):
    src, enc_out, enc_state, src_len, dec_emb = _encoder(batch)
    tgt_in = tf.placeholder(tf.int32, [batch, LEN + 1], name="tgt_in")
    tgt_out = tf.placeholder(tf.int32, [batch, LEN + 1], name="tgt_out")
    with tf.variable_scope("decoder") as scope:
        cell, init, proj = _attention_cell(batch, enc_out, enc_state, src_len)
        helper = s2s.TrainingHelper(tf.nn.embedding_lookup(dec_emb, tgt_in),
                                    tf.fill([batch], LEN + 1))
        out, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(cell, helper, init, proj),
                                       scope=scope)
        loss = s2s.sequence_loss(out.rnn_output, tgt_out, tf.ones([batch, LEN + 1]))
        train = tf.train.AdamOptimizer(0.02).minimize(loss)
        greedy = s2s.GreedyEmbeddingHelper(dec_emb, tf.fill([batch], GO), EOS)
        inf_out, _, inf_len = s2s.dynamic_decode(
            s2s.BasicDecoder(cell, greedy, init, proj), maximum_iterations=LEN + 1,
            scope=scope)
    return (src, tgt_in, tgt_out), loss, train, inf_out.sample_id, inf_len


def _beam_search_model(batch, beam):
    """The inference graph of the NMT tutorial: the encoder's outputs tiled, beam search."""
    src, enc_out, enc_state, src_len, dec_emb = _encoder(batch, beam)
    with tf.variable_scope("decoder") as scope:
        cell, init, proj = _attention_cell(batch * beam, enc_out, enc_state, src_len)
        decoder = s2s.BeamSearchDecoder(cell, dec_emb, tf.fill([batch], GO), EOS, init, beam,
                                        proj, length_penalty_weight=0.2)
        out, _, _ = s2s.dynamic_decode(decoder, maximum_iterations=LEN + 1, scope=scope)
    return src, out.predicted_ids


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_reverse_sequence_with_attention_learns(xla, tmp_path):
    """Trained with teacher forcing, decoded greedily; compiled, also restored into the
    beam-search inference graph (as the NMT tutorial's inference model)."""
    rng = np.random.default_rng(0)
    tf.set_random_seed(5)
    (src, tgt_in, tgt_out), loss, train, ids, lengths = _model(32)
    names = [v.name for v in tf.trainable_variables()]
    assert "decoder/memory_layer/kernel:0" in names
    assert "decoder/attention_wrapper/bahdanau_attention/attention_v:0" in names
    assert "decoder/attention_wrapper/attention_layer/kernel:0" in names
    assert "decoder/output_projection/kernel:0" in names
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    feed = dict(zip((src, tgt_in, tgt_out), _reverse_batch(rng, 32)))
    if xla:
        summary = all_compiled(sess, [loss, train], feed)
        assert "While" in summary and "WhileGrad" in summary and "ApplyAdam" in summary
    first = sess.run(loss, feed)
    for _ in range(300):
        feed = dict(zip((src, tgt_in, tgt_out), _reverse_batch(rng, 32)))
        last, _ = sess.run([loss, train], feed)
    s, _, t_out = _reverse_batch(rng, 32)
    got, n = sess.run([ids, lengths], {src: s})
    assert last < first / 5, (first, last)
    accuracy = (got[:, :LEN] == t_out[:, :LEN]).mean()
    assert accuracy > 0.9, accuracy
    assert (n == LEN + 1).mean() > 0.8   # stops after emitting EOS
    if not xla:
        return
    path = tf.train.Saver(tf.trainable_variables()).save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        src, predicted = _beam_search_model(32, 3)
        infer = tf.Session(config=jit_config())
        tf.train.Saver().restore(infer, path)
        assert "While" in all_compiled(infer, predicted, {src: s})
        beams = infer.run(predicted, {src: s})
    assert beams.shape == (32, LEN + 1, 3)
    assert (beams[:, :LEN, 0] == t_out[:, :LEN]).mean() > 0.9
    assert (beams[:, LEN, 0] == EOS).mean() > 0.8
