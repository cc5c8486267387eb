"""tf.contrib.summary (TF 1.15's V2 summary API in graph mode): the events its ops write,
read back with tf.train.summary_iterator (tags, steps, values, histogram, image, audio,
generic tensors, graph, imported events), with and without XLA; the recording modes; the
writer's life (init, flush, close, reopen, sharing); and the errors."""

import io
import os
import wave

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from xlapy.compat.v1.summary.event_reader import events_in

from .conftest import jit_config

pytest.importorskip("tensorboardX", reason="tf.summary writes through tensorboardX")
cs = tf.contrib.summary


def _files(logdir):
    return sorted(f for f in os.listdir(logdir) if ".tfevents." in f)


def _values(logdir):
    """[(step, tag, Summary.Value)] of every summary event in logdir, in order."""
    return [(ev.step, v.tag, v) for ev in events_in(str(logdir)) if ev.HasField("summary")
            for v in ev.summary.value]


def _simple(logdir):
    return [(s, t, v.simple_value) for s, t, v in _values(logdir)]


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_scalar_histogram_image_audio_generic(tmp_path, xla):
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.full((4, 2), 0.5, np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    writer = cs.create_file_writer(str(tmp_path))
    meta = tf.summary.SummaryMetadata(
        plugin_data=tf.summary.SummaryMetadata.PluginData(plugin_name="custom"))
    with writer.as_default(), cs.always_record_summaries():
        with tf.name_scope("losses"):
            s_loss = cs.scalar("mse", loss)
        s_hist = cs.histogram("weights", w, family="params", step=7)
        s_img = cs.image("inputs", tf.reshape(x, [-1, 2, 2, 1]), max_images=2)
        s_audio = cs.audio("clip", tf.reshape(x, [-1, 4]) - 0.5, 8000, 1)
        s_gen = cs.generic("raw", tf.constant([[1, 2], [3, 4]], tf.int32), metadata=meta,
                           step=tf.constant(5, tf.int64))
    assert s_loss.dtype == tf.bool and s_loss.name.startswith("losses/mse/")
    assert cs.all_summary_ops() == [s_loss, s_hist, s_img, s_audio, s_gen]
    feed = {x: np.array([[0, 0.25, 0.5, 1], [1, 1, 0, 0.5]], np.float32)}
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    sess.run(cs.summary_writer_initializer_op())
    want = []
    for _ in range(2):
        w0 = sess.run(w)
        out = sess.run([cs.all_summary_ops(), loss, train], feed)
        assert out[0] == [True] * 5
        want.append((float(out[1]), w0))
    if xla:  # the training step still compiles; only the summary ops stay in the executor
        assert sess.cluster_summary([cs.all_summary_ops(), train], feed).startswith(
            "XLA clustering: 1 cluster(s)")
    sess.run(writer.close())
    assert len(_files(tmp_path)) == 1 and _files(tmp_path)[0].endswith(".v2")
    vals = _values(tmp_path)
    scalars = [(s, v.simple_value) for s, t, v in vals if t == "losses/mse"]
    assert [s for s, _ in scalars] == [0, 1]  # the global step, read before train ran
    np.testing.assert_allclose([v for _, v in scalars], [l for l, _ in want], rtol=1e-6)
    hists = [(s, v.histo) for s, t, v in vals if t == "params/params/weights"]
    assert [s for s, _ in hists] == [7, 7]
    for (_, h), (_, w0) in zip(hists, want):
        assert h.num == w0.size and h.min == w0.min() and h.max == w0.max()
        np.testing.assert_allclose(h.sum, w0.sum(), rtol=1e-6)
        assert sum(h.bucket) == w0.size
    imgs = [(t, v.image) for s, t, v in vals if t.startswith("inputs/")]
    assert [t for t, _ in imgs[:2]] == ["inputs/image/0", "inputs/image/1"]
    assert (imgs[0][1].height, imgs[0][1].width, imgs[0][1].colorspace) == (2, 2, 1)
    assert imgs[0][1].encoded_image_string.startswith(b"\x89PNG")
    clips = [v.audio for s, t, v in vals if t == "clip/audio"]
    assert len(clips) == 2 and clips[0].sample_rate == 8000 and clips[0].length_frames == 4
    with wave.open(io.BytesIO(clips[0].encoded_audio_string)) as wf:
        pcm = np.frombuffer(wf.readframes(4), "<i2")
    np.testing.assert_array_equal(pcm, (np.array([-0.5, -0.25, 0, 0.5]) * 32767).astype(int))
    gens = [(s, v) for s, t, v in vals if t == "raw"]
    assert [s for s, _ in gens] == [5, 5]
    g = gens[0][1]
    assert g.metadata.plugin_data.plugin_name == "custom"
    assert [d.size for d in g.tensor.tensor_shape.dim] == [2, 2]
    np.testing.assert_array_equal(np.frombuffer(g.tensor.tensor_content, np.int32),
                                  [1, 2, 3, 4])


def test_recording_modes(tmp_path):
    gs = tf.train.get_or_create_global_step()
    inc = tf.assign_add(gs, 1)
    x = tf.placeholder(tf.float32, [])
    writer = cs.create_file_writer(str(tmp_path), flush_millis=100)
    with writer.as_default():
        assert tf.Session().run(cs.should_record_summaries()) == False  # noqa: E712
        default = cs.scalar("default", x)          # recording is off by default
        with cs.always_record_summaries():
            always = cs.scalar("always", x * 10.0)
            with cs.never_record_summaries():
                never = cs.scalar("never", x)
        with cs.record_summaries_every_n_global_steps(3):
            every3 = cs.scalar("every3", x, family="f")
            should = cs.should_record_summaries()
    no_writer = cs.scalar("nowriter", x)
    assert no_writer.type == "NoOp"
    assert no_writer not in cs.all_summary_ops() and len(cs.all_summary_ops()) == 4
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with writer.as_default():
            cs.initialize()
        for i in range(7):
            got.append(sess.run([default, always, never, every3, should], {x: float(i)}))
            sess.run(inc)
        sess.run(cs.flush(writer))
    got = np.array(got, bool)
    assert not got[:, 0].any() and got[:, 1].all() and not got[:, 2].any()
    np.testing.assert_array_equal(got[:, 3], [i % 3 == 0 for i in range(7)])
    np.testing.assert_array_equal(got[:, 4], got[:, 3])
    assert _simple(tmp_path) == [
        v for i in range(7) for v in
        [(i, "always", 10.0 * i)] + ([(i, "f/f/every3", float(i))] if i % 3 == 0 else [])]


def test_every_n_with_explicit_step_and_int32_step(tmp_path):
    step = tf.Variable(0, dtype=tf.int32, name="mystep")
    inc = tf.assign_add(step, 1)
    writer = cs.create_file_writer(str(tmp_path))
    with writer.as_default(), cs.record_summaries_every_n_global_steps(2, step):
        op = cs.scalar("s", tf.cast(step, tf.float32) * 0.5, step=step)
    assert tf.train.get_global_step() is None  # an explicit step: no global step made
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(writer.init())
        for _ in range(5):
            sess.run(op)
            sess.run(inc)
        sess.run(writer.flush())
    assert _simple(tmp_path) == [(0, "s", 0.0), (2, "s", 1.0), (4, "s", 2.0)]


def test_writer_lifecycle_and_errors(tmp_path):
    writer = cs.create_file_writer(str(tmp_path), filename_suffix=".mine")
    same = cs.create_file_writer(str(tmp_path))       # the same name: the same writer
    with writer.as_default(), cs.always_record_summaries():
        op = cs.scalar("a", 1.5, step=3)
    with same.as_default(), cs.always_record_summaries():
        op2 = cs.scalar("b", 2.5, step=4)
    assert len(cs.summary_writer_initializer_op()) == 2
    with tf.Session() as sess:
        with pytest.raises(NotFoundError, match="not initialized"):
            sess.run(op)
        with pytest.raises(NotFoundError, match="not initialized"):
            sess.run(writer.flush())
        sess.run(same.init())
        sess.run([op, op2])
        sess.run(writer.close())
        with pytest.raises(NotFoundError, match="not initialized"):
            sess.run(op)
        sess.run(writer.init())                      # after a close: a new file
        sess.run(op)
        sess.run(writer.init())                      # open: nothing
        sess.run(same.close())
    files = _files(tmp_path)
    assert len(files) == 2 and all(f.endswith(".mine") for f in files)
    assert sorted((s, t, v) for s, t, v in _simple(tmp_path)) == [
        (3, "a", 1.5), (3, "a", 1.5), (4, "b", 2.5)]


def test_initialize_graph_import_event_and_noop_writer(tmp_path):
    tf.constant(1.0, name="some_const")
    writer = cs.create_file_writer(tmp_path)
    with pytest.raises(RuntimeError, match="No default"):
        cs.initialize(session=tf.Session())
    with writer.as_default():
        with pytest.raises(ValueError, match="session"):
            cs.initialize()
        ev = tf.summary.Event(step=42, wall_time=1.0, summary=tf.summary.Summary(
            value=[tf.summary.Summary.Value(tag="imported", simple_value=9.0)]))
        imp = cs.import_event(tf.constant(ev.SerializeToString()))
        bad = cs.import_event(tf.constant(b"\xff\xff not an event"))
        with pytest.raises(TypeError, match="needs a tf.Tensor"):
            cs.graph(tf.get_default_graph())
        with tf.Session() as sess:
            cs.initialize(graph=tf.get_default_graph(), session=sess)
            sess.run(imp)
            with pytest.raises(InvalidArgumentError, match="not a serialized Event"):
                sess.run(bad)
            sess.run(cs.flush())
    events = list(events_in(str(tmp_path)))
    graphs = [e for e in events if e.HasField("graph_def")]
    assert len(graphs) == 1 and graphs[0].step == 0
    gd = tf.summary.Event.FromString(graphs[0].SerializeToString()).graph_def
    assert b"some_const" in gd
    assert _simple(tmp_path) == [(42, "imported", 9.0)]
    noop = cs.create_file_writer(None)
    with noop.as_default(), cs.always_record_summaries():
        assert cs.scalar("x", 1.0).type == "NoOp"
        assert noop.init().type == "NoOp" and cs.flush().type == "NoOp"
    assert cs.eval_dir("/m") == os.path.join("/m", "eval")
    assert cs.eval_dir("/m", "val") == os.path.join("/m", "eval_val")


def test_construction_errors(tmp_path):
    writer = cs.create_file_writer(str(tmp_path))
    with pytest.raises(TypeError, match="max_queue"):
        cs.create_file_writer(str(tmp_path), max_queue="many")
    with pytest.raises(ValueError, match="must not be negative"):
        cs.create_file_writer(str(tmp_path), flush_millis=-1)
    with pytest.raises(ValueError, match="n must be positive"):
        cs.record_summaries_every_n_global_steps(0)
    with writer.as_default(), cs.always_record_summaries():
        with pytest.raises(TypeError, match="integer"):
            cs.scalar("s", 1.0, step=tf.constant(1.0))
        with pytest.raises(InvalidArgumentError, match="scalar"):
            cs.scalar("s", [1.0, 2.0], step=0)
        with pytest.raises(UnimplementedError, match="bad_color"):
            cs.image("i", tf.zeros([1, 2, 2, 3]), bad_color=[0, 0, 255, 255], step=0)
        with pytest.raises(TypeError, match="metadata"):
            cs.generic("g", 1.0, metadata=3, step=0)
    # not recording: nothing is computed or checked, as in TF (no tf.cond branch is made)
    with writer.as_default():
        assert cs.scalar("s", [1.0, 2.0]).dtype == tf.bool
    assert tf.train.get_global_step() is None
