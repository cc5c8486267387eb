"""tf.metrics (local state, update ops, tf.local_variables_initializer resets it) and the
tf.losses family (weights, the four reductions, collections, regularization losses from
get_variable's regularizer), against NumPy references of TF 1.x's definitions; the
training-step side (metrics and losses in one compiled cluster) runs with auto-jit."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config
from .helpers import assert_close

R = np.random.default_rng(5)
LAB = [R.integers(0, 2, 20) for _ in range(3)]
PRED = [np.clip(R.random(20) * 0.6 + lab * 0.3, 0, 1).astype(np.float32) for lab in LAB]
WTS = [R.random(20).astype(np.float32) for _ in range(3)]


def _np_auc(lab, p, n, curve="ROC", how="trapezoidal", w=None):
    w = np.ones_like(p) if w is None else w
    th = np.array([-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7], np.float32)
    pos = p[None, :] > th[:, None]
    lab = lab.astype(bool)[None, :]
    tp, fn = (w * (lab & pos)).sum(1), (w * (lab & ~pos)).sum(1)
    tn, fp = (w * (~lab & ~pos)).sum(1), (w * (~lab & pos)).sum(1)
    if how == "careful":
        p = tp + fp
        dtp, dp = tp[:-1] - tp[1:], p[:-1] - p[1:]
        slope = np.where(dp > 0, dtp / np.where(dp > 0, dp, 1), 0)
        icpt = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, p[:-1] / np.where(both, p[1:], 1), 1)
        den = tp[1:] + fn[1:]
        inc = slope * (dtp + icpt * np.log(ratio))
        return np.sum(np.where(den > 0, inc / np.where(den > 0, den, 1), 0))
    e = 1e-6
    rec = (tp + e) / (tp + fn + e)
    x, y = (fp / (fp + tn + e), rec) if curve == "ROC" else (rec, (tp + e) / (tp + fp + e))
    h = {"trapezoidal": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
         "majoring": np.maximum(y[:-1], y[1:])}[how]
    return np.sum((x[:-1] - x[1:]) * h)


@pytest.mark.parametrize("jit", [False, True])
def test_metrics_accumulate_over_batches(jit):
    lab = tf.placeholder(tf.int64, [20])
    p = tf.placeholder(tf.float32, [20])
    w = tf.placeholder(tf.float32, [20])
    hard = tf.cast(p > 0.5, tf.int64)
    m = {"acc": tf.metrics.accuracy(lab, hard),
         "acc_w": tf.metrics.accuracy(lab, hard, weights=w),
         "mean": tf.metrics.mean(p, w),
         "mse": tf.metrics.mean_squared_error(tf.cast(lab, tf.float32), p),
         "prec": tf.metrics.precision(lab, p > 0.5),
         "rec": tf.metrics.recall(lab, p > 0.5, weights=w),
         "auc": tf.metrics.auc(lab, p),
         "auc_pr": tf.metrics.auc(lab, p, weights=w, curve="PR", num_thresholds=50),
         "auc_min": tf.metrics.auc(lab, p, num_thresholds=7, summation_method="minoring"),
         "auc_careful": tf.metrics.auc(lab, p, weights=w, curve="PR", num_thresholds=20,
                                       summation_method="careful_interpolation")}
    names = sorted(v.op.name for v in tf.local_variables())
    assert names[:4] == ["accuracy/count", "accuracy/total", "accuracy_1/count",
                         "accuracy_1/total"]
    assert "auc/true_positives" in names and "precision/true_positives/count" in names
    assert not tf.trainable_variables() and not tf.global_variables()
    assert len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)) == len(names)
    sess = tf.Session(config=jit_config() if jit else None)
    ups = {k: v[1] for k, v in m.items()}
    vals = {k: v[0] for k, v in m.items()}
    for _ in range(2):  # the second round checks that the initializer resets the state
        sess.run(tf.local_variables_initializer())
        assert_close(sess.run(vals)["acc"], np.float32(0.0))   # empty: 0, not nan
        for i in range(3):
            got = sess.run(ups, {lab: LAB[i], p: PRED[i], w: WTS[i]})
        got_vals = sess.run(vals)
        L, P, W = (np.concatenate(a) for a in (LAB, PRED, WTS))
        H = (P > 0.5).astype(np.int64)
        want = {"acc": np.mean(H == L), "acc_w": np.sum((H == L) * W) / W.sum(),
                "mean": np.sum(P * W) / W.sum(), "mse": np.mean((L - P) ** 2),
                "prec": np.sum(H & L) / np.sum(H),
                "rec": np.sum(W * (H & L)) / np.sum(W * L),
                "auc": _np_auc(L, P, 200), "auc_pr": _np_auc(L, P, 50, "PR", w=W),
                "auc_min": _np_auc(L, P, 7, how="minoring"),
                "auc_careful": _np_auc(L, P, 20, "PR", "careful", W)}
        for k, v in want.items():
            assert_close(got[k], np.float32(v), rtol=1e-5, atol=1e-6, what=f"{k} update: ")
            assert_close(got_vals[k], np.float32(v), rtol=1e-5, atol=1e-6, what=f"{k}: ")


L4 = R.integers(0, 2, (4, 3)).astype(np.float32)
P4 = R.random((4, 3)).astype(np.float32)
X4 = R.standard_normal((4, 3)).astype(np.float32)
W4 = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)


def test_losses_weights_reductions_and_collections():
    bw = np.broadcast_to(W4, (4, 3))
    absd = np.abs(P4 - L4) * bw
    out, want = {}, {}
    for red, ref in (("weighted_sum", absd.sum()), ("weighted_mean", absd.sum() / bw.sum()),
                     ("weighted_sum_over_batch_size", absd.sum() / 12),
                     ("weighted_sum_by_nonzero_weights", absd.sum() / 9)):
        out[red] = tf.losses.absolute_difference(L4, P4, weights=W4, reduction=red)
        want[red] = ref
    err = np.abs(X4 - L4)
    quad = np.minimum(err, 0.7)
    out["huber"] = tf.losses.huber_loss(L4, X4, W4, 0.7)  # TF's positional order
    want["huber"] = ((0.5 * quad ** 2 + 0.7 * (err - quad)) * bw).sum() / 9
    out["log"] = tf.losses.log_loss(L4, P4)
    want["log"] = np.mean(-L4 * np.log(P4 + 1e-7) - (1 - L4) * np.log(1 - P4 + 1e-7))
    out["hinge"] = tf.losses.hinge_loss(L4, X4)
    want["hinge"] = np.mean(np.maximum(0, 1 - (2 * L4 - 1) * X4))
    a = (L4 + 0.1) / np.linalg.norm(L4 + 0.1, axis=1, keepdims=True)
    b = X4 / np.linalg.norm(X4, axis=1, keepdims=True)
    out["cos"] = tf.losses.cosine_distance(a, b, axis=1, weights=W4)
    want["cos"] = np.sum((1 - (a * b).sum(1, keepdims=True)) * W4) / 3
    ls = L4 * 0.8 + 0.1
    out["sigmoid"] = tf.losses.sigmoid_cross_entropy(L4, X4, weights=W4, label_smoothing=0.2)
    want["sigmoid"] = ((np.maximum(X4, 0) - X4 * ls + np.log1p(np.exp(-np.abs(X4)))) * bw
                       ).sum() / 9
    oh = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]] * 0.9 + 0.1 / 3
    out["softmax"] = tf.losses.softmax_cross_entropy(tf.one_hot([0, 1, 2, 1], 3), X4,
                                                     label_smoothing=0.1)
    lsm = X4 - np.log(np.exp(X4).sum(1, keepdims=True))
    want["softmax"] = np.mean(-(oh * lsm).sum(1))
    out["none"] = tf.losses.absolute_difference(L4, P4, reduction="none", loss_collection=None)
    want["none"] = np.abs(P4 - L4)
    v = tf.get_variable("v", [3], initializer=tf.ones_initializer(),
                        regularizer=tf.contrib.layers.l2_regularizer(0.1))
    tf.get_variable("u", [2], initializer=tf.ones_initializer(),
                    regularizer=tf.contrib.layers.l1_regularizer(0.5))
    tf.get_variable("z", [2], regularizer=tf.contrib.layers.l2_regularizer(0.0))
    tf.losses.add_loss(tf.reduce_sum(v) * 0.0 + 1.0)
    out["reg"] = tf.losses.get_regularization_loss()
    want["reg"] = 0.1 * 3 / 2 + 0.5 * 2
    out["total"] = tf.losses.get_total_loss()
    assert len(tf.losses.get_losses()) == 11 and len(tf.losses.get_regularization_losses()) == 2
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    got = sess.run(out)
    want["total"] = sum(want[k] for k in want if k not in ("none", "reg", "total")) + \
        1.0 + want["reg"]
    for k, w in want.items():
        assert_close(got[k], np.asarray(w, np.float32), rtol=1e-5, atol=1e-6, what=f"{k}: ")
    with pytest.raises(InvalidArgumentError, match="axis"):
        tf.losses.cosine_distance(a, b)
    with pytest.raises(InvalidArgumentError, match="Reduction"):
        tf.losses.log_loss(L4, P4, reduction="average")
