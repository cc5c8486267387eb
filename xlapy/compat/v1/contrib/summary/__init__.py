"""tf.contrib.summary: TF 1.15's "V2" summary API in graph mode. Summary ops write their
events themselves, to the default summary writer, when run (and when recording is on):

    global_step = tf.train.get_or_create_global_step()
    writer = tf.contrib.summary.create_file_writer(logdir, flush_millis=10000)
    with writer.as_default(), tf.contrib.summary.always_record_summaries():
        tf.contrib.summary.scalar("loss", loss)        # step: the global step
    with tf.Session() as sess:
        tf.contrib.summary.initialize(graph=tf.get_default_graph())  # opens the file
        sess.run([train_op, tf.contrib.summary.all_summary_ops()])
        sess.run(writer.flush())

Recording is off by default: summary ops record inside always_record_summaries() or
record_summaries_every_n_global_steps(n) (then a tf.cond on global_step % n == 0 decides
when the op runs), and a summary op made without a default writer is a no_op. A recording
summary op returns a bool tensor (True when it wrote, False when recording was off).

Events are written through tf.summary.FileWriter (tensorboardX), one event file per writer
(`events.out.tfevents.<time>.<host>.<pid>.<n>.v2` by default); read them back with
tf.train.summary_iterator. Tags follow tf.summary: the name inside the current name scope,
with `family` prefixed. A writer's state (its open file) belongs to the process, not to one
session, and two create_file_writer calls with one name (by default "logdir:<logdir>") in
one graph share it, as TF's shared resource does. The ops never compile into XLA clusters:
writing files is host work (contrib/summary/summary_writer_ops.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import weakref

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.contrib.summary.summary_writer_ops import WriterResource as _Resource
from xlapy.compat.v1.errors import UnimplementedError
from xlapy.compat.v1.framework import (Graph, Tensor, control_dependencies,
                                       convert_to_tensor, get_default_graph)
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.array_ops import constant, no_op, placeholder
from xlapy.compat.v1.ops.cond_ops import cond
from xlapy.compat.v1.ops.math_ops import equal, floormod
from xlapy.compat.v1.session import get_default_session
from xlapy.compat.v1.summary import summary_ops, tensor_audio_ops  # registers the ops
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.summary.graph_def import graph_def as _make_graph_def
from xlapy.compat.v1.train.training_util import get_or_create_global_step

__all__ = ["SummaryWriter", "all_summary_ops", "always_record_summaries", "audio",
           "create_file_writer", "create_summary_file_writer", "eval_dir", "flush", "generic",
           "graph", "histogram", "image", "import_event", "initialize",
           "never_record_summaries", "record_summaries_every_n_global_steps", "scalar",
           "should_record_summaries", "summary_writer_function",
           "summary_writer_initializer_op"]

_SUMMARY_COLLECTION = "_SUMMARY_V2"
_INIT_COLLECTION = "_SUMMARY_WRITER_V2"
_ILLEGAL = re.compile(r"[^-/\w\.]")
_RED = (255, 0, 0, 255)


class _State(threading.local):
    writer = None          # the default SummaryWriter of this thread
    is_recording = None    # None / a Python bool / a bool tensor


_state = _State()
_shared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> {name: resource}


class SummaryWriter:
    """A summary writer in graph mode: init(), flush() and close() return ops; as_default()
    makes it the writer the summary ops write to."""

    def __init__(self, resource, init_op):
        self._resource = resource
        self._init_op = init_op

    def set_as_default(self):
        """Makes this the default writer of the thread, until another is set."""
        _state.writer = self

    @contextlib.contextmanager
    def as_default(self):
        old = _state.writer
        _state.writer = self
        try:
            yield self
        finally:
            _state.writer = old

    def init(self):
        """The op opening the event file (made with the writer, in its graph's
        summary_writer_initializer_op list)."""
        return self._init_op if self._resource is not None else no_op()

    def _op(self, op_type, name):
        if self._resource is None:
            return no_op(name=name)
        return make(op_type, [], {"writer": self._resource}, name=name)

    def flush(self, name=None):
        """An op writing out the queued events."""
        return self._op("XlapyFlushSummaryWriter", name or "FlushSummaryWriter")

    def close(self, name=None):
        """An op flushing and closing the event file (its init op opens a new one)."""
        return self._op("XlapyCloseSummaryWriter", name or "CloseSummaryWriter")


def _int(value, what):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError(f"create_file_writer: {what} must be an integer, got "
                        f"{value!r}") from None


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A SummaryWriter writing an event file in logdir (made by its init op). max_queue:
    events queued before a write (10); flush_millis: the longest wait between flushes
    (120000); filename_suffix: ".v2". logdir None: a writer that writes nothing."""
    if logdir is None:
        return SummaryWriter(None, None)
    tb()  # a clear error now, rather than when the op runs, if tensorboardX is missing
    logdir = os.fspath(logdir)
    max_queue = 10 if max_queue is None else _int(max_queue, "max_queue")
    flush_millis = 120000 if flush_millis is None else _int(flush_millis, "flush_millis")
    if max_queue < 0 or flush_millis < 0:
        raise ValueError(f"create_file_writer: max_queue ({max_queue}) and flush_millis "
                         f"({flush_millis}) must not be negative")
    if filename_suffix is None:
        filename_suffix = ".v2"
    if not isinstance(filename_suffix, str):
        raise TypeError(f"create_file_writer: filename_suffix must be a string, got "
                        f"{filename_suffix!r}")
    name = name or "logdir:" + logdir
    graph = get_default_graph()
    shared = _shared.setdefault(graph, {})
    res = shared.get(name)
    if res is None:
        res = shared[name] = _Resource(logdir, max_queue, flush_millis / 1000.0,
                                            filename_suffix, name)
    init = make("XlapyCreateSummaryFileWriter", [], {"writer": res},
                name="CreateSummaryFileWriter")
    graph.add_to_collection(_INIT_COLLECTION, init)
    return SummaryWriter(res, init)


def create_summary_file_writer(*args, **kwargs):
    """Deprecated name of create_file_writer."""
    return create_file_writer(*args, **kwargs)


# ---- when to record ---------------------------------------------------------------------

@contextlib.contextmanager
def _recording(value):
    old = _state.is_recording
    _state.is_recording = value
    try:
        yield
    finally:
        _state.is_recording = old


def always_record_summaries():
    """Summary ops made inside record whenever they run."""
    return _recording(True)


def never_record_summaries():
    """Summary ops made inside never record."""
    return _recording(False)


def record_summaries_every_n_global_steps(n, global_step=None):
    """Summary ops made inside record when global_step % n == 0 (global_step: by default
    tf.train.get_or_create_global_step())."""
    n = _int(n, "n") if not isinstance(n, Tensor) else n
    if isinstance(n, int) and n <= 0:
        raise ValueError(f"record_summaries_every_n_global_steps: n must be positive, got {n}")
    if global_step is None:
        global_step = get_or_create_global_step()
    step = convert_to_tensor(global_step)
    return _recording(equal(floormod(step, convert_to_tensor(n, dtype=step.dtype)),
                            constant(0, dtype=step.dtype)))


def _active_writer():
    w = _state.writer
    return w if w is not None and w._resource is not None else None


def _may_record() -> bool:
    return _active_writer() is not None and _state.is_recording not in (None, False)


def should_record_summaries():
    """A bool tensor: whether summary ops made here would record."""
    rec = _state.is_recording
    if _active_writer() is None or rec is None:
        return constant(False)
    return rec if isinstance(rec, Tensor) else constant(bool(rec))


# ---- the summary ops --------------------------------------------------------------------

def _clean(name):
    return None if name is None else _ILLEGAL.sub("_", name).lstrip("/")


def summary_writer_function(name, tensor, function, family=None):
    """Runs function(tag, scope) (which makes the op writing the summary) when recording:
    returns a bool tensor, True after the write, False when recording is off; a no_op
    without a default writer. The result is in all_summary_ops()."""
    if _active_writer() is None:
        return no_op()
    graph = get_default_graph()
    outer = graph.get_name_scope()
    outer = outer + "/" if outer else ""

    def record():
        g = get_default_graph()
        with g.name_scope(outer):
            name_, family_ = _clean(name), _clean(family)
            base = name_ if family_ is None else f"{family_}/{name_}"
            with g.name_scope(base) as scope:
                tag = scope.rstrip("/")
                if family_ is not None:
                    tag = f"{family_}/{tag}"
                with control_dependencies([function(tag, scope)]):
                    return constant(True)

    rec = _state.is_recording
    if rec is None or rec is False:
        out = constant(False)
    elif rec is True:
        out = record()
    else:
        out = cond(rec, record, lambda: constant(False))
    graph.add_to_collection(_SUMMARY_COLLECTION, out)
    return out


def _choose_step(step):
    if step is None:
        return convert_to_tensor(get_or_create_global_step())
    if not isinstance(step, Tensor) and not hasattr(step, "_to_tensor"):
        return convert_to_tensor(step, dtype=dtypes.int64)
    step = convert_to_tensor(step)
    if not step.dtype.is_integer:
        raise TypeError(f"summary step must be an integer tensor (int64), got "
                        f"{step.dtype.name}")
    return step


def _write(name, family, step, summarize, kind="summary", metadata=b""):
    """The summary op of `summarize(tag)` (the op computing a serialized proto)."""
    step_t = _choose_step(step) if _may_record() else None  # outside any tf.cond branch
    writer = _active_writer()

    def function(tag, scope):
        return make("XlapyWriteSummary", [step_t, summarize(tag)],
                    {"writer": writer and writer._resource, "kind": kind,
                     "metadata": metadata}, name=scope)
    return summary_writer_function(name, None, function, family=family)


def _value(tensor, dtype=None):
    return convert_to_tensor(tensor, dtype=dtype) if _may_record() else None


def scalar(name, tensor, family=None, step=None):
    """Writes a scalar (a number tensor) as a simple_value."""
    t = _value(tensor)
    return _write(name, family, step, lambda tag: make("ScalarSummary", [t], {"tag": tag}))


def histogram(name, tensor, family=None, step=None):
    """Writes a histogram of the tensor's values (TF's default buckets)."""
    t = _value(tensor)
    return _write(name, family, step,
                  lambda tag: make("HistogramSummary", [t], {"tag": tag}))


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    """Writes up to max_images PNG images of a [batch, h, w, 1|3|4] uint8 or float tensor
    (tags <tag>/image/<i>, <tag>/image when max_images is 1)."""
    if bad_color is not None and tuple(int(c) for c in bad_color) != _RED[:len(bad_color)]:
        raise UnimplementedError("tf.contrib.summary.image: only the default bad_color (red, "
                                 "[255, 0, 0, 255]) is supported")
    t = _value(tensor)
    return _write(name, family, step,
                  lambda tag: make("ImageSummary", [t],
                                   {"tag": tag, "max_images": int(max_images)}))


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    """Writes up to max_outputs WAV clips of a float [batch, frames(, channels)] tensor."""
    t = _value(tensor)
    rate = _value(sample_rate, dtypes.float32)
    return _write(name, family, step,
                  lambda tag: make("AudioSummaryV2", [t, rate],
                                   {"tag": tag, "max_outputs": int(max_outputs)}))


def generic(name, tensor, metadata=None, family=None, step=None):
    """Writes the whole tensor (a TensorProto) with `metadata` (a SummaryMetadata proto or
    its serialized bytes) on the value."""
    if metadata is None:
        meta = b""
    elif hasattr(metadata, "SerializeToString"):
        meta = metadata.SerializeToString()
    elif isinstance(metadata, (bytes, bytearray)):
        meta = bytes(metadata)
    else:
        raise TypeError(f"generic: metadata must be a SummaryMetadata protobuf or its "
                        f"serialized bytes, got {type(metadata).__name__}")
    t = _value(tensor)
    return _write(name, family, step,
                  lambda tag: make("TensorSummary", [t],
                                   {"tag": tag, "description": "", "display_name": "",
                                    "dtype": t.dtype}),
                  metadata=meta)


def graph(param, step=None, name=None):
    """Writes a graph: param is a string tensor holding a serialized GraphDef (in graph mode
    TF takes only a tensor, e.g. a placeholder fed the bytes). Written whether or not
    recording is on."""
    if not isinstance(param, Tensor):
        raise TypeError(f"graph() needs a tf.Tensor (e.g. tf.placeholder) in graph mode, but "
                        f"was: {type(param)}")
    writer = _active_writer()
    if writer is None:
        return no_op()
    return make("XlapyWriteSummary", [_choose_step(step), param],
                {"writer": writer._resource, "kind": "graph", "metadata": b""},
                name=name or "WriteGraphSummary")


_graph = graph  # initialize() has an argument named graph


def import_event(tensor, name=None):
    """Writes a serialized Event (a string tensor) as it is; a no_op without a default
    writer."""
    writer = _active_writer()
    if writer is None:
        return no_op()
    return make("XlapyWriteSummary",
                [constant(0, dtype=dtypes.int64), convert_to_tensor(tensor)],
                {"writer": writer._resource, "kind": "event", "metadata": b""},
                name=name or "ImportEvent")


# ---- the graph's summary and writer ops -------------------------------------------------

def all_summary_ops():
    """Every summary op made in the default graph (those a writer was set for)."""
    return get_default_graph().get_collection(_SUMMARY_COLLECTION)


def summary_writer_initializer_op():
    """The init ops of the default graph's summary writers (a list)."""
    return get_default_graph().get_collection(_INIT_COLLECTION)


def initialize(graph=None, session=None):
    """Runs the summary writers' init ops in session (the default session), then, when
    graph (a tf.Graph or GraphDef) is given, writes it at step 0 to the default writer."""
    if _state.writer is None:
        raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Argument `session` must be passed if no default session exists")
    inits = summary_writer_initializer_op()
    if inits:
        session.run(inits)
    if graph is not None:
        if isinstance(graph, Graph):
            data = _make_graph_def(graph).SerializeToString()
        elif hasattr(graph, "SerializeToString"):
            data = graph.SerializeToString()
        else:
            raise TypeError(f"initialize: graph must be a tf.Graph or a GraphDef, got "
                            f"{type(graph).__name__}")
        x = placeholder(dtypes.string, [])
        session.run(_graph(x, 0), feed_dict={x: data})


def flush(writer=None, name=None):
    """An op flushing writer (default: the default writer; none: a no_op)."""
    if writer is None:
        writer = _state.writer
        if writer is None:
            return no_op()
    if isinstance(writer, _Resource):
        return make("XlapyFlushSummaryWriter", [], {"writer": writer},
                    name=name or "FlushSummaryWriter")
    return writer.flush(name=name)


def eval_dir(model_dir, name=None):
    """The directory an Estimator's evaluation writes its events to."""
    return os.path.join(os.fspath(model_dir), "eval" if not name else "eval_" + name)
