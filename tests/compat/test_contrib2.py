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


# ---- contrib.losses, contrib.util, contrib.framework ------------------------------------------

def test_contrib_losses_old_argument_orders():
    p = R.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
    lab = (R.random((4, 3)) < 0.5).astype(np.float32)
    w = np.array([[1.0], [0.0], [2.0], [1.0]], np.float32)
    logits = R.standard_normal((4, 3)).astype(np.float32)
    sparse = np.array([0, 2, 1, 1], np.int32)
    L = tf.contrib.losses
    fetch = [L.mean_squared_error(p, lab, w), L.absolute_difference(p, lab),
             L.log_loss(p, lab), L.sigmoid_cross_entropy(logits, lab),
             L.softmax_cross_entropy(logits, np.eye(3, dtype=np.float32)[sparse]),
             L.sparse_softmax_cross_entropy(logits, sparse), L.hinge_loss(logits, lab)]
    assert len(L.get_losses()) == 6  # hinge_loss is not collected
    total = L.get_total_loss()
    with tf.Session() as s:
        got = s.run(fetch + [total])
    lsm = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    want = [((p - lab) ** 2 * w).sum() / (3 * 3), np.abs(p - lab).mean(),
            -(lab * np.log(p + 1e-7) + (1 - lab) * np.log(1 - p + 1e-7)).mean(),
            (np.maximum(logits, 0) - logits * lab + np.log1p(np.exp(-abs(logits)))).mean(),
            -lsm[range(4), sparse].mean(), -lsm[range(4), sparse].mean(),
            np.maximum(0, 1 - (2 * lab - 1) * logits)]
    want.append(sum(want[:6]))
    assert_close(got, [np.float32(v) for v in want], rtol=1e-5, atol=1e-6)


def test_contrib_util_and_framework_helpers():
    c = tf.constant([[1, 2], [3, 4]], tf.int32)
    proto = tf.contrib.util.make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert_close(tf.contrib.util.make_ndarray(proto), np.arange(6, dtype=np.float32)
                 .reshape(2, 3))
    assert_close(tf.contrib.util.constant_value(c), np.array([[1, 2], [3, 4]], np.int32))
    assert_close(tf.contrib.util.constant_value(tf.shape(c)), np.array([2, 2], np.int32))
    assert tf.contrib.util.constant_value(tf.placeholder(tf.float32) * 2.0) is None
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            assert tf.contrib.framework.get_name_scope() == "outer/inner"
    assert tf.contrib.framework.nest.flatten({"a": (1, 2), "b": 3}) == [1, 2, 3]


def test_slim_variables_collections_device_regularizer():
    slim = tf.contrib.slim
    with tf.variable_scope("net"):
        w = slim.model_variable("w", [3, 2], initializer=tf.ones_initializer(),
                                regularizer=slim.l2_regularizer(0.5), device="/cpu:0")
        v = slim.variable("v", [2], collections=["mine"], trainable=False)
        with slim.arg_scope([slim.variable], device="/cpu:0"):
            u = slim.variable("u", [1])
    assert w.op.name == "net/w" and w.device.endswith("CPU:0")
    assert u.device.endswith("CPU:0")
    assert w in tf.model_variables() and w in tf.global_variables() and \
        w in tf.trainable_variables()
    assert v in tf.get_collection("mine") and v not in tf.global_variables() and \
        v not in tf.trainable_variables()
    (reg,) = tf.losses.get_regularization_losses()
    oh = slim.one_hot_encoding(tf.constant([2, 0]), 3)
    with tf.Session() as s:
        s.run(tf.variables_initializer([w]))
        assert s.run(reg) == pytest.approx(0.5 * 6 / 2)
        assert_close(s.run(oh), np.eye(3, dtype=np.float32)[[2, 0]])
    size, nbytes = slim.model_analyzer.analyze_vars([w, v, u], print_info=True)
    assert (size, nbytes) == (9, 36)


# ---- contrib.metrics (slim.metrics) ---------------------------------------------------------

def test_streaming_metrics_prediction_first_and_aggregation():
    M = tf.contrib.metrics
    pred = tf.placeholder(tf.float32, [None])
    lab = tf.placeholder(tf.float32, [None])
    values, updates = M.aggregate_metric_map({
        "acc": M.streaming_accuracy(tf.round(pred), lab),
        # (identity: the session does not yet drop a control dependency on a fed
        # placeholder, which tf.metrics.mean takes on its float32 values)
        "mean": M.streaming_mean(tf.identity(pred)),
        "precision": M.streaming_precision(pred > 0.5, lab > 0.5),
        "recall": M.streaming_recall(pred > 0.5, lab > 0.5),
        "auc": M.streaming_auc(pred, lab, num_thresholds=1000),
        "mse": M.streaming_mean_squared_error(pred, lab),
        "mae": M.streaming_mean_absolute_error(pred, lab, weights=lab + 1.0)})
    vals, ups = M.aggregate_metrics(M.streaming_mean(lab), M.streaming_mean(pred))
    assert len(vals) == len(ups) == 2
    ps = R.random(40).astype(np.float32)
    ls = (R.random(40) < 0.5).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        for i in range(0, 40, 10):
            s.run(updates, {pred: ps[i:i + 10], lab: ls[i:i + 10]})
        got = s.run(values)
    hit, truth = ps > 0.5, ls > 0.5
    pos, neg = ps[truth], ps[~truth]
    want = {"acc": (np.round(ps) == ls).mean(), "mean": ps.mean(),
            "precision": (hit & truth).sum() / hit.sum(),
            "recall": (hit & truth).sum() / truth.sum(),
            "auc": (pos[:, None] > neg[None]).mean(), "mse": ((ps - ls) ** 2).mean(),
            "mae": (abs(ps - ls) * (ls + 1)).sum() / (ls + 1).sum()}
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=2e-3 if k == "auc" else 1e-5), k
    assert {v.op.name for v in tf.local_variables()} >= {"mean_absolute_error/total",
                                                         "accuracy/count"}


# ---- slim.learning, slim.evaluation ---------------------------------------------------------

def _linear_problem():
    xs = R.standard_normal((32, 3)).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return xs, ys


def test_create_train_op_multipliers_clipping_and_xla_cluster():
    xs, ys = _linear_problem()
    slim = tf.contrib.slim
    got = []
    for cfg in (None, jit_config()):
        g = tf.Graph()
        with g.as_default():
            x, y = tf.constant(xs), tf.constant(ys)
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            train = slim.learning.create_train_op(
                loss, tf.train.GradientDescentOptimizer(0.1), clip_gradient_norm=0.5,
                gradient_multipliers={"b": 0.0}, summarize_gradients=True)
            assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
            gw = tf.gradients(loss, w)[0]
            step = tf.train.get_global_step()
            sess = tf.Session(graph=g, config=cfg)
            sess.run(tf.global_variables_initializer())
            g0 = sess.run(gw)
            if cfg is not None:
                # (the loss's CheckNumerics is left to the executor, after the step)
                assert sess.cluster_summary(train).startswith("XLA clustering: 1 cluster")
            first = sess.run(train)
            got.append((first, sess.run(w), sess.run(b), sess.run(step)))
    for first, wv, bv, st in got:
        assert first == pytest.approx(float((ys ** 2).mean()), rel=1e-5)
        assert_close(wv, -0.1 * g0 * min(1.0, 0.5 / np.linalg.norm(g0)), rtol=1e-4,
                     atol=1e-6)
        assert bv[0] == 0.0 and st == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="inf or nan"):
        with tf.Graph().as_default():
            v = tf.get_variable("v", [], initializer=tf.zeros_initializer())
            op = tf.contrib.training.create_train_op(tf.log(v) * v,
                                                     tf.train.GradientDescentOptimizer(1.0))
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                s.run(op)


def test_slim_train_then_evaluate(tmp_path):
    xs, ys = _linear_problem()
    slim = tf.contrib.slim
    logdir = str(tmp_path / "train")
    with tf.Graph().as_default():
        x, y = tf.constant(xs), tf.constant(ys)
        pred = slim.fully_connected(x, 1, activation_fn=None, scope="fc")
        loss = slim.losses.mean_squared_error(y, pred)
        train_op = slim.learning.create_train_op(slim.losses.get_total_loss(),
                                                 tf.train.GradientDescentOptimizer(0.2))
        final = slim.learning.train(train_op, logdir, number_of_steps=60,
                                    log_every_n_steps=20, save_summaries_secs=0,
                                    save_interval_secs=0)
    assert final < 1e-3
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-60")
    # resumes from the checkpoint: the global step is already 60
    with tf.Graph().as_default():
        pred = slim.fully_connected(tf.constant(xs), 1, activation_fn=None, scope="fc")
        loss = tf.reduce_mean(tf.square(pred - ys))
        train_op = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.2))
        again = slim.learning.train(train_op, logdir, number_of_steps=61)
    assert again < 1e-3 and tf.train.latest_checkpoint(logdir).endswith("model.ckpt-61")
    with tf.Graph().as_default():
        xp = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(8)
        bx, by = tf.data.make_one_shot_iterator(xp).get_next()
        pred = slim.fully_connected(bx, 1, activation_fn=None, scope="fc")
        values, updates = slim.metrics.aggregate_metric_map({
            "mse": slim.metrics.streaming_mean_squared_error(pred, by),
            "mae": slim.metrics.streaming_mean_absolute_error(pred, by)})
        once = slim.evaluation.evaluate_once(
            "", tf.train.latest_checkpoint(logdir), str(tmp_path / "eval"), num_evals=4,
            eval_op=list(updates.values()), final_op=values)
        step = slim.evaluation.get_or_create_eval_step()
    assert once["mse"] < 1e-3 and once["mae"] < 3e-2
    with tf.Graph().as_default():
        pred = slim.fully_connected(tf.constant(xs), 1, activation_fn=None, scope="fc")
        value, update = slim.metrics.streaming_mean_squared_error(pred, ys)
        looped = slim.evaluation.evaluation_loop(
            "", logdir, None, num_evals=2, eval_op=update, final_op=value,
            eval_interval_secs=0, max_number_of_evaluations=1)
    assert looped == pytest.approx(once["mse"], rel=1e-4)
    del step


# ---- contrib.predictor ----------------------------------------------------------------------

def test_predictor_from_saved_model(tmp_path):
    export = str(tmp_path / "export")
    wv = R.standard_normal((3, 2)).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(wv, name="w")
        y = tf.nn.softmax(tf.matmul(x, w), name="y")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(s, export, {"inputs": x}, {"probs": y, "logits":
                                                                   tf.matmul(x, w)})
    predict = tf.contrib.predictor.from_saved_model(export)
    assert set(predict.feed_tensors) == {"inputs"}
    xs = R.standard_normal((4, 3)).astype(np.float32)
    out = predict({"inputs": xs})
    assert set(out) == {"probs", "logits"}
    assert_close(out["logits"], xs @ wv, rtol=1e-5, atol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Available signatures"):
        tf.contrib.predictor.from_saved_model(export, signature_def_key="nope")
    with pytest.raises(tf.errors.InvalidArgumentError, match="unexpected keys"):
        predict({"x": xs})


# ---- contrib.rnn ----------------------------------------------------------------------------

def _sig(v):
    return 1 / (1 + np.exp(-v))


def _ln(v, gain, shift):
    return (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-12) * \
        gain + shift


def _ln_lstm_ref(xs, kernel, n, gain, shift, forget_bias=1.0):
    b = xs.shape[0]
    c = h = np.zeros((b, n), np.float32)
    outs = []
    for t in range(xs.shape[1]):
        i, j, f, o = np.split(np.concatenate([xs[:, t], h], 1) @ kernel, 4, axis=1)
        i, j, f, o = (_ln(v, gain, shift) for v in (i, j, f, o))
        c = _ln(c * _sig(f + forget_bias) + _sig(i) * np.tanh(j), gain, shift)
        h = np.tanh(c) * _sig(o)
        outs.append(h)
    return np.stack(outs, 1), c, h


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_layer_norm_basic_lstm_cell(xla):
    xs = R.standard_normal((3, 4, 2)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3, 4, 2])
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(5, norm_gain=1.5, norm_shift=0.1)
        out, st = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        grads = tf.gradients(tf.reduce_sum(out), tf.trainable_variables())
        names = sorted(v.op.name for v in tf.global_variables())
        sess = tf.Session(graph=g, config=jit_config() if xla else None)
        sess.run(tf.global_variables_initializer())
        got, kernel = sess.run([[out, st.c, st.h], cell.variables[0]], {x: xs})
        assert all(np.isfinite(v).all() for v in sess.run(grads, {x: xs}))
    base = "rnn/layer_norm_basic_lstm_cell/"
    assert names == sorted([base + "kernel"] + [f"{base}{s}/{p}" for s in (
        "input", "transform", "forget", "output", "state") for p in ("gamma", "beta")])
    assert_close(got, _ln_lstm_ref(xs, kernel, 5, 1.5, 0.1), rtol=1e-4, atol=1e-5)
    with tf.Graph().as_default():
        plain = tf.contrib.rnn.LayerNormBasicLSTMCell(4, layer_norm=False)
        tf.nn.dynamic_rnn(plain, tf.zeros([2, 3, 2]), dtype=tf.float32)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "rnn/layer_norm_basic_lstm_cell/bias", "rnn/layer_norm_basic_lstm_cell/kernel"]


def test_stack_bidirectional_rnns_against_layered_bidirectional():
    xs = R.standard_normal((2, 5, 3)).astype(np.float32)
    lens = np.array([5, 3], np.int32)
    cells = lambda: [tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(2)]
    with tf.Graph().as_default():
        x = tf.constant(xs)
        out, sfw, sbw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
            cells(), cells(), x, sequence_length=lens, dtype=tf.float32)
        assert out.shape.as_list() == [2, 5, 4] and len(sfw) == len(sbw) == 2
        dyn_vars = [v for v in tf.global_variables()]
        names = {v.op.name for v in dyn_vars}
        assert "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel" \
            in names and \
            "stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/gru_cell/candidate/bias" \
            in names
        # the same layers by hand, with the same variables
        with tf.variable_scope("stack_bidirectional_rnn", reuse=True):
            prev = x
            for i in range(2):
                with tf.variable_scope(f"cell_{i}"):
                    (f, b), _ = tf.nn.bidirectional_dynamic_rnn(
                        tf.nn.rnn_cell.GRUCell(4 if i == 0 else 2, reuse=True),
                        tf.nn.rnn_cell.GRUCell(4 if i == 0 else 2, reuse=True), prev,
                        sequence_length=lens, dtype=tf.float32)
                    prev = tf.concat([f, b], 2)
        static_out, st_fw, _ = tf.contrib.rnn.stack_bidirectional_rnn(
            cells(), cells(), tf.unstack(x, axis=1), sequence_length=lens,
            dtype=tf.float32, scope="static")
        assert "static/cell_1/fw/gru_cell/gates/kernel" in \
            {v.op.name for v in tf.global_variables()}
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got, want, sf = s.run([out, prev, sfw[1]])
            assert_close(got, want, rtol=1e-5, atol=1e-6)
            assert_close(sf, got[[0, 1], [4, 2], :2], rtol=1e-5, atol=1e-6)
            assert len(static_out) == 5 and s.run(static_out[0]).shape == (2, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same depth"):
        tf.contrib.rnn.stack_bidirectional_dynamic_rnn(cells(), cells()[:1], tf.zeros([1, 2, 3]),
                                                       dtype=tf.float32)
