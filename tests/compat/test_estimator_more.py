"""The estimator workflow of TF 1.x production scripts: train_and_evaluate (evaluations at
the checkpoint saves, exporters), export_savedmodel with raw and parsing receivers loaded
back with tf.saved_model.loader.load, warm starting and init_from_checkpoint, and the hooks
and summary writers around them (FeedFnHook, ProfilerHook, CheckpointSaverListener,
FileWriterCache)."""

import json
import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

R = np.random.default_rng(0)
X = R.standard_normal((200, 4)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5, 0.0], np.float32) > 0).astype(np.int32)


def model_fn(features, labels, mode, params):
    h = tf.layers.dense(features["x"], 8, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 2)
    probs = tf.nn.softmax(logits)
    preds = {"classes": tf.argmax(logits, 1), "probabilities": probs}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=preds, export_outputs={
            "serving_default": tf.estimator.export.PredictOutput(preds),
            "probs": tf.estimator.export.PredictOutput(probs)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        op = tf.train.GradientDescentOptimizer(params.get("lr", 0.3)).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=op)
    acc = tf.metrics.accuracy(labels=labels, predictions=preds["classes"])
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops={"accuracy": acc})


def train_fn():
    return tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, batch_size=20, num_epochs=None,
                                              shuffle=True)


def eval_fn():
    return tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, batch_size=100,
                                              shuffle=False)


def raw_receiver():
    return tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 4])})


def recording(est):
    """est.evaluate, recording each result."""
    seen = []
    orig = est.evaluate

    def evaluate(*a, **k):
        seen.append(orig(*a, **k))
        return seen[-1]
    est.evaluate = evaluate
    return seen


def load_and_run(path, signature, feeds):
    """Loads the SavedModel at path in a fresh graph and runs a signature's outputs."""
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], path)
        sig = meta.signature_def[signature]
        outs = {k: v.name for k, v in sig.outputs.items()}
        return sess.run(outs, {sig.inputs[k].name: v for k, v in feeds.items()}), meta


def serialized(x):
    return np.array([tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(float_list=tf.train.FloatList(value=[float(v[i])]))
        for k, v in x.items()})).SerializeToString() for i in range(len(next(iter(
            x.values()))))], dtype=object)


# ---- train_and_evaluate --------------------------------------------------------------------

def test_train_and_evaluate_custom_model_fn(tmp_path):
    cfg = tf.estimator.RunConfig(tf_random_seed=1, save_checkpoints_steps=20,
                                 keep_checkpoint_max=2, log_step_count_steps=1000)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=cfg)
    seen = recording(est)
    exporters = [tf.estimator.LatestExporter("latest", raw_receiver(), exports_to_keep=2),
                 tf.estimator.BestExporter("best", raw_receiver()),
                 tf.estimator.FinalExporter("final", raw_receiver())]
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_fn(), max_steps=60),
        tf.estimator.EvalSpec(eval_fn(), steps=None, exporters=exporters, throttle_secs=1))
    # one evaluation per checkpoint save after the first (step 0), on that checkpoint
    assert [m["global_step"] for m in seen] == [20, 40, 60]
    assert metrics == seen[-1] and metrics["accuracy"] > 0.8
    # keep_checkpoint_max=2
    kept = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert kept == ["model.ckpt-40.index", "model.ckpt-60.index"]
    # the exporters of the last evaluation: latest and final exported, best if it improved
    export = tmp_path / "export"
    assert len(os.listdir(export / "latest")) == 2          # exports_to_keep=2 of 3
    assert len(os.listdir(export / "final")) == 1
    losses = [m["loss"] for m in seen]
    improved = [i for i in range(3) if all(losses[i] < losses[j] for j in range(i))]
    assert len(os.listdir(export / "best")) == len(improved)
    assert len(exports) == 3 and all(e is None or isinstance(e, bytes) for e in exports)
    latest, best, final = exports
    assert os.path.isdir(latest) and os.path.isdir(final)
    assert (best is not None) == (2 in improved)
    # the final export serves the model of step 60
    want = [p["probabilities"] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        x={"x": X[:10]}, shuffle=False))]
    got, meta = load_and_run(final.decode(), "probs", {"x": X[:10]})
    np.testing.assert_allclose(got["output"], np.stack(want), rtol=1e-5, atol=1e-6)
    # nothing left to train: train_and_evaluate returns without evaluating
    assert tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_fn(), max_steps=60),
        tf.estimator.EvalSpec(eval_fn())) == (None, None)
    assert len(seen) == 3


def test_best_exporter_keeps_the_best_by_loss(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"))
    est.train(train_fn(), steps=5)
    ckpt = est.latest_checkpoint()
    ex = tf.estimator.BestExporter("best", raw_receiver(), exports_to_keep=None)
    where = str(tmp_path / "best")
    assert ex.export(est, where, ckpt, {"loss": 1.0}, False) is not None
    assert ex.export(est, where, ckpt, {"loss": 2.0}, False) is None     # worse: none
    assert ex.export(est, where, ckpt, {"loss": 0.5}, False) is not None
    assert len(os.listdir(where)) == 2
    final = tf.estimator.FinalExporter("final", raw_receiver())
    assert final.export(est, where, ckpt, {"loss": 0.1}, False) is None
    with pytest.raises(InvalidArgumentError, match="unique"):
        tf.estimator.EvalSpec(eval_fn(), exporters=[final, final])


def test_train_and_evaluate_premade_dnn_classifier(tmp_path):
    cols = [tf.feature_column.numeric_column(k) for k in "abcd"]
    feats = {k: X[:, i] for i, k in enumerate("abcd")}
    spec = {k: tf.FixedLenFeature([1], tf.float32) for k in "abcd"}
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    clf = tf.estimator.DNNClassifier(
        hidden_units=[8], feature_columns=cols, n_classes=2, model_dir=str(tmp_path),
        config=tf.estimator.RunConfig(tf_random_seed=2, save_checkpoints_steps=25,
                                      log_step_count_steps=1000))
    seen = recording(clf)
    metrics, exports = tf.estimator.train_and_evaluate(
        clf, tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn(
            x=feats, y=Y, batch_size=40, num_epochs=None, shuffle=True), max_steps=50),
        tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn(
            x=feats, y=Y, batch_size=100, shuffle=False), steps=1,
            exporters=tf.estimator.LatestExporter("exporter", receiver)))
    assert [m["global_step"] for m in seen] == [25, 50]
    assert metrics["global_step"] == 50 and {"accuracy", "auc", "average_loss"} <= set(metrics)
    (path,) = exports
    sub = {k: v[:8] for k, v in feats.items()}
    want = list(clf.predict(tf.estimator.inputs.numpy_input_fn(x=sub, shuffle=False)))
    got, meta = load_and_run(path.decode(), "serving_default", {"inputs": serialized(sub)})
    assert set(meta.signature_def) == {"serving_default", "classification", "regression",
                                       "predict"}
    np.testing.assert_allclose(got["scores"], [p["probabilities"] for p in want], rtol=1e-5,
                               atol=1e-6)
    assert got["classes"][0].tolist() == [b"0", b"1"]
    pred, _ = load_and_run(path.decode(), "predict", {"examples": serialized(sub)})
    np.testing.assert_array_equal(pred["class_ids"], [p["class_ids"] for p in want])


# ---- export_savedmodel ----------------------------------------------------------------------

def test_export_savedmodel_custom_raw_and_parsing(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"),
                                 config=tf.estimator.RunConfig(tf_random_seed=3))
    with pytest.raises(InvalidArgumentError, match="Couldn't find trained model"):
        est.export_savedmodel(str(tmp_path / "e"), raw_receiver())
    est.train(train_fn(), steps=30)
    want = list(est.predict(tf.estimator.inputs.numpy_input_fn(x={"x": X[:12]},
                                                               shuffle=False)))
    extra = tmp_path / "vocab.txt"
    extra.write_text("a\nb\n")
    raw = est.export_savedmodel(str(tmp_path / "e"), raw_receiver(),
                                assets_extra={"vocab.txt": str(extra)})
    assert isinstance(raw, bytes) and os.path.basename(raw).isdigit()
    assert os.path.isfile(os.path.join(raw, b"assets.extra", b"vocab.txt"))
    got, meta = load_and_run(raw.decode(), "serving_default", {"x": X[:12]})
    assert set(meta.signature_def) == {"serving_default", "probs"}
    np.testing.assert_allclose(got["probabilities"], [p["probabilities"] for p in want],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["classes"], [p["classes"] for p in want])

    def parsing_receiver():   # a hand-written receiver: the features the model_fn expects
        ex = tf.placeholder(tf.string, [None], name="input_example_tensor")
        f = tf.parse_example(ex, {"x": tf.FixedLenFeature([4], tf.float32)})
        return tf.estimator.export.ServingInputReceiver(f, {"examples": ex})
    text = est.export_saved_model(str(tmp_path / "e"), parsing_receiver, as_text=True)
    assert text != raw and os.path.isfile(os.path.join(text, b"saved_model.pbtxt"))
    examples = np.array([tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))}))
        .SerializeToString() for row in X[:12]], dtype=object)
    got2, _ = load_and_run(text.decode(), "probs", {"examples": examples})
    np.testing.assert_allclose(got2["output"], got["probabilities"], rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ServingInputReceiver"):
        est.export_savedmodel(str(tmp_path / "e"), lambda: {"x": X})


def test_export_premade_regressor_and_raw_classifier(tmp_path):
    cols = [tf.feature_column.numeric_column("x", shape=[4])]
    target = (X @ np.array([1.0, 2.0, -1.0, 0.5], np.float32)).astype(np.float32)
    reg = tf.estimator.LinearRegressor(cols, model_dir=str(tmp_path / "r"))
    reg.train(tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=target, batch_size=50,
                                                 num_epochs=None, shuffle=True), steps=20)
    want = [p["predictions"] for p in reg.predict(tf.estimator.inputs.numpy_input_fn(
        x={"x": X[:6]}, shuffle=False))]
    spec = tf.feature_column.make_parse_example_spec(cols) if hasattr(
        tf.feature_column, "make_parse_example_spec") else \
        {"x": tf.FixedLenFeature([4], tf.float32)}
    path = reg.export_savedmodel(str(tmp_path / "e"),
                                 tf.estimator.export.build_parsing_serving_input_receiver_fn(
                                     spec))
    examples = np.array([tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))}))
        .SerializeToString() for row in X[:6]], dtype=object)
    got, meta = load_and_run(path.decode(), "serving_default", {"inputs": examples})
    assert set(meta.signature_def) == {"serving_default", "regression", "predict"}
    assert meta.signature_def["regression"].method_name == "tensorflow/serving/regress"
    np.testing.assert_allclose(got["outputs"], np.stack(want), rtol=1e-5, atol=1e-6)
    # a classifier's classify signatures take serialized Examples: with a raw receiver only
    # the predict signature is exported (TF's "excluded from export")
    clf = tf.estimator.DNNClassifier([4], cols, n_classes=3, model_dir=str(tmp_path / "c"))
    clf.train(tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y + (X[:, 3] > 1), batch_size=50,
                                                 num_epochs=None, shuffle=True), steps=5)
    path = clf.export_savedmodel(str(tmp_path / "e"), raw_receiver())
    got, meta = load_and_run(path.decode(), "predict", {"x": X[:5]})
    assert set(meta.signature_def) == {"predict"}
    want = list(clf.predict(tf.estimator.inputs.numpy_input_fn(x={"x": X[:5]}, shuffle=False)))
    np.testing.assert_allclose(got["probabilities"], [p["probabilities"] for p in want],
                               rtol=1e-5, atol=1e-6)


# ---- warm starting ---------------------------------------------------------------------------

class _Values(tf.train.SessionRunHook):
    """The variables' values once the session is created (before any step)."""

    def __init__(self):
        self.values = {}

    def after_create_session(self, session, coord):
        vs = tf.global_variables()
        self.values = dict(zip([v.op.name for v in vs], session.run(vs)))


def test_warm_start_from_estimator_checkpoint(tmp_path):
    src = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "src"))
    src.train(train_fn(), steps=30)
    # all trainable variables, from the model_dir (a string)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "a"),
                                 warm_start_from=str(tmp_path / "src"))
    seen = _Values()
    est.train(train_fn(), steps=5, hooks=[seen])
    for n in ("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"):
        np.testing.assert_array_equal(seen.values[n], src.get_variable_value(n))
        assert not np.array_equal(est.get_variable_value(n), src.get_variable_value(n))
    assert seen.values["global_step"] == 0 and est.get_variable_value("global_step") == 5
    # only the first layer, from a renamed checkpoint variable; the checkpoint file itself
    ws = tf.estimator.WarmStartSettings(src.latest_checkpoint(), vars_to_warm_start="dense/",
                                        var_name_to_prev_var_name={
                                            "dense/bias": "dense_1/bias"})
    with pytest.raises(InvalidArgumentError, match="Shape of variable dense/bias"):
        tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "b"),
                               warm_start_from=ws).train(train_fn(), steps=1)
    ws = ws._replace(var_name_to_prev_var_name={})
    est2 = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "c"),
                                  warm_start_from=ws)
    seen2 = _Values()
    est2.train(train_fn(), steps=1, hooks=[seen2])
    np.testing.assert_array_equal(seen2.values["dense/kernel"],
                                  src.get_variable_value("dense/kernel"))
    assert not np.array_equal(seen2.values["dense_1/kernel"],
                              src.get_variable_value("dense_1/kernel"))
    # a second train() restores est2's own checkpoint, not the warm start's
    before = est2.get_variable_value("dense/kernel")
    seen3 = _Values()
    est2.train(train_fn(), steps=1, hooks=[seen3])
    np.testing.assert_array_equal(seen3.values["dense/kernel"], before)
    assert seen3.values["global_step"] == 1


def test_warm_start_premade_from_saved_model(tmp_path):
    cols = [tf.feature_column.numeric_column("x", shape=[4])]
    inp = tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, batch_size=50, num_epochs=None,
                                             shuffle=True)
    src = tf.estimator.DNNClassifier([6], cols, model_dir=str(tmp_path / "src"))
    src.train(inp, steps=10)
    exported = src.export_savedmodel(str(tmp_path / "e"), raw_receiver())
    dst = tf.estimator.DNNClassifier([6], cols, model_dir=str(tmp_path / "dst"),
                                     warm_start_from=exported.decode())
    seen = _Values()
    dst.train(inp, steps=3, hooks=[seen])
    for n in ("dnn/hiddenlayer_0/kernel", "dnn/logits/bias"):
        np.testing.assert_array_equal(seen.values[n], src.get_variable_value(n))
    assert dst.get_variable_value("global_step") == 3


def test_init_from_checkpoint_assignment_maps(tmp_path):
    vals = {"old/w": np.arange(6, dtype=np.float32).reshape(2, 3),
            "old/sub/b": np.array([7.0, 8.0], np.float32), "v": np.float32(3.5)}
    with tf.Graph().as_default():
        vs = [tf.get_variable(n, initializer=tf.constant(x)) for n, x in vals.items()]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver(vs).save(s, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():
        w = tf.get_variable("new/w", [2, 3])
        b = tf.get_variable("new/sub/b", [2])
        u = tf.get_variable("u", [])
        z = tf.get_variable("z", [], initializer=tf.zeros_initializer())
        other = tf.get_variable("other", [2], initializer=tf.ones_initializer())
        tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/", "v": "u"})
        tf.train.init_from_checkpoint(str(tmp_path / "model.ckpt"), {"v": z})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got = s.run([w, b, u, z, other])
    np.testing.assert_array_equal(got[0], vals["old/w"])
    np.testing.assert_array_equal(got[1], vals["old/sub/b"])
    assert got[2] == 3.5 and got[3] == 3.5 and got[4].tolist() == [1.0, 1.0]
    # the checkpoint's root into a scope
    with tf.Graph().as_default():
        with tf.variable_scope("s"):
            sv = tf.get_variable("v", [])
            sw = tf.get_variable("old/w", [2, 3])
        tf.train.init_from_checkpoint(str(tmp_path), {"/": "s/"})
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(sv) == 3.5
            np.testing.assert_array_equal(s.run(sw), vals["old/w"])
    with tf.Graph().as_default():
        tf.get_variable("new/w", [2, 3])
        with pytest.raises(InvalidArgumentError, match="not found in"):
            tf.train.init_from_checkpoint(str(tmp_path), {"missing": "new/w"})
        with pytest.raises(InvalidArgumentError, match="'scope/': 'other_scope/'"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old": "new/"})
        with pytest.raises(InvalidArgumentError, match="Shape of variable"):
            tf.train.init_from_checkpoint(str(tmp_path), {"v": "new/w"})


# ---- hooks and summaries ---------------------------------------------------------------------

def _loop(tmp_path, hooks, steps=6, **kw):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder_with_default(tf.constant(X[:10]), [None, 4])
        w = tf.get_variable("w", [4, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        hooks = hooks(x) if callable(hooks) else hooks
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), hooks=hooks + [
                    tf.train.StopAtStepHook(last_step=steps)], **kw) as sess:
            losses = []
            while not sess.should_stop():
                losses.append(sess.run([train, loss])[1])
        return losses


def test_feed_fn_and_profiler_hooks(tmp_path):
    fed = []

    def feed_fn_hooks(x):
        def feed():
            fed.append(len(fed))
            return {x: X[:10] * (1 + len(fed))}
        return [tf.train.FeedFnHook(feed),
                tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path / "prof"))]
    losses = _loop(tmp_path, feed_fn_hooks, save_checkpoint_secs=None)
    assert len(losses) == 6 and len(fed) == 6
    traces = sorted(f for f in os.listdir(tmp_path / "prof") if f.startswith("timeline-"))
    assert traces == ["timeline-2.json", "timeline-4.json", "timeline-6.json"]
    trace = json.loads((tmp_path / "prof" / traces[0]).read_text())
    names = {e.get("name") for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert {"MatMul", "ApplyGradientDescent", "AssignAdd"} <= names, names


def test_file_writer_cache_one_event_file_and_checkpoint_listener(tmp_path):
    pytest.importorskip("tensorboardX")
    a = tf.summary.FileWriterCache.get(str(tmp_path / "d"))
    assert tf.summary.FileWriterCache.get(str(tmp_path / "d") + "/") is a
    assert tf.summary.FileWriterCache.get(str(tmp_path / "e")) is not a

    calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            calls.append("begin")

        def after_save(self, session, step):
            calls.append(("after", step))

        def end(self, session, step):
            calls.append(("end", step))

    def hooks(x):
        tf.summary.scalar("w_norm", tf.reduce_sum(tf.trainable_variables()[0]))
        return [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3,
                                             listeners=[Listener()])]
    _loop(tmp_path, hooks, steps=7, save_summaries_steps=2, log_step_count_steps=2,
          save_checkpoint_secs=None)
    assert calls == ["begin", ("after", 0), ("after", 3), ("after", 6), ("after", 7),
                     ("end", 7)]
    _loop(tmp_path, lambda x: [], steps=9, save_checkpoint_steps=1, save_summaries_steps=1)
    files = [f for f in os.listdir(tmp_path) if "tfevents" in f]
    assert len(files) == 1, files     # summaries, step rate, checkpoints of both runs
    from tensorboardX.proto import event_pb2

    from .test_monitored_session import _read_events
    events = _read_events(tmp_path / files[0], event_pb2)
    ckpts = [e.step for e in events if e.HasField("session_log") and
             e.session_log.status == event_pb2.SessionLog.CHECKPOINT]
    assert ckpts == [0, 3, 6, 7, 7, 8, 9]
    assert {v.tag for e in events for v in e.summary.value} >= {"w_norm", "global_step/sec"}


def test_tensor_and_audio_summaries():
    pytest.importorskip("tensorboardX")
    clip = np.sin(np.linspace(0, 60, 2 * 300)).reshape(2, 300).astype(np.float32)
    a = tf.summary.audio("snd", tf.constant(clip), 8000, max_outputs=1)
    t = tf.summary.tensor_summary("t", tf.constant([[1.0, 2.0]]), summary_description="d")
    with tf.Session() as s:
        ra, rt = s.run([a, t])
    pa = tf.summary.Summary.FromString(np.asarray(ra, dtype=object)[()])
    (v,) = pa.value
    assert v.tag == "snd/audio" and v.audio.sample_rate == 8000
    assert v.audio.length_frames == 300 and v.audio.encoded_audio_string[:4] == b"RIFF"
    import io
    import wave
    with wave.open(io.BytesIO(v.audio.encoded_audio_string)) as wf:
        pcm = np.frombuffer(wf.readframes(300), "<i2")
    np.testing.assert_allclose(pcm / 32767.0, clip[0], atol=1e-4)
    pt = tf.summary.Summary.FromString(np.asarray(rt, dtype=object)[()])
    (tv,) = pt.value
    assert tv.metadata.summary_description == "d"
    assert np.frombuffer(tv.tensor.tensor_content, np.float32).tolist() == [1.0, 2.0]
    with pytest.raises(InvalidArgumentError, match="float"):
        tf.summary.audio("bad", tf.constant([[1, 2]]), 8000)


# ---- eval summaries, early stopping, evaluation hooks ------------------------------------------

class _Counter(tf.train.SessionRunHook):
    def __init__(self):
        self.runs, self.ends = 0, 0

    def after_run(self, run_context, run_values):
        self.runs += 1

    def end(self, session):
        self.ends += 1


def test_early_stopping_eval_summaries_and_eval_hooks(tmp_path):
    pytest.importorskip("tensorboardX")
    cfg = tf.estimator.RunConfig(tf_random_seed=4, save_checkpoints_steps=10,
                                 log_step_count_steps=1000)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=cfg,
                                 params={"lr": 0.0})          # the loss never decreases
    stop = tf.estimator.experimental.stop_if_no_decrease_hook(
        est, "loss", max_steps_without_decrease=20, run_every_secs=None, run_every_steps=1)
    counter = _Counter()
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_fn(), max_steps=500, hooks=[stop]),
        tf.estimator.EvalSpec(eval_fn(), steps=None, hooks=[counter]))
    # evaluations at 10, 20, 30; the hook sees the third after step 31 and stops there
    assert metrics["global_step"] == 31
    from xlapy.compat.v1.summary.event_reader import read_eval_metrics
    evals = read_eval_metrics(est.eval_dir())
    assert list(evals) == [10, 20, 30, 31]
    assert evals[31]["loss"] == pytest.approx(metrics["loss"], rel=1e-6)
    assert set(evals[10]) == {"loss", "accuracy"}
    assert counter.ends == 4 and counter.runs == 4 * 2      # 200 examples, batches of 100
    events = list(tf.train.summary_iterator(next(
        os.path.join(est.eval_dir(), f) for f in os.listdir(est.eval_dir()))))
    assert events[0].file_version.startswith("brain.Event")
    # a BestExporter of a later run starts from the best evaluation in the event files
    ex = tf.estimator.BestExporter("best", raw_receiver())
    ckpt = est.latest_checkpoint()
    worse = {"loss": metrics["loss"] + 1.0, "global_step": 40}
    assert ex.export(est, str(tmp_path / "b"), ckpt, worse, False) is None
    better = {"loss": metrics["loss"] - 1.0, "global_step": 41}
    assert ex.export(est, str(tmp_path / "b"), ckpt, better, False) is not None
    with pytest.raises(InvalidArgumentError, match="Only one of"):
        tf.estimator.experimental.stop_if_higher_hook(est, "accuracy", 0.9, run_every_steps=1)
