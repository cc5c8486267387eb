"""tf.summary: the event files FileWriter writes, read back by TensorBoard's own
EventAccumulator (tags, steps, values, histogram buckets, decoded images, text, the graph,
run metadata), with and without XLA; and the errors."""

import io
import os
import sys

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.summary import _tb, encoders

from .conftest import jit_config

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="the tensorboard package (test extra) reads the event files back")


def _read(logdir):
    files = [f for f in os.listdir(logdir) if ".tfevents." in f]
    assert len(files) == 1, files
    acc = event_accumulator.EventAccumulator(
        logdir, size_guidance={"tensors": 0, "images": 0, "scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_scalars_histograms_images_text_graph(tmp_path, xla):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.full((4, 2), 0.5, np.float32), name="weights")
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        tf.summary.scalar("mse", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    tf.summary.histogram("hist", w, family="params")
    tf.summary.image("inputs", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=2)
    tf.summary.text("note", tf.constant(["hello", "wörld"]))
    merged = tf.summary.merge_all()
    sess = tf.Session(config=jit_config() if xla else None)
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
    feed = {x: np.array([[0, 0.25, 0.5, 1], [1, 1, 0, 0.5]], np.float32)}
    want = []
    for step in range(3):
        s, l, _ = sess.run([merged, loss, train], feed)
        assert isinstance(s, bytes)
        want.append(float(l))
        writer.add_summary(s, global_step=step)
    run_metadata = tf.RunMetadata()
    sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    writer.add_run_metadata(run_metadata, "step3", global_step=3)
    writer.close()
    if xla:  # the training step still compiles; only the summary ops stay out
        summary = sess.cluster_summary([merged, loss, train], feed)
        assert "no XLA lowering for op type MergeSummary" in summary

    acc = _read(str(tmp_path))
    tags = acc.Tags()
    assert tags["scalars"] == ["loss/mse"]
    assert tags["histograms"] == ["params/params/hist"]
    assert tags["images"] == ["inputs/image/0", "inputs/image/1"]
    assert tags["tensors"] == ["note"] and tags["graph"]
    assert tags["run_metadata"] == ["step3"]
    events = acc.Scalars("loss/mse")
    assert [e.step for e in events] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in events], want, rtol=1e-6)

    h = acc.Histograms("params/params/hist")[0].histogram_value
    assert (h.num, h.min, h.max, h.sum) == (8, 0.5, 0.5, 4.0)
    assert sum(h.bucket) == 8

    img = acc.Images("inputs/image/0")[0]
    assert (img.width, img.height) == (2, 2)
    from PIL import Image
    pixels = np.asarray(Image.open(io.BytesIO(img.encoded_image_string)))
    np.testing.assert_array_equal(pixels, [[0, 64], [128, 255]])

    text = acc.Tensors("note")[0].tensor_proto
    assert list(text.string_val) == [b"hello", "wörld".encode()]

    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["loss/MatMul"].op == "MatMul" and list(nodes["loss/MatMul"].input) == \
        ["x", "weights/read"]
    shape = nodes["x"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [-1, 4]

    stats = acc.RunMetadata("step3").step_stats
    labels = [n.timeline_label for d in stats.dev_stats for n in d.node_stats]
    assert labels and all(" = " in label for label in labels)


def test_histogram_buckets_follow_tensorflow():
    h = encoders.histogram(np.array([0.0, 1.0, 1.0, -2.0, 3e-13]), "t")
    assert (h["num"], h["min"], h["max"], h["sum"]) == (5.0, -2.0, 1.0, 3e-13)
    assert sum(h["bucket"]) == 5
    limits = np.array(h["bucket_limit"])
    counts = dict(zip(h["bucket_limit"], h["bucket"]))
    assert np.all(np.diff(limits) > 0)
    full = encoders.BUCKET_LIMITS
    assert full[0] == -sys.float_info.max and full[-1] == sys.float_info.max
    # a value v counts in the bucket whose limit is the first one above v
    i = np.searchsorted(full, 1.0, side="right")
    assert counts[full[i]] == 2 and full[i - 1] <= 1.0 < full[i]
    j = np.searchsorted(full, 0.0, side="right")
    assert counts[full[j]] == 2 and full[j] == 1e-12  # 0.0 and 3e-13 in [0, 1e-12)
    # empty runs collapse into their last limit: the bucket before 0's is the run after -2's
    k = np.searchsorted(full, -2.0, side="right")
    assert counts[full[k]] == 1 and counts[full[j - 1]] == 0 and full[j - 1] == 0.0
    with pytest.raises(InvalidArgumentError, match="Nan in summary histogram for: t"):
        encoders.histogram(np.array([1.0, np.nan]), "t")


def test_image_scaling():
    img = np.array([[[-1.0], [0.0]], [[0.5], [np.inf]]])
    out = encoders.image_to_uint8(img)
    assert out[0, 0, 0] == 1 and out[0, 1, 0] == 128 and out[1, 0, 0] == 192
    assert out[1, 1, 0] == 255  # non-finite: the bad color's first channel
    np.testing.assert_array_equal(encoders.image_to_uint8(np.array([[[2.0, 1.0, 0.0]]])),
                                  [[[255, 128, 0]]])


def test_errors_and_merge(tmp_path):
    a = tf.summary.scalar("a", tf.constant(1.0))
    a2 = tf.summary.scalar("a", tf.constant(2.0), collections=[])
    assert a2.op.name == "a_1"
    dup = tf.summary.merge([a, tf.identity(a)])
    with pytest.raises(InvalidArgumentError, match="Duplicate tag a found"):
        tf.Session().run(dup)
    with pytest.raises(InvalidArgumentError, match="takes a scalar"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(InvalidArgumentError, match="4-D with last dim 1, 3, or 4"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 2]))
    with pytest.raises(InvalidArgumentError, match="not a serialized summary"):
        tf.summary.merge([tf.constant(1.0)])
    bad = tf.summary.histogram("h", tf.constant([1.0, np.inf]))
    with pytest.raises(InvalidArgumentError, match="Infinity in summary histogram for: h"):
        tf.Session().run(bad)
    assert tf.summary.merge_all(key="nothing") is None
    w = tf.summary.FileWriter(str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="takes the value of a summary op"):
        w.add_summary(3.0)
    w.close()
    with pytest.raises(InvalidArgumentError, match="is closed"):
        w.add_summary(tf.Session().run(a))
    w.reopen()
    w.add_summary(tf.Session().run(a), 5)
    w.close()
    assert len([f for f in os.listdir(tmp_path) if ".tfevents." in f]) == 2


def test_missing_tensorboardx_says_how_to_install(monkeypatch):
    _tb.tb.cache_clear()
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    try:
        with pytest.raises(UnimplementedError, match=r"pip install 'xlapy\[tensorboard\]'"):
            tf.summary.scalar("a", tf.constant(1.0))
    finally:
        _tb.tb.cache_clear()
