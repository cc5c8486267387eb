"""tf.summary: summary ops and FileWriter (TensorBoard event files, through tensorboardX).

    tf.summary.scalar("loss", loss)                  # ops returning serialized Summaries
    tf.summary.histogram("weights", w)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(logdir, sess.graph)
    writer.add_summary(sess.run(merged, feed), step)

Needs the optional tensorboardX package (pip install 'xlapy[tensorboard]'); without it the
first summary call raises an error saying so. Tags follow TF 1.x: the name inside the
current name scope (`loss/xent`), with `family` prefixed as `family/name`.
"""

from __future__ import annotations

import re

from xlapy.compat.v1.framework import GraphKeys, convert_to_tensor, get_default_graph
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.summary import summary_ops, tensor_audio_ops  # registers the ops
from xlapy.compat.v1.summary._tb import tb as _tb_modules
from xlapy.compat.v1.summary.writer import FileWriter
from xlapy.compat.v1.summary.writer_cache import FileWriterCache

_ILLEGAL = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    if name is None:
        return None
    new = _ILLEGAL.sub("_", name).lstrip("/")
    return new


def _summary_op(op_type, name, inputs, attrs, collections, family):
    _tb_modules()  # a clear error now, rather than when the op runs, if tensorboardX is missing
    name = _clean_tag(name)
    family = _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    graph = inputs[0].graph if inputs else get_default_graph()
    with graph.name_scope(base) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = f"{family}/{tag}"
        out = make(op_type, inputs, dict(attrs, tag=tag), name=scope)
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        graph.add_to_collection(key, out)
    return out


def scalar(name, tensor, collections=None, family=None):
    return _summary_op("ScalarSummary", name, [convert_to_tensor(tensor)], {}, collections,
                       family)


def histogram(name, values, collections=None, family=None):
    return _summary_op("HistogramSummary", name, [convert_to_tensor(values)], {}, collections,
                       family)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    return _summary_op("ImageSummary", name, [convert_to_tensor(tensor)],
                       {"max_images": int(max_outputs)}, collections, family)


def text(name, tensor, collections=None):
    return _summary_op("TensorSummaryV2", name, [convert_to_tensor(tensor)], {}, collections,
                       None)


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A summary holding the whole tensor (a TensorProto), with an optional description."""
    t = convert_to_tensor(tensor)
    if summary_metadata is not None:
        summary_description = summary_description or \
            getattr(summary_metadata, "summary_description", None)
        display_name = display_name or getattr(summary_metadata, "display_name", None)
    return _summary_op("TensorSummary", name, [t],
                       {"description": summary_description or "",
                        "display_name": display_name or "", "dtype": t.dtype},
                       collections, family)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """Up to max_outputs clips of a float [batch, frames(, channels)] tensor in [-1, 1] as
    WAV files, tagged <name>/audio/<i> (<name>/audio when max_outputs is 1)."""
    from xlapy.compat.v1 import dtypes
    return _summary_op("AudioSummaryV2", name,
                       [convert_to_tensor(tensor),
                        convert_to_tensor(sample_rate, dtype=dtypes.float32)],
                       {"max_outputs": int(max_outputs)}, collections, family)


def merge(inputs, collections=None, name=None):
    inputs = [convert_to_tensor(i) for i in inputs]
    _tb_modules()
    out = make("MergeSummary", inputs, name=name or "Merge/MergeSummary")
    for key in collections or []:
        out.graph.add_to_collection(key, out)
    return out


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """The merge of every summary in the collection, or None when there is none."""
    ops = get_default_graph().get_collection(key, scope)
    if not ops:
        return None
    return merge(ops, name=name)


def __getattr__(name):
    """tf.summary.Summary, Event, SessionLog ...: tensorboardX's protobuf classes."""
    if name in ("Summary", "SummaryMetadata", "HistogramProto"):
        return getattr(_tb_modules().summary_pb2, name)
    if name in ("Event", "SessionLog", "TaggedRunMetadata"):
        return getattr(_tb_modules().event_pb2, name)
    raise AttributeError(f"module 'xlapy.compat.v1.summary' has no attribute '{name}'")
