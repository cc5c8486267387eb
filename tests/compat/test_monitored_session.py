"""tf.train.MonitoredTrainingSession with StopAtStepHook, LoggingTensorHook, a user
SessionRunHook and the default CheckpointSaverHook: a training loop that stops at the
requested step, logs, checkpoints into checkpoint_dir and, in a new graph, resumes from
the latest checkpoint (global step and weights) as TF 1.x's does."""

import logging
import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

R = np.random.default_rng(3)
X = R.standard_normal((16, 2)).astype(np.float32)
Y = X @ np.array([[2.0], [-1.0]], np.float32) + 0.5


def _model():
    gs = tf.train.get_or_create_global_step()
    x, y = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, x, y, w, loss, step


class _Counter(tf.train.SessionRunHook):
    def __init__(self, loss):
        self.loss, self.calls, self.losses = loss, [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("created")

    def before_run(self, run_context):
        assert run_context.original_args.feed_dict is not None
        return tf.train.SessionRunArgs(self.loss)

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))

    def end(self, session):
        self.calls.append("end")


def test_train_stop_log_checkpoint_and_resume(tmp_path, caplog):
    ckpt = str(tmp_path / "ckpt")
    gs, x, y, w, loss, step = _model()
    counter = _Counter(loss)
    hooks = [tf.train.StopAtStepHook(last_step=30), counter,
             tf.train.LoggingTensorHook({"loss": loss, "step": gs}, every_n_iter=10)]
    caplog.set_level(logging.INFO, logger="tensorflow")
    n = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=hooks,
                                           save_checkpoint_steps=10,
                                           save_summaries_steps=None,
                                           log_step_count_steps=None) as sess:
        while not sess.should_stop():
            sess.run(step, feed_dict={x: X, y: Y})
            n += 1
    assert n == 30 and counter.calls == ["begin", "created", "end"]
    assert len(counter.losses) == 30 and counter.losses[-1] < 0.1 * counter.losses[0]
    logged = [r.getMessage() for r in caplog.records if "loss = " in r.getMessage()]
    assert len(logged) == 3 and logged[0].startswith("loss = ") and "step = " in logged[0]
    assert logged[1].endswith(" sec)")  # the time since the last log
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-30")
    assert {f"model.ckpt-{s}.index" for s in (0, 10, 20, 30)} <= set(os.listdir(ckpt))
    w_trained = tf.train.load_variable(ckpt, "w")
    with pytest.raises(InvalidArgumentError, match="finalized"):
        tf.constant(1.0)

    with tf.Graph().as_default():   # resume: restored, not initialized
        gs, x, y, w, loss, step = _model()
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(num_steps=5)],
                save_checkpoint_secs=None, log_step_count_steps=None) as sess:
            raw = sess._tf_sess()
            assert raw.run(gs) == 30
            np.testing.assert_array_equal(raw.run(w), w_trained)
            k = 0
            while not sess.should_stop():
                sess.run(step, {x: X, y: Y})
                k += 1
            assert k == 5 and raw.run(gs) == 35


def test_out_of_range_ends_the_loop_quietly_and_hook_errors():
    gs, x, y, w, loss, step = _model()
    calls = []

    class Ender(tf.train.SessionRunHook):
        def end(self, session):
            calls.append("end")
    with tf.train.MonitoredTrainingSession(hooks=[Ender()]) as sess:
        sess.run(step, {x: X, y: Y})
        raise tf.errors.OutOfRangeError("input exhausted")
    assert calls == ["end"]
    with pytest.raises(InvalidArgumentError, match="last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(InvalidArgumentError, match="SessionRunHook"):
        tf.train.MonitoredSession(hooks=[object()])


def test_default_hooks_write_summaries_and_step_rate(tmp_path):
    pytest.importorskip("tensorboardX")
    gs, x, y, w, loss, step = _model()
    tf.summary.scalar("loss", loss)
    with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(last_step=12)],
            save_summaries_steps=5, log_step_count_steps=4, save_checkpoint_secs=None) as sess:
        while not sess.should_stop():
            sess.run(step, {x: X, y: Y})
    from tensorboardX.proto import event_pb2
    from tensorboardX.event_file_writer import EventFileWriter  # noqa: F401 (writer present)
    events = []
    for f in os.listdir(tmp_path):
        if "tfevents" in f:
            events += _read_events(tmp_path / f, event_pb2)
    tags = [(v.tag, e.step) for e in events for v in e.summary.value]
    # the global step fetched with the training op reads the variable after this step's
    # update (as the session fetches every variable read after the step's assignments)
    assert [s for t, s in tags if t == "loss"] == [1, 6, 11]
    assert any(t == "global_step/sec" for t, _ in tags)
    assert not any(f.startswith("model.ckpt") for f in os.listdir(tmp_path))


def _read_events(path, event_pb2):
    """The Event protobufs of a TFRecord file (length, crc, data, crc per record)."""
    import struct
    data = path.read_bytes()
    out, i = [], 0
    while i < len(data):
        (n,) = struct.unpack("<Q", data[i:i + 8])
        ev = event_pb2.Event()
        ev.ParseFromString(data[i + 12:i + 12 + n])
        out.append(ev)
        i += 12 + n + 4
    return out


def test_tf1_script_dataset_metrics_and_monitored_session_under_xla(tmp_path):
    """A TF1-in-TF2 style script: tf.data input, variance-scaling initializers, a metric,
    Adam, a MonitoredTrainingSession ending when the dataset runs out (OutOfRangeError),
    auto-jit on; the step's math compiles into one cluster."""
    tf.disable_v2_behavior()
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((96, 4)).astype(np.float32)
    ys = (xs @ np.array([1.0, -1.0, 0.5, 0.0], np.float32) > 0).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(96, seed=2).batch(16).repeat(8)
    x, y = ds.make_one_shot_iterator().get_next()
    gs = tf.train.get_or_create_global_step()
    h = tf.layers.dense(x, 8, tf.nn.relu,
                        kernel_initializer=tf.variance_scaling_initializer(2.0))
    logits = tf.layers.dense(h, 2, kernel_initializer=tf.glorot_normal_initializer(seed=1))
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    acc, acc_up = tf.metrics.accuracy(y, tf.argmax(logits, 1))
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)
    config = tf.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    steps = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), config=config,
                                           save_checkpoint_steps=20,
                                           log_step_count_steps=None,
                                           save_summaries_steps=None) as sess:
        summary = sess._tf_sess().cluster_summary([train, acc_up])
        assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
        while not sess.should_stop():
            sess.run([train, acc_up])
            steps += 1
    assert steps == 48  # 96 / 16 * 8 batches, then OutOfRangeError ended the loop
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-48")
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_tensor("global_step") == 48


def test_coordinator_and_start_queue_runners():
    import threading
    coord = tf.train.Coordinator()
    seen = []

    def worker(i):
        with coord.stop_on_exception():
            while not coord.should_stop():
                seen.append(i)
                if len(seen) > 20:
                    raise ValueError("worker failed")
                coord.wait_for_stop(0.001)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="worker failed"):
        coord.join(threads)
    assert coord.should_stop() and coord.joined
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError("done"))  # a clean stop: not re-raised
    clean.join([])
    tf.constant(1.0)
    sess = tf.Session()
    assert tf.train.start_queue_runners(sess=sess, coord=clean) == []


def test_supervisor_managed_session_saves_and_restores(tmp_path):
    gs, x, y, w, loss, step = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=1e-9,
                             save_summaries_secs=0)
    assert sv.global_step is gs and sv.saver is not None
    with sv.managed_session() as sess:
        for _ in range(3):
            if sv.should_stop():
                break
            sess.run(step, {x: X, y: Y})
        trained = sess.run(w)
        sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
    assert any(f.startswith("model.ckpt-1") for f in os.listdir(tmp_path))  # the service
    with pytest.raises(InvalidArgumentError, match="finalized"):
        tf.constant(0.0)
    with tf.Graph().as_default():
        gs, x, y, w, loss, step = _model()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
        with sv.managed_session() as sess:   # restored, not initialized
            assert sess.run(gs) == 3
            np.testing.assert_array_equal(sess.run(w), trained)
            raise tf.errors.OutOfRangeError("input done")   # a clean stop
        assert sv.should_stop()
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(logdir=None)
        with pytest.raises(ValueError, match="boom"):
            with sv.managed_session():
                raise ValueError("boom")
