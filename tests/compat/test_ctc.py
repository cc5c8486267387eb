"""tf.nn.ctc_loss against a brute-force sum over every alignment and an independent NumPy
forward algorithm, its gradient numerically, in the executor and compiled (one cluster
holding the forward While and its gradient); the greedy and beam-search decoders against
NumPy references."""

import itertools

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .conftest import jit_config
from .helpers import all_compiled, assert_close, single_cluster

R = np.random.default_rng(5)


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _decode_path(path, blank, merge):
    out, prev = [], -1
    for k in path:
        if k != blank and not (merge and k == prev):
            out.append(k)
        prev = k
    return out


def brute_force(x, label, n, merge=True):
    """-log of the total probability of the paths over n steps that decode to label."""
    lp = _log_softmax(x[:n].astype(np.float64))
    c = x.shape[-1]
    total = -np.inf
    for path in itertools.product(range(c), repeat=n):
        if _decode_path(path, c - 1, merge) == list(label):
            total = np.logaddexp(total, sum(lp[t, k] for t, k in enumerate(path)))
    return -total


def numpy_forward(x, label, n):
    """Graves' alpha recursion in probability space (float64), per-step rescaled."""
    p = np.exp(_log_softmax(x[:n].astype(np.float64)))
    blank = x.shape[-1] - 1
    ext = [blank]
    for k in label:
        ext += [k, blank]
    s = len(ext)
    alpha = np.zeros(s)
    alpha[0] = p[0, blank]
    if s > 1:
        alpha[1] = p[0, ext[1]]
    log_scale = 0.0
    for t in range(1, n):
        new = np.zeros(s)
        for i in range(s):
            a = alpha[i] + (alpha[i - 1] if i else 0)
            if i >= 2 and ext[i] != blank and ext[i] != ext[i - 2]:
                a += alpha[i - 2]
            new[i] = a * p[t, ext[i]]
        c = new.sum()
        log_scale += np.log(c)
        alpha = new / c
    return -(np.log(alpha[-1] + (alpha[-2] if s > 1 else 0)) + log_scale)


def _sparse(labels):
    idx = [(b, i) for b, lab in enumerate(labels) for i in range(len(lab))]
    vals = [v for lab in labels for v in lab]
    width = max(len(lab) for lab in labels)
    return tf.SparseTensor(np.asarray(idx, np.int64).reshape(-1, 2), np.asarray(vals, np.int32),
                           np.asarray([len(labels), width], np.int64))


def _loss_graph(x_val, labels, seq, **kw):
    x = tf.placeholder(tf.float32, x_val.shape)
    loss = tf.nn.ctc_loss(_sparse(labels), x, seq, **kw)
    grad = tf.gradients(tf.reduce_sum(loss), x)[0]
    return x, loss, grad


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_ctc_loss_against_brute_force_and_numerical_gradient(xla):
    steps, classes = 4, 3
    labels = [[0, 1], [1, 1], [0], [1, 0, 1]]     # a repeat needs a blank between; 3 labels
    seq = np.array([4, 4, 2, 4], np.int32)       # need 4 steps ("1 0 1" in 4 steps ok)
    xv = R.standard_normal((steps, len(labels), classes)).astype(np.float32)
    x, loss, grad = _loss_graph(xv, labels, seq)
    sess = tf.Session(config=jit_config() if xla else None)
    if xla:
        summary = single_cluster(sess, [loss, grad], {x: xv})
        all_compiled(sess, [loss, grad], {x: xv})
        assert "While" in summary and "WhileGrad" in summary
    got, g = sess.run([loss, grad], {x: xv})
    want = [brute_force(xv[:, b], lab, seq[b]) for b, lab in enumerate(labels)]
    assert_close(got, np.asarray(want, np.float32), rtol=1e-5, atol=1e-5)
    eps, num = 1e-2, np.zeros_like(xv, dtype=np.float64)
    for i in np.ndindex(xv.shape):
        hi, lo = xv.copy(), xv.copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = (sess.run(loss, {x: hi}).astype(np.float64).sum()
                  - sess.run(loss, {x: lo}).astype(np.float64).sum()) / (2 * eps)
    assert_close(g, num.astype(np.float32), rtol=2e-2, atol=2e-3)
    assert np.all(g[2:, 2] == 0)    # steps past a sequence's length get no gradient
    # the gradient is TF's softmax - posterior: it sums to zero over the classes
    assert_close(g.sum(-1), np.zeros(g.shape[:2], np.float32), atol=1e-5)


def test_ctc_loss_against_numpy_forward_larger_batch_major():
    steps, batch, classes = 12, 5, 6
    xv = R.standard_normal((batch, steps, classes)).astype(np.float32) * 2
    labels = [list(R.integers(0, classes - 1, R.integers(1, 5))) for _ in range(batch)]
    labels[0] = [2, 2, 2]
    seq = np.array([12, 9, 12, 7, 10], np.int32)
    x, loss, _ = _loss_graph(xv, labels, seq, time_major=False)
    got = tf.Session().run(loss, {x: xv})
    want = [numpy_forward(xv[b], lab, seq[b]) for b, lab in enumerate(labels)]
    assert_close(got, np.asarray(want, np.float32), rtol=1e-5, atol=1e-4)


def test_ctc_loss_options():
    steps, classes = 3, 3
    xv = R.standard_normal((steps, 3, classes)).astype(np.float32)
    labels = [[1, 1], [0, 0], [0, 1]]
    seq = np.array([3, 3, 3], np.int32)
    x1, merged_off, _ = _loss_graph(xv, labels, seq, ctc_merge_repeated=False)
    x2, collapsed, _ = _loss_graph(xv, labels, seq, preprocess_collapse_repeated=True)
    a, b = tf.Session().run([merged_off, collapsed], {x1: xv, x2: xv})
    # without merging, "1 1" is emitted by two 1s in a row: every path decodes unmerged
    want_a = [brute_force(xv[:, i], lab, 3, merge=False) for i, lab in enumerate(labels)]
    assert_close(a, np.asarray(want_a, np.float32), rtol=1e-5, atol=1e-5)
    # collapsing the labels first: "1 1" becomes "1"
    want_b = [brute_force(xv[:, i], lab, 3) for i, lab in enumerate([[1], [0], [0, 1]])]
    assert_close(b, np.asarray(want_b, np.float32), rtol=1e-5, atol=1e-5)
    # a label sequence that no alignment fits: +inf, or 0 (and no gradient) when ignored
    long_labels = [[0, 0, 0], [1], [0]]
    x1, l1, _ = _loss_graph(xv, long_labels, seq)
    x2, l2, g2 = _loss_graph(xv, long_labels, seq, ignore_longer_outputs_than_inputs=True)
    with tf.Session() as sess:
        v1, v2, gv = sess.run([l1, l2, g2], {x1: xv, x2: xv})
    assert np.isinf(v1[0]) and v2[0] == 0 and np.all(gv[:, 0] == 0)
    assert_close(v1[1:], v2[1:]) and np.isfinite(v1[1:]).all()
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.nn.ctc_loss(tf.constant([[1]]), tf.zeros([2, 1, 3]), [2])


def _best_paths(lp, merge):
    """(decoded sequence, log probability) of every path, summed per decoded sequence."""
    c = lp.shape[-1]
    probs: dict = {}
    for path in itertools.product(range(c), repeat=lp.shape[0]):
        key = tuple(_decode_path(path, c - 1, True))
        probs[key] = np.logaddexp(probs.get(key, -np.inf),
                                  sum(lp[t, k] for t, k in enumerate(path)))
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])
    if merge:
        ranked = [(tuple(_decode_path(k, c - 1, True)), v) for k, v in ranked]
    return ranked


def _dense(sp):
    out = np.full(sp.dense_shape, -1, np.int64)
    for (b, i), v in zip(sp.indices, sp.values):
        out[b, i] = v
    return out


def test_greedy_and_beam_search_decoders():
    steps, batch, classes = 4, 3, 3
    xv = R.standard_normal((steps, batch, classes)).astype(np.float32) * 2
    seq = np.array([4, 3, 4], np.int32)
    x = tf.placeholder(tf.float32, [steps, batch, classes])
    (greedy,), neg_sum = tf.nn.ctc_greedy_decoder(x, seq)
    (unmerged,), _ = tf.nn.ctc_greedy_decoder(x, seq, merge_repeated=False)
    beams, logp = tf.nn.ctc_beam_search_decoder(x, seq, beam_width=50, top_paths=2,
                                                merge_repeated=False)
    sess = tf.Session(config=jit_config())
    g, ns, um, b0, b1, lp = sess.run([greedy, neg_sum, unmerged, beams[0], beams[1], logp],
                                     {x: xv})
    assert g.indices.dtype == np.int64 and g.dense_shape.dtype == np.int64
    dense_g, dense_um = _dense(g), _dense(um)
    for b in range(batch):
        best = np.argmax(xv[:seq[b], b], -1)
        assert list(dense_g[b][dense_g[b] >= 0]) == _decode_path(best, classes - 1, True)
        assert list(dense_um[b][dense_um[b] >= 0]) == _decode_path(best, classes - 1, False)
        assert_close(ns[b, 0], -xv[np.arange(seq[b]), b, best].sum(), rtol=1e-5)
        # exact search with a beam wider than every prefix: the two most likely labelings
        ranked = _best_paths(_log_softmax(xv[:seq[b], b].astype(np.float64)), merge=False)
        for k, got in enumerate((_dense(b0), _dense(b1))):
            assert tuple(got[b][got[b] >= 0]) == ranked[k][0]
            assert_close(lp[b, k], np.float32(ranked[k][1]), rtol=1e-5)
    assert lp.shape == (batch, 2) and np.all(lp[:, 0] >= lp[:, 1])
