"""tf.keras.activations, the metric classes of tf.keras.metrics and the Attention /
AdditiveAttention layers (TF 1.15, graph mode): values against NumPy references (and the
values TF's documentation gives) in the executor and compiled (ops placed on XLA_CPU, or
auto-clustered with global_jit_level ON_1), gradients against central differences of the
references, metric states over several batches with sample weights, reset, configs, and
the error cases."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config
from .helpers import assert_close, run_executor_and_xla_cpu

keras = tf.keras
A = keras.activations
KM = keras.metrics
R = np.random.default_rng(1215)
EPS = 1e-7


@pytest.fixture(autouse=True)
def _fresh():
    keras.backend.clear_session()
    yield
    keras.backend.clear_session()


# ---- activations ------------------------------------------------------------------------------
X = R.uniform(-3, 3, (2, 3, 4)).astype(np.float32)
X[0, 0, :4] = [-0.5, 0.0, 1.0, 2.5]      # exactly at the thresholds / max values used below


def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras' relu, as TF 1.15 computes it: x kept above the threshold (then capped to
    [0, max_value]), minus alpha * (threshold - x) at or below it."""
    pos = np.where(x > threshold, x, 0.0) if threshold != 0 else np.maximum(x, 0.0)
    if max_value is not None:
        pos = np.clip(pos, 0.0, max_value)
    return pos - alpha * np.maximum(threshold - x, 0.0)


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(x))


SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805
ACTS = {   # name: (build(x), numpy reference)
    "relu": (A.relu, _np_relu),
    "relu_alpha": (lambda x: A.relu(x, alpha=0.3), lambda x: _np_relu(x, 0.3)),
    "relu_max": (lambda x: A.relu(x, max_value=2.5), lambda x: _np_relu(x, 0, 2.5)),
    "relu_thr": (lambda x: A.relu(x, threshold=1.0), lambda x: _np_relu(x, 0, None, 1.0)),
    "relu_all": (lambda x: A.relu(x, alpha=0.2, max_value=2.0, threshold=-0.5),
                 lambda x: _np_relu(x, 0.2, 2.0, -0.5)),
    "elu": (A.elu, _np_elu),
    "elu_half": (lambda x: A.elu(x, 0.5), lambda x: _np_elu(x, 0.5)),
    "selu": (A.selu, lambda x: SELU_S * _np_elu(x, SELU_A)),
    "softplus": (A.softplus, lambda x: np.log1p(np.exp(x))),
    "softsign": (A.softsign, lambda x: x / (1 + np.abs(x))),
    "sigmoid": (A.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (A.tanh, np.tanh),
    "exponential": (A.exponential, np.exp),
    "linear": (A.linear, lambda x: x),
    "hard_sigmoid": (A.hard_sigmoid, lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    "softmax": (A.softmax, _np_softmax),
    "softmax_ax1": (lambda x: A.softmax(x, axis=1), lambda x: _np_softmax(x, 1)),
    "softmax_2d_ax0": (lambda x: A.softmax(x[0], axis=0), lambda x: _np_softmax(x[0], 0)),
}


def test_activation_values_executor_and_xla():
    def build():
        x = tf.placeholder(tf.float32, X.shape)
        return {k: f(x) for k, (f, _) in ACTS.items()}, {x: X}
    ex, xl = run_executor_and_xla_cpu(build)
    for k, (_, ref) in ACTS.items():
        want = ref(X.astype(np.float64)).astype(np.float32)
        assert_close(ex[k], want, 1e-5, 1e-6, k)
        assert_close(xl[k], want, 1e-5, 1e-6, k)
    # the values of Keras' relu documentation
    foo = tf.constant([-10, -5, 0.0, 5, 10])
    with tf.Session() as s:
        got = s.run([A.relu(foo), A.relu(foo, alpha=0.5), A.relu(foo, max_value=5.0),
                     A.relu(foo, threshold=5.0)])
    for g, w in zip(got, [[0, 0, 0, 5, 10], [-5, -2.5, 0, 5, 10], [0, 0, 0, 5, 5],
                          [0, 0, 0, 0, 10]]):
        np.testing.assert_array_equal(g, w)


def _numeric_grad(f, x, w, h=1e-6):
    """d sum(w * f(x)) / dx by central differences, in float64."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = h
        g[i] = ((w * f(x + d)).sum() - (w * f(x - d)).sum()) / (2 * h)
    return g


def test_activation_gradients_numerically():
    xg = R.uniform(-3, 3, X.shape).astype(np.float32)       # (no points on the kinks)
    w = R.standard_normal(X.shape).astype(np.float32)
    names = ["relu_all", "elu_half", "selu", "hard_sigmoid", "softmax_ax1", "softsign",
             "softplus", "exponential"]
    x = tf.placeholder(tf.float32, X.shape)
    grads = {k: tf.gradients(tf.reduce_sum(ACTS[k][0](x) * w), x)[0] for k in names}
    with tf.Session() as s:
        got = s.run(grads, {x: xg})
    for k in names:
        assert_close(got[k], _numeric_grad(ACTS[k][1], xg, w), 1e-4, 1e-4, k)


def test_activation_get_serialize_deserialize():
    assert A.get(None) is A.linear
    assert A.get("relu") is A.relu and A.get("softmax") is A.softmax
    assert A.get(tf.nn.relu) is tf.nn.relu
    for name in ("relu", "elu", "selu", "softplus", "softsign", "sigmoid", "tanh", "softmax",
                 "exponential", "linear", "hard_sigmoid"):
        f = A.deserialize(name)
        assert f is getattr(A, name) and A.serialize(f) == name
    assert A.serialize(tf.nn.tanh) == "tanh"

    def my_act(x):
        return x * 2.0
    keras.utils.get_custom_objects()["my_act"] = my_act
    try:
        assert A.get("my_act") is my_act
    finally:
        del keras.utils.get_custom_objects()["my_act"]
    assert A.deserialize("twice", custom_objects={"twice": my_act}) is my_act
    with pytest.raises(ValueError, match="Unknown activation function: nope"):
        A.get("nope")
    with pytest.raises(ValueError, match="Could not interpret activation"):
        A.get(3)
    with pytest.raises(ValueError, match="no name"):
        A.serialize(lambda x: x)
    with pytest.raises(ValueError, match="Cannot apply softmax to a tensor that is 1D"):
        A.softmax(tf.constant([1.0, 2.0]))


def test_layers_take_the_activations():
    x = R.standard_normal((3, 4)).astype(np.float32)
    inp = keras.layers.Input((4,))
    lin = keras.layers.Dense(2, activation=None)
    selu = keras.layers.Dense(2, activation="selu")
    relu = keras.layers.Dense(2, activation=lambda t: A.relu(t, max_value=0.5))
    outs = [lin(inp), selu(inp), relu(inp), keras.layers.Activation("hard_sigmoid")(inp)]
    s = keras.backend.get_session()
    got = s.run(outs, {inp: x})
    (w1, b1), (w2, b2), (w3, b3) = (s.run(d.weights) for d in (lin, selu, relu))
    assert_close(got[0], x @ w1 + b1, 1e-5, 1e-5)
    assert_close(got[1], SELU_S * _np_elu(x @ w2 + b2, SELU_A), 1e-5, 1e-5)
    assert_close(got[2], np.clip(x @ w3 + b3, 0, 0.5), 1e-5, 1e-5)
    assert_close(got[3], np.clip(0.2 * x + 0.5, 0, 1), 1e-6, 1e-6)
    assert lin.get_config()["activation"] in (None, "linear")
    assert selu.get_config()["activation"] == "selu"


# ---- metrics: helpers and references ---------------------------------------------------------
def _stream(make, batches, jit=False):
    """Run make()'s update_state on each batch ((inputs...), sample_weight or None) in turn,
    then return the result (and the metric)."""
    g = tf.Graph()
    with g.as_default():
        m = make()
        first, w0 = batches[0]
        phs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype),
                              [None] + list(np.shape(a)[1:])) for a in first]
        pw = None if w0 is None else tf.placeholder(tf.float32,
                                                    [None] + list(np.shape(w0)[1:]))
        up = m.update_state(*phs, sample_weight=pw)
        res = m.result()
        init = tf.variables_initializer(m.variables)
    with tf.Session(graph=g, config=jit_config() if jit else None) as s:
        s.run(init)
        for args, w in batches:
            fd = dict(zip(phs, args))
            if pw is not None:
                fd[pw] = w
            s.run(up, fd)
        return s.run(res)


def _check(make, batches, want, rtol=1e-5, atol=1e-6):
    for jit in (False, True):
        assert_close(_stream(make, batches, jit), np.asarray(want, np.float32), rtol, atol,
                     f"jit={jit}: ")


def _cat(batches, i):
    return np.concatenate([np.asarray(b[0][i]) for b in batches])


def _w(batches):
    return np.concatenate([np.asarray(b[1]) for b in batches])


def _split(*arrays, weights=None, at=(3, 7)):
    """Three batches of the arrays (and weights)."""
    cuts = [0, *at, len(arrays[0])]
    return [(tuple(a[i:j] for a in arrays), None if weights is None else weights[i:j])
            for i, j in zip(cuts, cuts[1:])]


N, C = 10, 4
LOGITS = R.standard_normal((N, C)).astype(np.float32)
PROBS = _np_softmax(LOGITS.astype(np.float64)).astype(np.float32)
LABELS = R.integers(0, C, N)
ONE_HOT = np.eye(C, dtype=np.float32)[LABELS]
WEIGHTS = R.uniform(0.0, 2.0, N).astype(np.float32)
BIN_Y = R.integers(0, 2, (N, 3)).astype(np.float32)
BIN_P = R.uniform(0, 1, (N, 3)).astype(np.float32)
REG_Y = R.standard_normal((N, 3)).astype(np.float32)
REG_P = R.standard_normal((N, 3)).astype(np.float32)


def _wmean(values, w=None):
    values = np.asarray(values, np.float64)
    if w is None:
        return values.mean()
    w = np.broadcast_to(np.reshape(w, w.shape + (1,) * (values.ndim - w.ndim)), values.shape)
    return (values * w).sum() / w.sum()


# ---- metrics: Mean, Sum and the mean wrappers --------------------------------------------------
def test_mean_and_sum_over_batches_with_weights():
    v = R.standard_normal((N, 3)).astype(np.float32)
    _check(KM.Mean, _split(v), v.mean())
    _check(KM.Mean, _split(v, weights=WEIGHTS), _wmean(v, WEIGHTS))   # [N] weights: [N, 1]
    _check(KM.Sum, _split(v, weights=WEIGHTS), (v * WEIGHTS[:, None]).sum(), 1e-5, 1e-5)
    # weights of the values' shape, and of rank 0
    w2 = R.uniform(0, 1, (N, 3)).astype(np.float32)
    _check(KM.Mean, _split(v, weights=w2), (v * w2).sum() / w2.sum())
    with tf.Graph().as_default():
        m = KM.Mean()
        up = m.update_state([1.0, 3.0, 5.0, 7.0], sample_weight=[1.0, 1.0, 0.0, 0.0])
        up2 = m.update_state(np.float32([10.0, 20.0]), sample_weight=0.5)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            s.run(up)
            assert s.run(m.result()) == 2.0                    # TF's documented value
            s.run(up2)
            assert np.isclose(s.run(m.result()), (4 + 15) / 3.0)


def test_accuracy_metrics():
    ids_true = R.integers(0, 3, N).astype(np.int32)
    ids_pred = np.where(R.uniform(size=N) < 0.6, ids_true, R.integers(0, 3, N)).astype(np.int32)
    _check(KM.Accuracy, _split(ids_true, ids_pred, weights=WEIGHTS),
           _wmean(ids_true == ids_pred, WEIGHTS))
    y1, p1 = BIN_Y[:, :1], BIN_P[:, :1]
    _check(lambda: KM.BinaryAccuracy(threshold=0.7), _split(y1, p1, weights=WEIGHTS),
           _wmean((y1[:, 0] == (p1[:, 0] > 0.7)), WEIGHTS))
    _check(KM.BinaryAccuracy, _split(BIN_Y, BIN_P), ((BIN_P > 0.5) == BIN_Y).mean())
    _check(KM.CategoricalAccuracy, _split(ONE_HOT, PROBS, weights=WEIGHTS),
           _wmean(PROBS.argmax(1) == LABELS, WEIGHTS))
    lab = LABELS.astype(np.float32)
    for y in (lab, lab[:, None]):
        _check(KM.SparseCategoricalAccuracy, _split(y, PROBS, weights=WEIGHTS),
               _wmean(PROBS.argmax(1) == LABELS, WEIGHTS))
    top2 = np.argsort(-PROBS, 1)[:, :2]
    hit = (top2 == LABELS[:, None]).any(1)
    _check(lambda: KM.TopKCategoricalAccuracy(k=2), _split(ONE_HOT, PROBS), hit.mean())
    _check(lambda: KM.SparseTopKCategoricalAccuracy(k=2),
           _split(lab[:, None], PROBS, weights=WEIGHTS), _wmean(hit, WEIGHTS))
    # TF's documented examples
    with tf.Session() as s:
        a = KM.Accuracy()([1, 2, 3, 4], [0, 2, 3, 4])
        b = KM.BinaryAccuracy()([1, 1, 0, 0], [0.98, 1, 0, 0.6])
        c = KM.CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        d = KM.SparseTopKCategoricalAccuracy(k=1)([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        s.run(tf.local_variables_initializer())
        assert s.run([a, b, c, d]) == [0.75, 0.75, 0.5, 0.5]


def test_regression_metrics():
    err = REG_P.astype(np.float64) - REG_Y
    per = {"mse": (err ** 2).mean(1), "mae": np.abs(err).mean(1)}
    _check(KM.MeanSquaredError, _split(REG_Y, REG_P, weights=WEIGHTS),
           _wmean(per["mse"], WEIGHTS))
    _check(KM.MeanAbsoluteError, _split(REG_Y, REG_P, weights=WEIGHTS),
           _wmean(per["mae"], WEIGHTS))
    _check(KM.RootMeanSquaredError, _split(REG_Y, REG_P, weights=WEIGHTS),
           np.sqrt(_wmean(err ** 2, WEIGHTS)))
    _check(KM.RootMeanSquaredError, [(([2.0, 4.0, 6.0], [1.0, 3.0, 2.0]), None)],
           np.sqrt(18 / 3.0))                                        # TF's doc: 2.449
    pos_y, pos_p = np.abs(REG_Y) + 0.1, np.abs(REG_P) + 0.1
    _check(KM.MeanAbsolutePercentageError, _split(pos_y, pos_p),
           100 * (np.abs(pos_y - pos_p) / pos_y).mean(), 1e-5, 1e-4)
    _check(KM.MeanSquaredLogarithmicError, _split(pos_y, pos_p),
           ((np.log1p(pos_p.astype(np.float64)) - np.log1p(pos_y)) ** 2).mean())
    _check(KM.LogCoshError, _split(REG_Y, REG_P), np.log(np.cosh(err)).mean())
    _check(KM.Poisson, _split(pos_y, pos_p),
           (pos_p - pos_y * np.log(pos_p.astype(np.float64) + EPS)).mean())
    _check(lambda: KM.CosineSimilarity(axis=1), [(([[0.0, 1.0], [1.0, 1.0]],
                                                   [[1.0, 0.0], [1.0, 1.0]]), None)], 0.5)
    _check(lambda: KM.MeanRelativeError(normalizer=[1.0, 3.0, 2.0, 3.0]),
           [(([1.0, 3.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0]), None)], 1.25)   # TF's doc


def test_hinge_and_divergence_metrics():
    y, p = np.float32([[-1, 1, 1]]), np.float32([[0.6, -0.7, -0.5]])
    _check(KM.Hinge, [((y, p), None)], 1.6)
    _check(KM.Hinge, [(((y + 1) / 2, p), None)], 1.6)        # {0, 1} labels as {-1, 1}
    _check(KM.SquaredHinge, [((y, p), None)], (1.6 ** 2 + 1.7 ** 2 + 1.5 ** 2) / 3)
    _check(KM.CategoricalHinge, [(([[0.0, 1, 1]], [[1.0, 0, 1]]), None)], 1.0)
    t, q = PROBS[:, ::-1].copy(), PROBS
    _check(KM.KLDivergence, _split(t, q), (t * np.log(t / q.astype(np.float64))).sum(1).mean())


def test_crossentropy_metrics():
    pc = np.clip(BIN_P.astype(np.float64), EPS, 1 - EPS)
    bce = -(BIN_Y * np.log(pc) + (1 - BIN_Y) * np.log(1 - pc)).mean(1)
    _check(KM.BinaryCrossentropy, _split(BIN_Y, BIN_P, weights=WEIGHTS), _wmean(bce, WEIGHTS),
           1e-4, 1e-5)
    z = REG_P.astype(np.float64)
    ys = BIN_Y * 0.8 + 0.1                                            # label_smoothing=0.2
    bce_l = (np.maximum(z, 0) - z * ys + np.log1p(np.exp(-np.abs(z)))).mean(1)
    _check(lambda: KM.BinaryCrossentropy(from_logits=True, label_smoothing=0.2),
           _split(BIN_Y, REG_P), bce_l.mean(), 1e-5, 1e-5)
    logp = LOGITS - np.log(np.exp(LOGITS.astype(np.float64)).sum(1, keepdims=True))
    yc = ONE_HOT * 0.9 + 0.1 / C
    _check(lambda: KM.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
           _split(ONE_HOT, LOGITS, weights=WEIGHTS), _wmean(-(yc * logp).sum(1), WEIGHTS),
           1e-5, 1e-5)
    _check(KM.CategoricalCrossentropy, _split(ONE_HOT, PROBS),
           -(ONE_HOT * np.log(np.clip(PROBS, EPS, 1 - EPS))).sum(1).mean(), 1e-5, 1e-5)
    lp = np.log(np.clip(PROBS.astype(np.float64), EPS, 1 - EPS))
    sce = -(lp[np.arange(N), LABELS] - np.log(np.exp(lp).sum(1)))
    _check(KM.SparseCategoricalCrossentropy, _split(LABELS.astype(np.float32), PROBS),
           sce.mean(), 1e-5, 1e-5)
    # TF's documented example
    _check(KM.CategoricalCrossentropy, [(([[0.0, 1, 0], [0, 0, 1]],
                                          [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]), None)],
           (-np.log(0.95) - np.log(0.1)) / 2, 1e-4)


# ---- metrics: thresholds ---------------------------------------------------------------------
def _np_counts(y, p, thresholds, w=None):
    p = np.asarray(p, np.float64)
    w = np.ones_like(p) if w is None else np.broadcast_to(
        np.reshape(w, np.shape(w) + (1,) * (p.ndim - np.ndim(w))), p.shape)
    y, p, w = np.asarray(y, bool).reshape(-1), p.reshape(-1), w.reshape(-1)
    out = {k: [] for k in ("tp", "fp", "tn", "fn")}
    for t in thresholds:
        pos = p > t
        out["tp"].append((w * (y & pos)).sum())
        out["fp"].append((w * (~y & pos)).sum())
        out["tn"].append((w * (~y & ~pos)).sum())
        out["fn"].append((w * (y & ~pos)).sum())
    return {k: np.asarray(v) for k, v in out.items()}


def _ratio(a, b):
    return np.where(a + b > 0, a / np.where(a + b > 0, a + b, 1), 0.0)


def test_confusion_counts_precision_recall():
    ths = [0.2, 0.5, 0.9]
    b = _split(BIN_Y, BIN_P, weights=WEIGHTS)
    c = _np_counts(BIN_Y, BIN_P, ths, WEIGHTS[:, None])
    for cls, key in ((KM.TruePositives, "tp"), (KM.FalsePositives, "fp"),
                     (KM.TrueNegatives, "tn"), (KM.FalseNegatives, "fn")):
        _check(lambda cls=cls: cls(thresholds=ths), b, c[key], 1e-5, 1e-5)
    _check(KM.TrueNegatives, _split(BIN_Y, BIN_P), _np_counts(BIN_Y, BIN_P, [0.5])["tn"][0])
    _check(lambda: KM.Precision(thresholds=ths), b, _ratio(c["tp"], c["fp"]))
    _check(lambda: KM.Recall(thresholds=ths), b, _ratio(c["tp"], c["fn"]))
    c5 = _np_counts(BIN_Y, BIN_P, [0.5])
    _check(KM.Precision, _split(BIN_Y, BIN_P), _ratio(c5["tp"], c5["fp"])[0])
    # top_k: only each row's 2 largest predictions are positive; class_id: one column
    in_top = np.zeros_like(PROBS, bool)
    np.put_along_axis(in_top, np.argsort(-PROBS, 1)[:, :2], True, 1)
    y, pos = ONE_HOT.astype(bool), in_top
    _check(lambda: KM.Precision(top_k=2), _split(ONE_HOT, PROBS),
           (y & pos).sum() / pos.sum())
    _check(lambda: KM.Recall(top_k=2), _split(ONE_HOT, PROBS), (y & pos).sum() / y.sum())
    k = 1
    _check(lambda: KM.Precision(top_k=2, class_id=k), _split(ONE_HOT, PROBS),
           _ratio((y[:, k] & pos[:, k]).sum(), (~y[:, k] & pos[:, k]).sum()))
    _check(lambda: KM.Recall(class_id=k, thresholds=0.3), _split(ONE_HOT, PROBS),
           _ratio((y[:, k] & (PROBS[:, k] > 0.3)).sum(), (y[:, k] & (PROBS[:, k] <= 0.3)).sum()))
    # TF's documented examples
    with tf.Session() as s:
        p = KM.Precision()([0, 1, 1, 1], [1, 0, 1, 1])
        r = KM.Recall()([0, 1, 1, 1], [1, 0, 1, 1], sample_weight=[0, 0, 1, 0])
        fp = KM.FalsePositives()([0, 1, 0, 0], [0, 0, 1, 1])
        s.run(tf.local_variables_initializer())
        got = s.run([p, r, fp])
    assert np.isclose(got[0], 2 / 3) and got[1] == 1.0 and got[2] == 2.0


def _np_auc(c, curve, method):
    """The Riemann sum AUC computes from the counts at its thresholds."""
    tp, fp, tn, fn = (c[k] for k in ("tp", "fp", "tn", "fn"))
    if curve == "PR" and method == "interpolation":
        p = tp + fp
        dtp, dp = tp[:-1] - tp[1:], p[:-1] - p[1:]
        slope = np.where(np.maximum(dp, 0) > 0, dtp / np.where(dp > 0, dp, 1), 0.0)
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1),
                         1.0)
        den = tp[1:] + fn[1:]
        inc = slope * (dtp + intercept * np.log(ratio))
        return np.where(den > 0, inc / np.where(den > 0, den, 1), 0.0).sum()
    rec = _ratio(tp, fn)
    x, y = (_ratio(fp, tn), rec) if curve == "ROC" else (rec, _ratio(tp, fp))
    h = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
         "majoring": np.maximum(y[:-1], y[1:])}[method]
    return ((x[:-1] - x[1:]) * h).sum()


def _auc_thresholds(n):
    return [-EPS] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + EPS]


def test_auc_curves_and_summations():
    y = (R.uniform(size=60) < 0.4).astype(np.float32)
    p = np.clip(0.35 * y + R.uniform(0, 0.65, 60), 0, 1).astype(np.float32)
    w = R.uniform(0, 2, 60).astype(np.float32)
    b = _split(y, p, weights=w, at=(20, 45))
    for curve in ("ROC", "PR"):
        for method in ("interpolation", "minoring", "majoring"):
            c = _np_counts(y, p, _auc_thresholds(25), w)
            _check(lambda curve=curve, method=method: KM.AUC(25, curve=curve,
                                                             summation_method=method), b,
                   _np_auc(c, curve, method), 1e-4, 1e-5)
    ths = [0.3, 0.1, 0.7]
    c = _np_counts(y, p, [-EPS, 0.1, 0.3, 0.7, 1 + EPS])
    _check(lambda: KM.AUC(thresholds=ths), _split(y, p, at=(20, 45)),
           _np_auc(c, "ROC", "interpolation"), 1e-5, 1e-6)
    # many thresholds: close to the exact ROC AUC (the Mann-Whitney statistic)
    pos, neg = p[y == 1], p[y == 0]
    exact = ((pos[:, None] > neg[None]) + 0.5 * (pos[:, None] == neg[None])).mean()
    assert abs(_stream(lambda: KM.AUC(2000), [((y, p), None)]) - exact) < 2e-3
    # TF's documented example: thresholds [-1e-7, 0.5, 1 + 1e-7]
    _check(lambda: KM.AUC(num_thresholds=3), [(([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]), None)],
           0.75)


def test_sensitivity_specificity_and_mean_iou():
    _check(lambda: KM.SensitivityAtSpecificity(0.4, num_thresholds=1),
           [(([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]), None)], 0.5)         # TF's doc
    _check(lambda: KM.SpecificityAtSensitivity(0.8, num_thresholds=1),
           [(([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]), None)], 1.0)         # TF's doc
    y, p = BIN_Y.reshape(-1), BIN_P.reshape(-1)
    ths = [0.0] + [(i + 1) / 9 for i in range(8)] + [1.0]
    c = _np_counts(y, p, ths)
    spec, sens = _ratio(c["tn"], c["fp"]), _ratio(c["tp"], c["fn"])
    i = np.argmin(np.abs(spec - 0.7))
    _check(lambda: KM.SensitivityAtSpecificity(0.7, num_thresholds=10), _split(y, p), sens[i])
    j = np.argmin(np.abs(sens - 0.6))
    _check(lambda: KM.SpecificityAtSensitivity(0.6, num_thresholds=10), _split(y, p), spec[j])
    # MeanIoU: per-class tp / (tp + fp + fn) of the weighted confusion matrix
    t = R.integers(0, 4, (N, 3))
    q = np.where(R.uniform(size=(N, 3)) < 0.5, t, R.integers(0, 3, (N, 3)))
    ww = R.uniform(0, 1, (N, 3)).astype(np.float32)
    cm = np.zeros((5, 5))
    np.add.at(cm, (t.reshape(-1), q.reshape(-1)), ww.reshape(-1))
    den = cm.sum(0) + cm.sum(1) - np.diag(cm)
    iou = np.diag(cm)[den > 0] / den[den > 0]
    _check(lambda: KM.MeanIoU(num_classes=5), _split(t, q, weights=ww), iou.mean())
    _check(lambda: KM.MeanIoU(2), [(([0, 0, 1, 1], [0, 1, 0, 1]), None)], 1 / 3)  # TF's doc
    with tf.Graph().as_default(), tf.Session() as s:
        m = KM.MeanIoU(2)
        lab = tf.placeholder(tf.int32, [None])
        up = m.update_state(lab, [0, 1])
        s.run(tf.local_variables_initializer())
        with pytest.raises(InvalidArgumentError, match="labels` out of bound"):
            s.run(up, {lab: [0, 2]})
        with pytest.raises(InvalidArgumentError, match="labels` contains negative"):
            s.run(up, {lab: [-1, 0]})
        with pytest.raises(InvalidArgumentError, match="predictions` out of bound"):
            m.update_state([0, 1], [0, 3])                   # (constants: checked at once)


def test_mean_tensor():
    with tf.Session() as s:
        m = KM.MeanTensor()
        u1 = m.update_state([0.0, 1, 2, 3])
        u2 = m.update_state([4.0, 5, 6, 7])
        u3 = m.update_state([12.0, 10, 8, 6], sample_weight=[0, 0.2, 0.5, 1])
        s.run(tf.local_variables_initializer())
        s.run([u1])
        s.run(u2)
        np.testing.assert_allclose(s.run(m.result()), [2, 3, 4, 5])
        s.run(u3)
        np.testing.assert_allclose(s.run(m.result()), [2, 3.636364, 4.8, 5.333333], 1e-5)
        with pytest.raises(ValueError, match="same shape"):
            m.update_state([1.0, 2.0])
    with pytest.raises(ValueError, match="does not have any result yet"):
        KM.MeanTensor().result()


# ---- metrics: the Metric machinery -------------------------------------------------------------
def test_call_returns_the_updated_result_and_reset_states():
    m = KM.Sum()
    x = tf.placeholder(tf.float32, [None])
    total = m(x)
    assert total._metric_obj is m
    with tf.Session() as s:
        s.run(tf.variables_initializer(m.variables))
        assert s.run(total, {x: [1.0, 3.0]}) == 4.0
        assert s.run(total, {x: [2.0]}) == 6.0            # the state accumulates
        with s.as_default():
            m.reset_states()                              # (the default session)
        assert s.run(m.result()) == 0.0
        assert s.run(total, {x: [5.0]}) == 5.0
    # no default session: the Keras session's variables are reset
    a = KM.AUC(num_thresholds=3)
    up = a.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    ks = keras.backend.get_session()
    ks.run(tf.variables_initializer(a.variables))
    ks.run(up)
    assert ks.run(a.result()) == 0.75
    a.reset_states()
    np.testing.assert_array_equal(ks.run(a.true_positives), [0, 0, 0])


def test_variables_names_collections_and_configs():
    a, a2, p = KM.AUC(num_thresholds=7), KM.AUC(), KM.Precision(thresholds=[0.2, 0.6])
    assert [v.name for v in a.variables] == ["auc/true_positives:0", "auc/true_negatives:0",
                                             "auc/false_positives:0", "auc/false_negatives:0"]
    assert a2.variables[0].name == "auc_1/true_positives:0"
    local = tf.local_variables()
    assert all(any(v is x for x in local) for v in a.variables + p.variables)
    assert not tf.global_variables() and not tf.trainable_variables()
    assert a.trainable_weights == [] and len(a.non_trainable_weights) == 4
    assert a.dtype == "float32" and a.name == "auc" and a.thresholds[0] == -EPS
    cfg = a.get_config()
    assert cfg["num_thresholds"] == 7 and cfg["curve"] == "ROC" and len(cfg["thresholds"]) == 5
    b = KM.AUC.from_config(cfg)
    assert b.thresholds == a.thresholds and b.name == "auc"
    ser = KM.serialize(p)
    assert ser["class_name"] == "Precision" and ser["config"]["thresholds"] == [0.2, 0.6]
    q = KM.deserialize(ser)
    assert isinstance(q, KM.Precision) and q.thresholds == [0.2, 0.6]
    assert isinstance(KM.get("AUC"), KM.AUC)                   # a class name: an instance
    assert KM.get("mse") is KM.mean_squared_error and KM.serialize(KM.mse) == \
        "mean_squared_error"
    assert KM.get(p) is p
    assert KM.BinaryAccuracy(threshold=0.3).get_config() == {
        "name": "binary_accuracy", "dtype": "float32", "threshold": 0.3}
    m = KM.Mean(name="loss_mean", dtype="float64")
    assert m.dtype == "float64" and m.variables[0].dtype == tf.float64


def test_custom_metric_subclass_runs_unreturned_updates():
    class PositiveCount(KM.Metric):
        def __init__(self, name="positive_count", **kwargs):
            super().__init__(name=name, **kwargs)
            self.n = self.add_weight("n", initializer="zeros")
            self.seen = self.add_weight("seen", initializer="ones")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.n.assign_add(tf.reduce_sum(tf.cast(tf.greater(y_pred, 0.5), tf.float32)))
            self.seen.assign_add(tf.cast(tf.size(y_pred), tf.float32))   # (none returned)

        def result(self):
            return self.n / self.seen

    m = PositiveCount()
    up = m.update_state(None, tf.constant([0.2, 0.7, 0.9]))
    r = m(None, tf.constant([0.6]))
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        assert s.run(m.seen) == 1.0                         # (initializer 'ones')
        s.run(up)
        assert s.run(m.result()) == 2.0 / 4.0
        assert s.run(r) == 3.0 / 5.0


def test_metric_errors():
    with pytest.raises(ValueError, match="num_thresholds` must be > 1"):
        KM.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        KM.AUC(curve="XY")
    with pytest.raises(ValueError, match="summation method"):
        KM.AUC(summation_method="trapezoid")
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]"):
        KM.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match="specificity"):
        KM.SensitivityAtSpecificity(1.5)
    with pytest.raises(ValueError, match="incompatible"):
        KM.AUC()(tf.zeros([4, 2]), tf.zeros([4, 3]))
    with pytest.raises(ValueError, match="Unknown metric function"):
        KM.get("nope")
    with pytest.raises(ValueError, match="Could not interpret"):
        KM.get(3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        KM.BinaryAccuracy(k=3)
    m = KM.Recall()
    p = tf.placeholder(tf.float32, [None])
    up = m.update_state(tf.constant([1.0, 0.0]), p)
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        with pytest.raises(InvalidArgumentError, match="predictions must be <= 1"):
            s.run(up, {p: [0.5, 1.5]})
        with pytest.raises(InvalidArgumentError, match="predictions must be >= 0"):
            s.run(up, {p: [-0.5, 0.5]})
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="another graph"):
            m.update_state([1.0], [0.5])


# ---- Attention, AdditiveAttention ------------------------------------------------------------
B, TQ, TV, D = 2, 3, 5, 4
Q = R.standard_normal((B, TQ, D)).astype(np.float32)
V = R.standard_normal((B, TV, D)).astype(np.float32)
KEY = R.standard_normal((B, TV, D)).astype(np.float32)
QM = np.array([[True, True, False], [True, True, True]])
VM = np.array([[True, False, True, True, False], [True, True, True, True, True]])


def _np_attention(q, v, k=None, scale=1.0, additive=False, causal=False, q_mask=None,
                  v_mask=None):
    q, v = q.astype(np.float64), v.astype(np.float64)
    k = v if k is None else k.astype(np.float64)
    if additive:
        s = (np.tanh(q[:, :, None, :] + k[:, None, :, :]) * scale).sum(-1)
    else:
        s = q @ k.transpose(0, 2, 1) * scale
    ok = np.ones(s.shape, bool)
    if v_mask is not None:
        ok &= v_mask[:, None, :]
    if causal:
        ok &= np.tril(np.ones(s.shape[1:], bool))
    out = _np_softmax(s - 1e9 * ~ok) @ v
    return out if q_mask is None else out * q_mask[..., None]


def _attention_cases():
    """name: (make layer, call(layer, q, v, k, qm, vm), reference(scale weight or None))."""
    L = keras.layers
    return {
        "dot": (L.Attention, lambda lay, q, v, k, qm, vm: lay([q, v]),
                lambda w: _np_attention(Q, V)),
        "dot_scaled_causal_masked": (
            lambda: L.Attention(use_scale=True, causal=True),
            lambda lay, q, v, k, qm, vm: lay([q, v, k], mask=[qm, vm]),
            lambda w: _np_attention(Q, V, KEY, w, causal=True, q_mask=QM, v_mask=VM)),
        "additive": (L.AdditiveAttention,
                     lambda lay, q, v, k, qm, vm: lay([q, v, k], mask=[None, vm]),
                     lambda w: _np_attention(Q, V, KEY, w, additive=True, v_mask=VM)),
        "additive_unscaled_causal": (
            lambda: L.AdditiveAttention(use_scale=False, causal=True),
            lambda lay, q, v, k, qm, vm: lay([q, v], mask=[qm, None]),
            lambda w: _np_attention(Q, V, additive=True, causal=True, q_mask=QM)),
    }


def test_attention_values_executor_and_xla():
    cases = _attention_cases()
    for xla in (False, True):
        g = tf.Graph()
        with g.as_default(), g.device("/device:XLA_CPU:0" if xla else None):
            q, v, k = (tf.placeholder(tf.float32, [None, t, D]) for t in (TQ, TV, TV))
            qm, vm = tf.placeholder(tf.bool, [None, TQ]), tf.placeholder(tf.bool, [None, TV])
            layers, outs = {}, {}
            for name, (make, call, _) in cases.items():
                layers[name] = make()
                outs[name] = call(layers[name], q, v, k, qm, vm)
            init = tf.global_variables_initializer()
        with g.as_default(), tf.Session(graph=g) as s:
            s.run(init)
            s.run(layers["dot_scaled_causal_masked"].scale.assign(0.7))
            got = s.run(outs, {q: Q, v: V, k: KEY, qm: QM, vm: VM})
            scales = {n: (s.run(lay.scale) if lay.scale is not None else 1.0)
                      for n, lay in layers.items()}
        assert scales["dot_scaled_causal_masked"] == np.float32(0.7)
        assert scales["additive"].shape == (D,)
        for name, (_, _, ref) in cases.items():
            assert_close(got[name], ref(scales[name]), 1e-5, 1e-5, f"xla={xla} {name}: ")
    # the scale weights: a trainable scalar initialized to 1, a glorot-uniform [dim] vector
    lim = np.sqrt(6.0 / (1 + D))
    assert np.all(np.abs(scales["additive"]) <= lim)
    assert [w.name for w in layers["dot_scaled_causal_masked"].trainable_weights] == \
        ["attention_1/scale:0"]
    assert layers["dot"].weights == [] and layers["additive_unscaled_causal"].weights == []


def test_attention_gradients_numerically():
    W = R.standard_normal((B, TQ, D)).astype(np.float32)
    q, v, k = (tf.constant(a) for a in (Q, V, KEY))
    lay = keras.layers.AdditiveAttention(causal=True)
    dot = keras.layers.Attention()
    outs = {"additive": lay([q, v, k], mask=[QM, VM]), "dot": dot([q, v, k], mask=[QM, VM])}
    grads = {n: tf.gradients(tf.reduce_sum(o * W), [q, v, k]) for n, o in outs.items()}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got, scale = s.run(grads), s.run(lay.scale)
    refs = {"additive": lambda q_, v_, k_: _np_attention(q_, v_, k_, scale, additive=True,
                                                         causal=True, q_mask=QM, v_mask=VM),
            "dot": lambda q_, v_, k_: _np_attention(q_, v_, k_, q_mask=QM, v_mask=VM)}
    args = [Q, V, KEY]
    for name, ref in refs.items():
        for i in range(3):
            def f(a, i=i, ref=ref):
                return ref(*[a if j == i else args[j] for j in range(3)])
            assert_close(got[name][i], _numeric_grad(f, args[i], W), 1e-4, 1e-5,
                         f"{name} d/d{'qvk'[i]}")


def test_attention_masks_from_embeddings_and_a_model():
    L = keras.layers
    q_ids = np.array([[3, 1, 0], [2, 2, 4]])
    v_ids = np.array([[1, 0, 5, 2, 0], [4, 4, 3, 1, 2]])
    qi, vi = L.Input((TQ,), dtype="int32"), L.Input((TV,), dtype="int32")
    emb = L.Embedding(6, D, mask_zero=True)
    qe, ve = emb(qi), emb(vi)
    att = L.Attention()
    out = att([qe, ve])                                     # the masks come with the inputs
    assert out._keras_mask is not None
    s = keras.backend.get_session()
    got, mask, table = s.run([out, out._keras_mask, emb.embeddings], {qi: q_ids, vi: v_ids})
    np.testing.assert_array_equal(mask, q_ids != 0)
    assert_close(got, _np_attention(table[q_ids], table[v_ids], q_mask=q_ids != 0,
                                    v_mask=v_ids != 0), 1e-5, 1e-5)
    # a functional model trains through the layer
    x1, x2 = L.Input((TQ, D)), L.Input((TV, D))
    h = L.AdditiveAttention()([x1, x2])
    y = L.Dense(1)(L.Flatten()(h))
    model = keras.Model([x1, x2], y)
    assert any(isinstance(layer, L.AdditiveAttention) for layer in model.layers)
    model.compile(tf.train.GradientDescentOptimizer(0.05), "mse")
    xq = R.standard_normal((16, TQ, D)).astype(np.float32)
    xv = R.standard_normal((16, TV, D)).astype(np.float32)
    target = xq.sum((1, 2))[:, None]
    before = model.evaluate([xq, xv], target, verbose=0)
    model.fit([xq, xv], target, epochs=5, batch_size=8, verbose=0)
    assert model.evaluate([xq, xv], target, verbose=0) < before
    cfg = att.get_config()
    assert cfg["use_scale"] is False and cfg["causal"] is False
    again = L.Attention.from_config({**cfg, "name": "att2", "use_scale": True})
    assert again.use_scale and not again.causal


def test_attention_errors():
    q, v = tf.zeros([2, 3, 4]), tf.zeros([2, 5, 4])
    lay = keras.layers.Attention()
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        lay(q)
    with pytest.raises(ValueError, match="inputs list of length 2 or 3"):
        lay([q])
    with pytest.raises(ValueError, match="inputs list of length 2 or 3"):
        lay([q, v, v, v])
    with pytest.raises(ValueError, match="mask must be a list,"):
        lay([q, v], mask=tf.ones([2, 3], tf.bool))
    with pytest.raises(ValueError, match="mask must be a list of length 2"):
        lay([q, v], mask=[None, None, None])
    with pytest.raises(ValueError, match="last dimension of value"):
        keras.layers.AdditiveAttention()([tf.placeholder(tf.float32, [2, 3, None]),
                                          tf.placeholder(tf.float32, [2, 5, None])])


def test_compile_with_metric_objects():
    """compile(metrics=[...]) with metric objects (and class names): their state spans the
    epoch (reset at each epoch and evaluate), History and evaluate report the whole-epoch
    value; they are not model weights."""
    x = R.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, 0] + 0.3 * R.standard_normal(64) > 0).astype(np.float32)[:, None]
    inp = keras.layers.Input((4,))
    model = keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(inp))
    model.compile("sgd", "binary_crossentropy",
                  metrics=[KM.AUC(num_thresholds=500), "accuracy", KM.Precision(), "Recall"])
    assert model.metrics_names == ["loss", "auc", "acc", "precision", "recall"]
    hist = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    assert len(hist.history["auc"]) == 2 and len(model.weights) == 2
    loss, auc, acc, prec, rec = model.evaluate(x, y, batch_size=10, verbose=0)
    p, t = model.predict(x)[:, 0], y[:, 0] == 1
    exact = ((p[t][:, None] > p[~t][None]) + 0.5 * (p[t][:, None] == p[~t][None])).mean()
    assert abs(auc - exact) < 5e-3
    assert np.isclose(prec, (t & (p > 0.5)).sum() / (p > 0.5).sum())
    assert np.isclose(rec, (t & (p > 0.5)).sum() / t.sum())
    assert np.isclose(acc, ((p > 0.5) == t).mean())
    # test_on_batch: the state so far plus the batch, then reset (as TF 1.15)
    xb, tb = x[:8], t[:8]
    pb = model.predict(xb)[:, 0]
    model.reset_metrics()
    for _ in range(2):
        out = model.test_on_batch(xb, y[:8])
        assert np.isclose(out[3], (tb & (pb > 0.5)).sum() / max((pb > 0.5).sum(), 1))
