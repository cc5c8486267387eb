"""tf.contrib.seq2seq.BeamSearchDecoder and gather_tree against NumPy re-implementations of
TF's beam search step and GatherTree kernel, with beam_width 1 giving greedy decoding, in
the executor and compiled."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .conftest import jit_config
from .helpers import all_compiled, assert_close
from .test_seq2seq import gru_ref

R = np.random.default_rng(12)
s2s = tf.contrib.seq2seq


def gather_tree_ref(step_ids, parent_ids, lengths, end):
    steps, batch, beam = step_ids.shape
    out = np.full_like(step_ids, end)
    for b in range(batch):
        for k in range(beam):
            n = min(steps, int(lengths[b]))
            if n <= 0:
                continue
            out[n - 1, b, k] = step_ids[n - 1, b, k]
            parent = parent_ids[n - 1, b, k]
            for t in range(n - 2, -1, -1):
                out[t, b, k] = step_ids[t, b, parent]
                parent = parent_ids[t, b, parent]
            done = False
            for t in range(n):
                if done:
                    out[t, b, k] = end
                elif out[t, b, k] == end:
                    done = True
    return out


def test_gather_tree_against_numpy():
    steps, batch, beam, end = 6, 4, 3, 9
    ids = R.integers(0, 10, (steps, batch, beam)).astype(np.int32)
    parents = R.integers(0, beam, (steps, batch, beam)).astype(np.int32)
    lengths = np.array([6, 3, 0, 9], np.int32)
    out = s2s.gather_tree(ids, parents, lengths, end)
    for cfg in (None, jit_config()):
        sess = tf.Session(config=cfg)
        if cfg is not None:
            all_compiled(sess, out, None)
        got = sess.run(out)
        np.testing.assert_array_equal(got, gather_tree_ref(ids, parents, lengths, end))


def log_softmax(a):
    a = a - a.max(-1, keepdims=True)
    return a - np.log(np.exp(a).sum(-1, keepdims=True))


def beam_search_ref(vs, start, end, beam, steps, penalty):
    """TF's _beam_search_step in NumPy, step by step: (ids, parents, scores, lengths)."""
    emb, k, bias = vs["emb:0"], vs["dec/dense/kernel:0"], vs["dec/dense/bias:0"]
    batch, vocab = len(start), k.shape[1]
    h = np.zeros((batch, beam, k.shape[0]), np.float32)
    log_probs = np.where(np.arange(beam) == 0, 0.0, -np.inf)[None].repeat(batch, 0)
    finished = np.arange(beam)[None].repeat(batch, 0) != 0
    lengths = np.zeros((batch, beam), np.int64)
    ids = np.repeat(np.asarray(start)[:, None], beam, 1)
    out = []
    for _ in range(steps):
        h = gru_ref(emb[ids].reshape(batch * beam, -1), h.reshape(batch * beam, -1), vs,
                    "dec/gru_cell/").reshape(batch, beam, -1)
        lp = log_softmax(h @ k + bias)
        eos_row = np.where(np.arange(vocab) == end, 0.0, np.finfo(np.float32).min)
        lp = np.where(finished[..., None], eos_row, lp)
        total = log_probs[..., None] + lp
        new_len = lengths[..., None] + np.where(np.arange(vocab) == end, 0, 1) * \
            (~finished)[..., None]
        scores = total / (((5.0 + new_len) / 6.0) ** penalty)
        flat = scores.reshape(batch, -1)
        top = np.argsort(-flat, axis=1, kind="stable")[:, :beam]
        parents, words = top // vocab, (top % vocab).astype(np.int32)
        rows = np.arange(batch)[:, None]
        log_probs = total.reshape(batch, -1)[rows, top]
        prev_fin = finished[rows, parents]
        finished = prev_fin | (words == end)
        lengths = lengths[rows, parents] + ~prev_fin
        h = h[rows, parents]
        out.append((words, parents, flat[rows, top]))
        ids = words
        if finished.all():
            break
    return [np.stack(x) for x in zip(*out)], lengths


@pytest.mark.parametrize("xla,penalty", [(False, 0.6), (True, 0.0)],
                         ids=["executor-length_penalty", "xla"])
def test_beam_search_decoder_against_numpy(xla, penalty):
    batch, vocab, beam, steps, end = 3, 7, 3, 6, 4
    tf.set_random_seed(3)
    emb = tf.get_variable("emb", [vocab, 3])
    cell = tf.nn.rnn_cell.GRUCell(5)
    start = np.array([0, 1, 2], np.int32)
    with tf.variable_scope("dec") as scope:
        proj = tf.layers.Dense(vocab)
        greedy, _, _ = s2s.dynamic_decode(s2s.BasicDecoder(
            cell, s2s.GreedyEmbeddingHelper(emb, start, end), cell.zero_state(batch, tf.float32),
            proj), maximum_iterations=steps, scope=scope)
        one, _, _ = s2s.dynamic_decode(s2s.BeamSearchDecoder(
            cell, emb, start, end, s2s.tile_batch(cell.zero_state(batch, tf.float32), 1), 1,
            proj), maximum_iterations=steps, scope=scope)
        decoder = s2s.BeamSearchDecoder(
            cell, emb, start, end, s2s.tile_batch(cell.zero_state(batch, tf.float32), beam),
            beam, proj, length_penalty_weight=penalty)
        out, state, final_lengths = s2s.dynamic_decode(decoder, maximum_iterations=steps,
                                                       scope=scope)
    assert isinstance(out, s2s.FinalBeamSearchDecoderOutput)
    assert isinstance(state, s2s.BeamSearchDecoderState)
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    if xla:
        all_compiled(sess, [greedy, one, out, state], None)
    g, o1, o, st, fl = sess.run([greedy.sample_id, one.predicted_ids, out, state,
                                 final_lengths])
    vs = sess.run({v.name: v for v in tf.global_variables()})
    # beam width 1 is greedy decoding (up to its first end token)
    for b in range(batch):
        stop = list(g[b]).index(end) + 1 if end in g[b] else steps
        np.testing.assert_array_equal(o1[b, :stop, 0], g[b, :stop])
    (words, parents, scores), lengths = beam_search_ref(vs, start, end, beam, steps, penalty)
    bso = o.beam_search_decoder_output
    np.testing.assert_array_equal(bso.predicted_ids, words.transpose(1, 0, 2))
    np.testing.assert_array_equal(bso.parent_ids, parents.transpose(1, 0, 2))
    assert_close(bso.scores, scores.transpose(1, 0, 2).astype(np.float32), rtol=1e-4,
                 atol=1e-5)
    np.testing.assert_array_equal(st.lengths, lengths)
    np.testing.assert_array_equal(fl, lengths)
    assert penalty or (lengths < steps).any()   # beams that finished early, then masked
    want = gather_tree_ref(words, parents, lengths.max(1), end).transpose(1, 0, 2)
    np.testing.assert_array_equal(o.predicted_ids, want)
