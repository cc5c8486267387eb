"""The host-side ops of tf.contrib.summary: a summary writer (TF's SummaryWriter resource)
and the ops that open, write to, flush and close it.

    XlapyCreateSummaryFileWriter  opens the writer's event file (TF's
                                  CreateSummaryFileWriter); again: nothing, after a close:
                                  a new file
    XlapyWriteSummary             writes one Event at an int64 step: a serialized Summary
                                  (kind "summary", with optional SummaryMetadata laid over
                                  each value), a serialized Event ("event") or a GraphDef
                                  ("graph")
    XlapyFlushSummaryWriter       writes out what is queued
    XlapyCloseSummaryWriter       flushes and closes the file

The writer is an attribute of each op (a Python object, as a resource handle would be in
TF). The events go through tf.summary.FileWriter (tensorboardX's event writer). The ops
have no outputs and no XLA lowering: writing files is host work, so they always run in the
executor.
"""

from __future__ import annotations

import atexit
import threading

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.summary.writer import FileWriter


_open: set = set()   # the FileWriters open (a file and a thread each, until closed)
_atexit = []


def _close_all() -> None:
    """At exit, before tensorboardX's (multiprocessing's) handlers: closes the files left
    open, so that their threads write out their queues and stop."""
    while _open:
        _open.pop().close()


class WriterResource:
    """The state a summary writer op works on: an event file, opened by the init op."""

    def __init__(self, logdir: str, max_queue: int, flush_secs: float, suffix: str,
                 name: str):
        self.logdir, self.max_queue, self.flush_secs = logdir, max_queue, flush_secs
        self.suffix, self.name = suffix, name
        self.file_writer: FileWriter | None = None
        self.lock = threading.Lock()

    def open(self) -> None:
        with self.lock:
            if self.file_writer is None:
                self.file_writer = FileWriter(self.logdir, max_queue=self.max_queue,
                                              flush_secs=self.flush_secs,
                                              filename_suffix=self.suffix)
                _open.add(self.file_writer)
                if not _atexit:  # registered after tensorboardX's, so it runs before them
                    atexit.register(_close_all)
                    _atexit.append(True)

    def get(self, what: str) -> FileWriter:
        w = self.file_writer
        if w is None:
            raise NotFoundError(f"{what}: the summary writer '{self.name}' is not initialized "
                                f"(or was closed): run its init() op, "
                                f"tf.contrib.summary.summary_writer_initializer_op() or "
                                f"tf.contrib.summary.initialize() first")
        return w

    def close(self) -> None:
        with self.lock:
            w, self.file_writer = self.get("close"), None
            _open.discard(w)
        w.close()

    def __repr__(self):
        return f"<summary writer '{self.name}' for {self.logdir}>"


def _no_outputs(op):
    return []


def _write_infer(op):
    step, payload = op.inputs
    if not step.dtype.is_integer or step.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"summary write '{op.name}': step must be an integer "
                                   f"scalar, got {step.dtype.name} {step.shape}")
    if payload.dtype.name != "string" or payload.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"summary write '{op.name}': expected a string scalar "
                                   f"(the serialized proto), got {payload.dtype.name} "
                                   f"{payload.shape}")
    return []


@register_op("XlapyCreateSummaryFileWriter", infer=_no_outputs, attrs=("writer",),
             lowering=None, stateful=True)
def _create(m, writer=None):
    writer.open()
    return ()


@register_op("XlapyFlushSummaryWriter", infer=_no_outputs, attrs=("writer",), lowering=None,
             stateful=True)
def _flush(m, writer=None):
    writer.get("flush").flush()
    return ()


@register_op("XlapyCloseSummaryWriter", infer=_no_outputs, attrs=("writer",), lowering=None,
             stateful=True)
def _close(m, writer=None):
    writer.close()
    return ()


def _payload(value) -> bytes:
    return bytes(np.asarray(value, dtype=object)[()])


@register_op("XlapyWriteSummary", infer=_write_infer, attrs=("writer", "kind", "metadata"),
             lowering=None, stateful=True)
def _write(m, step, payload, writer=None, kind="summary", metadata=b""):
    w = writer.get("write")
    raw = _payload(payload)
    t = tb()
    try:
        if kind == "summary":
            summary = t.summary_pb2.Summary.FromString(raw)
            if metadata:
                meta = t.summary_pb2.SummaryMetadata.FromString(metadata)
                for v in summary.value:
                    v.metadata.CopyFrom(meta)
            w.add_summary(summary, global_step=int(step))
        elif kind == "event":
            w.add_event(t.event_pb2.Event.FromString(raw))
        else:
            w.add_graph(None, global_step=int(step), graph_def=raw)
    except InvalidArgumentError:
        raise
    except Exception as e:  # a protobuf DecodeError: bytes that are no such message
        proto = {"summary": "Summary", "event": "Event"}.get(kind, "GraphDef")
        raise InvalidArgumentError(f"summary write: the string is not a serialized {proto}: "
                                   f"{e}") from None
    return ()


not_differentiable("XlapyCreateSummaryFileWriter", "XlapyFlushSummaryWriter",
                   "XlapyCloseSummaryWriter", "XlapyWriteSummary")
