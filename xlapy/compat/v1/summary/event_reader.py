"""Reading event files back: tf.train.summary_iterator (TF 1.x) and the scalar metrics an
Estimator's evaluations wrote (read_eval_metrics, as TF's estimator early stopping and
BestExporter read them)."""

from __future__ import annotations

import collections
import glob
import os

__all__ = ["summary_iterator", "read_eval_metrics", "events_in"]


def summary_iterator(path):
    """The Event protobufs of an event file, in order."""
    from xlapy.compat.v1.io.tf_record import tf_record_iterator
    from xlapy.compat.v1.summary._tb import tb
    event = tb().event_pb2.Event
    for record in tf_record_iterator(os.fspath(path)):
        yield event.FromString(record)


def events_in(pattern):
    """The Events of every file matching a glob pattern (or of a directory's event files)."""
    pattern = os.fspath(pattern)
    if os.path.isdir(pattern):
        pattern = os.path.join(pattern, "*.tfevents.*")
    for path in sorted(glob.glob(pattern)):
        yield from summary_iterator(path)


def read_eval_metrics(eval_dir) -> collections.OrderedDict:
    """{global step: {tag: value}} of the scalar summaries in eval_dir's event files,
    ordered by step."""
    out: dict = collections.defaultdict(dict)
    if not os.path.isdir(os.fspath(eval_dir)):
        return collections.OrderedDict()
    for ev in events_in(eval_dir):
        if ev.HasField("summary"):
            for v in ev.summary.value:
                if v.HasField("simple_value"):
                    out[ev.step][v.tag] = v.simple_value
    return collections.OrderedDict(sorted(out.items()))
