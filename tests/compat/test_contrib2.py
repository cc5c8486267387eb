"""tf.contrib.crf, contrib.slim's learning / evaluation / metrics / variables,
contrib.rnn's LayerNormBasicLSTMCell and stacked bidirectional RNNs, contrib.losses,
contrib.util and contrib.predictor: values against NumPy references (brute-force
enumeration for the CRF), executor and XLA."""

import itertools

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .conftest import jit_config
from .helpers import assert_close, single_cluster

R = np.random.default_rng(5)
crf = tf.contrib.crf


# ---- contrib.crf ----------------------------------------------------------------------------

def _crf_case(b=4, t=4, n=3, lens=(4, 2, 1, 0)):
    x = R.standard_normal((b, t, n)).astype(np.float32)
    tr = R.standard_normal((n, n)).astype(np.float32)
    tags = R.integers(0, n, (b, t)).astype(np.int32)
    return x, tr, tags, np.array(lens, np.int32)


def _seq_score(x, tags, length, tr):
    return sum(x[t, tags[t]] for t in range(length)) + \
        sum(tr[tags[t - 1], tags[t]] for t in range(1, length))


def _all_paths(x, length, tr):
    n = x.shape[1]
    return [(_seq_score(x, p, length, tr), p)
            for p in itertools.product(range(n), repeat=length)]


def _log_norm(x, length, tr):
    if length == 0:
        return 0.0
    s = np.array([v for v, _ in _all_paths(x, length, tr)], np.float64)
    return float(np.log(np.exp(s - s.max()).sum()) + s.max())


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_crf_log_likelihood_against_enumeration(xla):
    x, tr, tags, lens = _crf_case()
    g = tf.Graph()
    with g.as_default():
        xp = tf.placeholder(tf.float32, x.shape)
        ll, trans = crf.crf_log_likelihood(xp, tf.constant(tags), tf.constant(lens))
        assert trans.op.name == "transitions" and trans.shape.as_list() == [3, 3]
        fetch = [ll, crf.crf_sequence_score(xp, tags, lens, trans),
                 crf.crf_log_norm(xp, lens, trans), crf.crf_unary_score(tags, lens, xp),
                 crf.crf_binary_score(tags, lens, trans)]
        sess = tf.Session(graph=g, config=jit_config() if xla else None)
        sess.run(trans.assign(tr))
        got = sess.run(fetch, {xp: x})
    score = [_seq_score(x[b], tags[b], lens[b], tr) for b in range(4)]
    norm = [_log_norm(x[b], lens[b], tr) for b in range(4)]
    unary = [sum(x[b, t, tags[b, t]] for t in range(lens[b])) for b in range(4)]
    want = [np.subtract(score, norm), score, norm, unary, np.subtract(score, unary)]
    assert_close(got, [np.asarray(w, np.float32) for w in want], rtol=1e-5, atol=1e-5)


def test_crf_single_step_and_multitag_score():
    x, tr, tags, lens = _crf_case(3, 1, 4, (1, 1, 0))
    bitmap = R.random((3, 3, 4)) < 0.6
    bitmap[..., 0] = True
    x3, tr3, _, lens3 = _crf_case(3, 3, 4, (3, 2, 1))
    with tf.Session() as s:
        ll, _ = crf.crf_log_likelihood(tf.constant(x), tf.constant(tags), tf.constant(lens),
                                       tf.constant(tr))
        multi = crf.crf_multitag_sequence_score(tf.constant(x3), tf.constant(bitmap),
                                                tf.constant(lens3), tf.constant(tr3))
        dec, best = crf.crf_decode(tf.constant(x), tf.constant(tr), tf.constant(lens))
        got_ll, got_multi, got_dec, got_best = s.run([ll, multi, dec, best])
    want = [0.0 if n == 0 else x[b, 0, tags[b, 0]] - np.log(np.exp(x[b, 0]).sum())
            for b, n in enumerate(lens)]
    assert_close(got_ll, np.float32(want), rtol=1e-5, atol=1e-6)
    assert_close(got_dec, x[:, 0].argmax(-1)[:, None].astype(np.int32))
    assert_close(got_best, x[:, 0].max(-1))
    for b in range(3):
        s = [v for v, p in _all_paths(x3[b], lens3[b], tr3)
             if all(bitmap[b, t, p[t]] for t in range(lens3[b]))]
        assert abs(got_multi[b] - np.log(np.exp(s).sum())) < 1e-4


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_crf_decode_matches_viterbi_and_enumeration(xla):
    x, tr, _, lens = _crf_case(5, 5, 4, (5, 3, 1, 4, 2))
    g = tf.Graph()
    with g.as_default():
        xp = tf.placeholder(tf.float32, x.shape)
        dec, best = crf.crf_decode(xp, tf.constant(tr), tf.constant(lens))
        sess = tf.Session(graph=g, config=jit_config() if xla else None)
        got_dec, got_best = sess.run([dec, best], {xp: x})
    assert got_dec.dtype == np.int32 and got_dec.shape == (5, 5)
    for b in range(5):
        n = lens[b]
        best_score, best_path = max(_all_paths(x[b], n, tr))
        path, vscore = crf.viterbi_decode(x[b, :n], tr)
        assert list(path) == list(best_path)
        assert abs(vscore - best_score) < 1e-4 and abs(got_best[b] - best_score) < 1e-4
        assert list(got_dec[b, :n]) == list(best_path)
        assert not got_dec[b, n:].any()  # zeros past the length


def _tagging_data(n=24, t=7, vocab=9):
    ids = R.integers(1, vocab, (n, t)).astype(np.int32)
    lens = R.integers(3, t + 1, n).astype(np.int32)
    prev = np.concatenate([np.zeros((n, 1), np.int32), ids[:, :-1]], 1)
    tags = ((ids + (prev % 2)) % 3).astype(np.int32)  # depends on the previous word
    mask = np.arange(t)[None] < lens[:, None]
    return np.where(mask, ids, 0), np.where(mask, tags, 0), lens, mask


def test_bilstm_crf_tagger_trains_executor_and_xla():
    """A BiLSTM-CRF named-entity-style tagger: the training step (the LSTMs' and the
    forward algorithm's while loops and their gradients) is one XLA cluster, and both
    runs learn the tags."""
    ids, tags, lens, mask = _tagging_data()
    accs = []
    for cfg in (None, jit_config()):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            w = tf.placeholder(tf.int32, [None, 7])
            y = tf.placeholder(tf.int32, [None, 7])
            n = tf.placeholder(tf.int32, [None])
            emb = tf.get_variable("emb", [9, 8])
            (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.LSTMCell(8), tf.nn.rnn_cell.LSTMCell(8),
                tf.nn.embedding_lookup(emb, w), sequence_length=n, dtype=tf.float32)
            logits = tf.layers.dense(tf.concat([fw, bw], -1), 3)
            ll, trans = crf.crf_log_likelihood(logits, y, n)
            loss = tf.reduce_mean(-ll)
            train = tf.train.AdamOptimizer(0.05).minimize(loss)
            pred, _ = crf.crf_decode(logits, trans, n)
            sess = tf.Session(graph=g, config=cfg)
            sess.run(tf.global_variables_initializer())
            feed = {w: ids, y: tags, n: lens}
            if cfg is not None:
                single_cluster(sess, train, feed)
            first = sess.run(loss, feed)
            for _ in range(40):
                sess.run(train, feed)
            assert sess.run(loss, feed) < 0.2 * first
            accs.append((sess.run(pred, feed) == tags)[mask].mean())
    assert min(accs) > 0.95, accs
