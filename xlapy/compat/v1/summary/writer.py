"""tf.summary.FileWriter: TensorBoard event files, written by tensorboardX's EventFileWriter.

    writer = tf.summary.FileWriter("logs/train", sess.graph)
    writer.add_summary(sess.run(merged, feed), global_step=step)
    writer.close()

The file is `logdir/events.out.tfevents.<time>.<host>.<pid>.<n>`: a TFRecord file of Event protobufs
(the first with file_version "brain.Event:2"), written by a background thread that flushes
every flush_secs and on flush()/close().
"""

from __future__ import annotations

import itertools
import os
import time

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.summary.graph_def import graph_def as make_graph_def
from xlapy.compat.v1.summary.graph_def import run_metadata_bytes

_files = itertools.count()


def _unique(suffix: str) -> str:
    """tensorboardX names a file after the current second and the host; two writers opened
    in one directory within a second would share (and truncate) one file, so the name also
    gets the process id and a counter, as TF 2 names its event files."""
    return f".{os.getpid()}.{next(_files)}{suffix}"


class FileWriter:
    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise UnimplementedError("FileWriter(session=...) (TF 2 summary writers) is not "
                                     "supported; pass a logdir")
        t = tb()
        self._logdir = os.fspath(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._args = (self._logdir, max_queue, flush_secs)
        self._suffix = filename_suffix or ""
        self._writer = t.event_file_writer.EventFileWriter(*self._args, _unique(self._suffix))
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self) -> str:
        return self._logdir

    def _event(self, step=None, **fields):
        ev = tb().event_pb2.Event(wall_time=time.time(), **fields)
        if step is not None:
            ev.step = int(step)
        return ev

    def add_event(self, event) -> None:
        if self._closed:
            raise InvalidArgumentError(f"FileWriter for {self._logdir} is closed; reopen() it "
                                       "first")
        self._writer.add_event(event)

    def add_summary(self, summary, global_step=None) -> None:
        """summary: the serialized Summary a summary op returned (bytes), or a Summary
        protobuf."""
        pb = tb().summary_pb2
        if isinstance(summary, np.ndarray) and summary.dtype == object and summary.ndim == 0:
            summary = summary[()]
        if isinstance(summary, (bytes, bytearray, np.bytes_)):
            try:
                summary = pb.Summary.FromString(bytes(summary))
            except Exception as e:
                raise InvalidArgumentError(f"add_summary: not a serialized Summary: {e}") \
                    from None
        elif not isinstance(summary, pb.Summary):
            if hasattr(summary, "SerializeToString"):
                summary = pb.Summary.FromString(summary.SerializeToString())
            else:
                raise InvalidArgumentError(f"add_summary takes the value of a summary op "
                                           f"(bytes) or a Summary protobuf, got "
                                           f"{type(summary).__name__}")
        self.add_event(self._event(global_step, summary=summary))

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        if graph is not None and graph_def is not None:
            raise InvalidArgumentError("Please pass only graph, or graph_def (deprecated), but "
                                       "not both.")
        if graph is not None and hasattr(graph, "SerializeToString"):
            graph, graph_def = None, graph  # a GraphDef (sess.graph_def), as TF 1.x took it
        gd = graph_def if graph_def is not None else make_graph_def(graph)
        raw = gd if isinstance(gd, bytes) else gd.SerializeToString()
        self.add_event(self._event(global_step, graph_def=raw))

    def add_run_metadata(self, run_metadata, tag, global_step=None) -> None:
        tagged = tb().event_pb2.TaggedRunMetadata(tag=tag,
                                                  run_metadata=run_metadata_bytes(run_metadata))
        self.add_event(self._event(global_step, tagged_run_metadata=tagged))

    def add_session_log(self, session_log, global_step=None) -> None:
        self.add_event(self._event(global_step, session_log=session_log))

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        raise UnimplementedError("add_meta_graph: xlapy has no MetaGraphDef; use add_graph")

    def flush(self) -> None:
        """Writes every event added so far to the file (tensorboardX's flush leaves those
        its thread has not taken yet: the thread is stopped, which drains its queue in
        order, and a new one started)."""
        if self._closed:
            return
        w = self._writer
        try:
            worker = w._worker
            worker.stop()
            w._ev_writer.flush()
            w._worker = type(worker)(w._event_queue, w._ev_writer, w._flush_secs)
            w._worker.start()
        except AttributeError:  # another tensorboardX: its own flush
            w.flush()

    def close(self) -> None:
        if not self._closed:
            self._writer.close()
            self._closed = True

    def reopen(self) -> None:
        """After close(): continue in a new event file in the same logdir."""
        if self._closed:
            self._writer = tb().event_file_writer.EventFileWriter(*self._args,
                                                                  _unique(self._suffix))
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
