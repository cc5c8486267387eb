"""The rest of TF 1.x's tf.metrics and tf.losses.mean_pairwise_squared_error, against NumPy
references of TF's definitions: several update steps with weights, in the executor and
with every metric op placed on XLA_CPU; the value after the updates, the update op's value
at each step, and tf.local_variables_initializer() resetting the state."""

import contextlib

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close

R = np.random.default_rng(11)
N, C, STEPS = 12, 5, 3
LAB = [R.integers(0, C, N) for _ in range(STEPS)]
SCORES = [R.random((N, C)).astype(np.float32) for _ in range(STEPS)]
W = [R.random(N).astype(np.float32) * (R.random(N) > 0.2) for _ in range(STEPS)]
REG_L = [R.standard_normal((N, 3)).astype(np.float32) for _ in range(STEPS)]
REG_P = [R.standard_normal((N, 3)).astype(np.float32) for _ in range(STEPS)]
NORM = [np.where(R.random((N, 3)) > 0.3, R.random((N, 3)) + 0.5, 0).astype(np.float32)
        for _ in range(STEPS)]
TH = [0.0, 0.25, 0.5, 0.8]


def _run(build, feeds, xla):
    """build(placeholders) -> {name: (value, update_op)}; runs the updates over `feeds`
    (one dict per step), twice with the initializer between: returns the update values
    of each step and the final values (of the second round; both rounds must agree)."""
    g = tf.Graph()
    with g.as_default():
        ph = {k: tf.placeholder(tf.as_dtype(v.dtype), v.shape) for k, v in feeds[0].items()}
        with tf.device("/device:XLA_CPU:0") if xla else contextlib.nullcontext():
            m = build(ph)
        assert not tf.global_variables() and tf.local_variables()
        assert len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)) == \
            len(tf.local_variables())
        sess = tf.Session()
        rounds = []
        for _ in range(2):
            sess.run(tf.local_variables_initializer())
            ups = [sess.run({k: v[1] for k, v in m.items()},
                            {ph[k]: f[k] for k in f}) for f in feeds]
            rounds.append((ups, sess.run({k: v[0] for k, v in m.items()})))
    for a, b in zip(rounds[0][0] + [rounds[0][1]], rounds[1][0] + [rounds[1][1]]):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    return rounds[1]


def _check(got, want, rtol=1e-5, atol=1e-6):
    ups, vals = got
    for i, step in enumerate(want):
        for k, v in step.items():
            assert_close(ups[i][k], v, rtol, atol, f"{k} update {i}: ")
    for k, v in want[-1].items():
        if k.endswith("@up"):
            continue
        assert_close(vals[k], v, rtol, atol, f"{k} value: ")


def _cum(arrs, i):
    return np.concatenate(arrs[:i + 1])


# ---- means, counts, thresholds, confusion matrices ---------------------------------------

def _build_dense(ph):
    lab, s, w = ph["lab"], ph["s"], ph["w"]
    yl, yp, nrm = ph["yl"], ph["yp"], ph["nrm"]
    p = s[:, 0]
    bl = tf.equal(lab % 2, 0)
    cls = tf.argmax(s, 1)
    a = tf.nn.l2_normalize(yl, 1)
    b = tf.nn.l2_normalize(yp, 1)
    return {
        "mae": tf.metrics.mean_absolute_error(yl, yp),
        "mae_w": tf.metrics.mean_absolute_error(yl, yp, weights=w[:, None]),
        "rmse": tf.metrics.root_mean_squared_error(yl, yp, weights=w[:, None]),
        "mre": tf.metrics.mean_relative_error(yl, yp, nrm, weights=w[:, None]),
        "mcd": tf.metrics.mean_cosine_distance(a, b, 1, weights=w[:, None]),
        "below": tf.metrics.percentage_below(yp, 0.3, weights=w[:, None]),
        "mtensor": tf.metrics.mean_tensor(yp, weights=w[:, None]),
        "tp": tf.metrics.true_positives(bl, p > 0.5, weights=w),
        "fp": tf.metrics.false_positives(bl, p > 0.5),
        "tn": tf.metrics.true_negatives(bl, p > 0.5, weights=w),
        "fn": tf.metrics.false_negatives(bl, p > 0.5, weights=w),
        "tp_t": tf.metrics.true_positives_at_thresholds(bl, p, TH, weights=w),
        "fp_t": tf.metrics.false_positives_at_thresholds(bl, p, TH),
        "tn_t": tf.metrics.true_negatives_at_thresholds(bl, p, TH, weights=w),
        "fn_t": tf.metrics.false_negatives_at_thresholds(bl, p, TH),
        "prec_t": tf.metrics.precision_at_thresholds(bl, p, TH, weights=w),
        "rec_t": tf.metrics.recall_at_thresholds(bl, p, TH),
        "sens": tf.metrics.sensitivity_at_specificity(bl, p, 0.6, weights=w,
                                                      num_thresholds=11),
        "spec": tf.metrics.specificity_at_sensitivity(bl, p, 0.7, num_thresholds=11),
        "sens200": tf.metrics.sensitivity_at_specificity(bl, p, 0.5),
        "iou": tf.metrics.mean_iou(lab, cls, C, weights=w),
        "iou_unw": tf.metrics.mean_iou(tf.reshape(lab, [3, 4]), tf.reshape(cls, [3, 4]), C),
        "pca": tf.metrics.mean_per_class_accuracy(lab, cls, C, weights=w),
    }


def _thresholds(lab, p, w, th):
    th = np.asarray(th, np.float32)
    pos = p[None, :] > th[:, None]
    lab = lab[None, :]
    return {"tp": (w * (lab & pos)).sum(1, dtype=np.float32),
            "fn": (w * (lab & ~pos)).sum(1, dtype=np.float32),
            "tn": (w * (~lab & ~pos)).sum(1, dtype=np.float32),
            "fp": (w * (~lab & pos)).sum(1, dtype=np.float32)}


def _even(n):
    return [-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7]


def _cm(lab, pred, w):
    cm = np.zeros((C, C))
    np.add.at(cm, (lab, pred), w)
    return cm


def _want_dense(i):
    L, S, Wt = _cum(LAB, i), _cum(SCORES, i), _cum(W, i)
    YL, YP, NR = _cum(REG_L, i), _cum(REG_P, i), _cum(NORM, i)
    one = np.ones_like(Wt)
    p, bl, cls = S[:, 0], L % 2 == 0, S.argmax(1)
    w2 = np.broadcast_to(Wt[:, None], YL.shape)
    hp = p > 0.5
    rel = np.where(NR == 0, 0, np.abs(YL - YP) / np.where(NR == 0, 1, NR))
    a = YL / np.linalg.norm(YL, axis=1, keepdims=True)
    b = YP / np.linalg.norm(YP, axis=1, keepdims=True)
    out = {"mae": np.mean(np.abs(YL - YP)),
           "mae_w": (np.abs(YL - YP) * w2).sum() / w2.sum(),
           "rmse": np.sqrt(((YL - YP) ** 2 * w2).sum() / w2.sum()),
           "mre": (rel * w2).sum() / w2.sum(),
           "mcd": 1 - ((a * b).sum(1) * Wt).sum() / Wt.sum(),
           "below": ((YP < 0.3) * w2).sum() / w2.sum(),
           "tp": (Wt * (bl & hp)).sum(), "fp": np.sum(~bl & hp),
           "tn": (Wt * (~bl & ~hp)).sum(), "fn": (Wt * (bl & ~hp)).sum()}
    steps = [(REG_P[j], W[j]) for j in range(i + 1)]
    tot = sum(yp * w[:, None] for yp, w in steps)
    cnt = sum(np.broadcast_to(w[:, None], yp.shape) for yp, w in steps)
    out["mtensor"] = np.where(cnt > 0, tot / np.where(cnt > 0, cnt, 1), 0)
    t = _thresholds(bl, p, Wt, TH)
    t1 = _thresholds(bl, p, one, TH)
    out.update({"tp_t": t["tp"], "fp_t": t1["fp"], "tn_t": t["tn"], "fn_t": t1["fn"],
                "prec_t": t["tp"] / (np.float32(1e-7) + t["tp"] + t["fp"]),
                "rec_t": t1["tp"] / (np.float32(1e-7) + t1["tp"] + t1["fn"])})
    eps = np.float32(1e-7)
    for key, n, wts, target in (("sens", 11, Wt, 0.6), ("sens200", 200, one, 0.5)):
        c = _thresholds(bl, p, wts, _even(n))
        spec = c["tn"] / (c["tn"] + c["fp"] + eps)
        j = np.argmin(np.abs(spec - np.float32(target)))
        out[key] = c["tp"][j] / (c["tp"][j] + c["fn"][j] + eps)
    c = _thresholds(bl, p, one, _even(11))
    sens = c["tp"] / (c["tp"] + c["fn"] + eps)
    gap = np.abs(sens - np.float32(0.7))
    j = np.nonzero(gap == gap.min())[0][-1]
    out["spec"] = c["tn"][j] / (c["tn"][j] + c["fp"][j] + eps)
    for key, wts in (("iou", Wt), ("iou_unw", one)):
        cm = _cm(L, cls, wts)
        out[key + "@up"] = cm
        den = cm.sum(0) + cm.sum(1) - np.diag(cm)
        out[key] = np.sum(np.diag(cm)[den > 0] / den[den > 0]) / max((den > 0).sum(), 1)
    tot = np.zeros(C)
    cor = np.zeros(C)
    np.add.at(tot, L, Wt)
    np.add.at(cor, L, Wt * (cls == L))
    per_class = np.where(tot > 0, cor / np.where(tot > 0, tot, 1), 0)
    out["pca"], out["pca@up"] = per_class.mean(), per_class
    return {k: np.asarray(v, np.float64 if k.startswith("iou") and k.endswith("@up")
                          else np.float32) for k, v in out.items()}


@pytest.mark.parametrize("xla", [False, True])
def test_means_counts_thresholds_and_confusion_metrics(xla):
    feeds = [{"lab": LAB[i], "s": SCORES[i], "w": W[i], "yl": REG_L[i], "yp": REG_P[i],
              "nrm": NORM[i]} for i in range(STEPS)]
    ups, vals = _run(_build_dense, feeds, xla)
    for i in range(STEPS):
        want = _want_dense(i)
        for k, v in want.items():
            name, is_up = k.split("@")[0], k.endswith("@up")
            if not is_up and name + "@up" in want:
                continue   # update_op returns the state (mean_iou) or per-class values
            assert_close(ups[i][name], v, 1e-5, 2e-6, f"{k} update {i}: ")
    want = _want_dense(STEPS - 1)
    for k, v in want.items():
        if not k.endswith("@up"):
            assert_close(vals[k], v, 1e-5, 2e-6, f"{k} value: ")


def test_metric_variables_and_collections():
    lab = tf.constant([0, 1, 2, 1])
    pred = tf.constant([0, 2, 2, 1])
    v, up = tf.metrics.mean_iou(lab, pred, 3, metrics_collections=["m"],
                                updates_collections=["u"])
    assert tf.get_collection("m") == [v] and tf.get_collection("u") == [up]
    assert up.dtype == tf.float64 and up.shape.as_list() == [3, 3] and v.dtype == tf.float32
    tf.metrics.mean_per_class_accuracy(lab, pred, 3)
    tf.metrics.true_positives(lab > 0, pred > 0)
    tf.metrics.false_negatives_at_thresholds(lab > 0, tf.constant([0.1, 0.2, 0.3, 0.9]),
                                             [0.5])
    tf.metrics.precision_at_k(tf.constant([[0], [1], [2], [1]], tf.int64),
                              tf.one_hot(pred, 3), 2, class_id=1)
    tf.metrics.average_precision_at_k(tf.constant([0, 1, 2, 1], tf.int64),
                                      tf.one_hot(pred, 3), 2)
    tf.metrics.mean_tensor(tf.ones([2, 3]))
    names = sorted(x.op.name for x in tf.local_variables())
    assert names == sorted([
        "mean_iou/total_confusion_matrix", "mean_accuracy/total", "mean_accuracy/count",
        "true_positives/count", "false_negatives/false_negatives",
        "precision_at_2_class1/true_positive_at_2_class1",
        "precision_at_2_class1/false_positive_at_2_class1",
        "average_precision_at_2/max", "average_precision_at_2/total",
        "mean/total_tensor", "mean/count_tensor"]), names
    assert not tf.trainable_variables() and not tf.global_variables()
    sess = tf.Session()
    sess.run(tf.local_variables_initializer())
    assert_close(sess.run(up), np.array([[1, 0, 0], [0, 1, 1], [0, 0, 1]], np.float64))
    # 0: [1/1], 1: [1/2], 2: [1/2] -> (1 + 0.5 + 0.5) / 3
    assert_close(sess.run(v), np.float32(2 / 3))


def test_squeezable_dimensions():
    """labels [n, 1] against predictions [n] (and weights [n] against [n, 1]) are matched
    by dropping or adding the trailing dimension, as TF's _remove_squeezable_dimensions."""
    lab = np.array([[1.0], [0.0], [2.0]], np.float32)
    pred = np.array([0.5, 0.5, 1.0], np.float32)
    w = np.array([1.0, 2.0, 0.5], np.float32)
    mae = tf.metrics.mean_absolute_error(lab, pred, weights=w)
    mae2 = tf.metrics.mean_absolute_error(pred, lab, weights=w)
    tp = tf.metrics.true_positives(lab > 0.5, pred[:, None] > 0.7, weights=w)
    tpt = tf.metrics.true_positives_at_thresholds(lab > 0.5, pred, [0.4, 0.7],
                                                  weights=w[:, None])
    sess = tf.Session()
    sess.run(tf.local_variables_initializer())
    got = sess.run([mae[1], mae2[1], tp[1], tpt[1]])
    want_mae = np.sum(np.abs(lab[:, 0] - pred) * w) / w.sum()
    assert_close(got[0], np.float32(want_mae))
    assert_close(got[1], np.float32(want_mae))
    assert_close(got[2], np.float32(0.5))
    assert_close(got[3], np.array([1.5, 0.5], np.float32))


def test_static_argument_errors():
    lab = tf.constant([1, 0, 1])
    p = tf.constant([0.3, 0.6, 0.9])
    with pytest.raises(ValueError, match="specificity"):
        tf.metrics.sensitivity_at_specificity(lab, p, 1.5)
    with pytest.raises(InvalidArgumentError, match="sensitivity"):
        tf.metrics.specificity_at_sensitivity(lab, p, -0.1)
    with pytest.raises(InvalidArgumentError, match="k=0"):
        tf.metrics.precision_at_k(tf.constant([[1]], tf.int64), tf.ones([1, 3]), 0)
    with pytest.raises(InvalidArgumentError, match="incompatible"):
        tf.metrics.mean_absolute_error(tf.ones([3]), tf.ones([4]))
    with pytest.raises(InvalidArgumentError, match="broadcast"):
        tf.metrics.true_positives(lab, p > 0.5, weights=tf.ones([3, 3]))
    with pytest.raises(InvalidArgumentError, match="fully"):
        tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(InvalidArgumentError, match="labels shape"):
        tf.metrics.recall_at_k(tf.ones([2, 3, 4], tf.int64), tf.ones([2, 3]), 1)
    with pytest.raises(InvalidArgumentError, match="broadcast"):
        tf.losses.mean_pairwise_squared_error(tf.ones([2, 3]), tf.ones([2, 3]),
                                              weights=tf.ones([2]))


# ---- @k metrics on class ids -------------------------------------------------------------

K = 3
# multi-label rows of class ids, with a repeated id and ids outside [0, C) (-1, C + 1)
ML = [R.integers(-1, C + 2, (N, 4)) for _ in range(STEPS)]
for _m in ML:
    _m[:, 1] = _m[:, 0]   # a repeated id in every row
IDX = [R.integers(0, C, (N, K)) for _ in range(STEPS)]   # top-k ids given, duplicates too


def _sets(lab_row, ids_row, class_id=None):
    a, b = set(ids_row.tolist()), set(lab_row.tolist())
    if class_id is not None:
        a, b = a & {class_id}, b & {class_id}
    return len(a & b), len(a - b), len(b - a)


def _topk(s, k):
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


def _ap_row(lab_row, ids_row, k, n_rel=None):
    labs = set(lab_row.tolist())
    hits, total = 0, 0.0
    for i, c in enumerate(ids_row[:k].tolist()):
        if c in labs:
            hits += 1
            total += hits / (i + 1)
    n = min(len(lab_row) if n_rel is None else n_rel, k)
    return total / n if n else np.nan


def _build_at_k(ph):
    s, w, ml, sl, idx = ph["s"], ph["w"], ph["ml"], ph["lab"], ph["idx"]
    return {
        "p@k": tf.metrics.precision_at_k(ml, s, K),
        "p@k_w": tf.metrics.precision_at_k(ml, s, K, weights=w),
        "p@k_c": tf.metrics.precision_at_k(ml, s, K, class_id=2, weights=w),
        "p@k_1d": tf.metrics.sparse_precision_at_k(sl, s, 2),
        "r@k": tf.metrics.recall_at_k(ml, s, K, weights=w),
        "r@k_c": tf.metrics.recall_at_k(sl, s, 2, class_id=1),
        "p@top": tf.metrics.precision_at_top_k(ml, idx, weights=w),
        "r@top": tf.metrics.recall_at_top_k(ml, idx, K, class_id=3),
        "ap": tf.metrics.average_precision_at_k(ml, s, K, weights=w),
        "ap_1d": tf.metrics.sparse_average_precision_at_k(sl, s, 2),
    }


def _want_at_k(i):
    S, Wt, Ml, Sl, Ix = (_cum(a, i) for a in (SCORES, W, ML, LAB, IDX))
    one = np.ones_like(Wt, np.float64)
    Wt = Wt.astype(np.float64)
    top3, top2 = _topk(S, K), _topk(S, 2)
    Sl2 = Sl[:, None]

    def ratio(lab, ids, wts, which, class_id=None):
        c = np.array([_sets(a, b, class_id) for a, b in zip(lab, ids)], np.float64)
        tp = (c[:, 0] * wts).sum()
        other = (c[:, 1 if which == "p" else 2] * wts).sum()
        with np.errstate(invalid="ignore"):
            return tp / (tp + other)

    def ap(lab, ids, wts, k):
        rows = np.array([_ap_row(a, b, k) for a, b in zip(lab, ids)])
        return (rows * wts).sum() / wts.sum() if wts.sum() else 0.0
    return {"p@k": ratio(Ml, top3, one, "p"), "p@k_w": ratio(Ml, top3, Wt, "p"),
            "p@k_c": ratio(Ml, top3, Wt, "p", 2), "p@k_1d": ratio(Sl2, top2, one, "p"),
            "r@k": ratio(Ml, top3, Wt, "r"), "r@k_c": ratio(Sl2, top2, one, "r", 1),
            "p@top": ratio(Ml, Ix, Wt, "p"), "r@top": ratio(Ml, Ix, one, "r", 3),
            "ap": ap(Ml, top3, Wt, K), "ap_1d": ap(Sl2, top2, one, 2)}


@pytest.mark.parametrize("xla", [False, True])
def test_at_k_metrics(xla):
    feeds = [{"s": SCORES[i], "w": W[i], "ml": ML[i], "lab": LAB[i], "idx": IDX[i]}
             for i in range(STEPS)]
    got = _run(_build_at_k, feeds, xla)
    want = [{k: np.float64(v) for k, v in _want_at_k(i).items()} for i in range(STEPS)]
    _check(got, want, rtol=1e-6, atol=1e-9)


def test_at_k_of_nothing_is_nan_and_average_precision_zero():
    lab = tf.constant([[1]], tf.int64)
    s = tf.constant([[0.1, 0.9, 0.3]])
    pv, pu = tf.metrics.precision_at_k(lab, s, 1, class_id=2)
    rv, _ = tf.metrics.recall_at_k(lab, s, 1)
    av, _ = tf.metrics.average_precision_at_k(lab, s, 2)
    sess = tf.Session()
    sess.run(tf.local_variables_initializer())
    got = sess.run([pv, rv, av])
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == 0.0
    assert np.isnan(sess.run(pu))
    assert pv.dtype == tf.float64 and av.dtype == tf.float64


def test_at_k_with_sparse_labels():
    """SparseTensor labels: a row's absent entries are not labels (a row may have none)."""
    rows = [[1, 3], [0], [], [2, 2, 4]]
    idx, vals = [], []
    for r, row in enumerate(rows):
        for j, c in enumerate(row):
            idx.append([r, j])
            vals.append(c)
    dense_shape = [len(rows), 3]
    s = R.random((4, C)).astype(np.float32)
    w = np.array([1.0, 0.5, 2.0, 0.0], np.float32)
    sp = tf.sparse_placeholder(tf.int64)
    sc = tf.placeholder(tf.float32, [4, C])
    m = {"p": tf.metrics.precision_at_k(sp, sc, 2, weights=w),
         "r": tf.metrics.recall_at_k(sp, sc, 2),
         "r_c": tf.metrics.recall_at_k(sp, sc, 2, class_id=2),
         "ap": tf.metrics.average_precision_at_k(sp, sc, 2, weights=w)}
    sess = tf.Session()
    sess.run(tf.local_variables_initializer())
    feed = {sp: tf.SparseTensorValue(np.array(idx, np.int64), np.array(vals, np.int64),
                                     np.array(dense_shape, np.int64)), sc: s}
    for _ in range(2):
        ups = sess.run({k: v[1] for k, v in m.items()}, feed)
    top = _topk(s, 2)
    arr = [np.array(r, np.int64) for r in rows]
    c = np.array([_sets(a, b) for a, b in zip(arr, top)], np.float64)
    cc = np.array([_sets(a, b, 2) for a, b in zip(arr, top)], np.float64)
    w64 = w.astype(np.float64)
    aps = np.array([_ap_row(a, b, 2, len(set(a.tolist()))) for a, b in zip(arr, top)])
    want = {"p": (c[:, 0] * w64).sum() / ((c[:, 0] + c[:, 1]) * w64).sum(),
            "r": c[:, 0].sum() / (c[:, 0] + c[:, 2]).sum(),
            "r_c": cc[:, 0].sum() / (cc[:, 0] + cc[:, 2]).sum(),
            # the empty row's average precision is 0/0 (its weight 2 makes the sum NaN)
            "ap": (aps * w64).sum() / w64.sum()}
    assert np.isnan(want["ap"]) and np.isnan(ups["ap"])
    for k in ("p", "r", "r_c"):
        assert_close(ups[k], np.float64(want[k]), 1e-9, 1e-12, k)


# ---- tf.losses.mean_pairwise_squared_error -----------------------------------------------

def _np_mpse(lab, pred, w):
    d = (pred - lab).reshape(len(lab), -1)
    wb = np.broadcast_to(np.asarray(w, np.float64).reshape(-1, *([1] * (lab.ndim - 1))),
                         lab.shape).reshape(len(lab), -1) if np.ndim(w) else \
        np.full(d.shape, float(w))
    total, nz = 0.0, 0.0
    for i in range(len(d)):
        n = np.count_nonzero(wb[i])
        nz += n
        if n < 2:
            continue
        pairs = [(d[i, a] - d[i, b]) ** 2 for a in range(d.shape[1])
                 for b in range(d.shape[1]) if a != b]
        total += np.mean(pairs) * wb[i, 0]
    return total if nz else 0.0


@pytest.mark.parametrize("xla", [False, True])
def test_mean_pairwise_squared_error(xla):
    lab = R.standard_normal((4, 3, 2)).astype(np.float32)
    pred = R.standard_normal((4, 3, 2)).astype(np.float32)
    w = np.array([1.0, 0.0, 2.5, 0.5], np.float32).reshape(4, 1, 1)
    g = tf.Graph()
    with g.as_default(), tf.device("/device:XLA_CPU:0") if xla else contextlib.nullcontext():
        out = {"scalar": tf.losses.mean_pairwise_squared_error(lab, pred),
               "w": tf.losses.mean_pairwise_squared_error(lab, pred, weights=w,
                                                          scope="pairs"),
               "2d": tf.losses.mean_pairwise_squared_error(lab[:, :, 0], pred[:, :, 0],
                                                           weights=3.0,
                                                           loss_collection=None),
               "zero": tf.losses.mean_pairwise_squared_error(lab, pred, weights=0.0)}
        assert len(tf.losses.get_losses()) == 3
        assert out["w"].op.name.startswith("pairs/")
        got = tf.Session().run(out)
    want = {"scalar": _np_mpse(lab, pred, 1.0), "w": _np_mpse(lab, pred, w.reshape(-1)),
            "2d": _np_mpse(lab[:, :, 0], pred[:, :, 0], 3.0), "zero": 0.0}
    for k, v in want.items():
        assert_close(got[k], np.float32(v), 1e-5, 1e-5, k)
