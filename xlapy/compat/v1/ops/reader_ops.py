"""The queue-based readers of TF 1.x input pipelines (before tf.data): tf.TextLineReader,
tf.TFRecordReader, tf.FixedLengthRecordReader and tf.WholeFileReader.

reader.read(filename_queue) returns one (key, value) string pair, taking the next file name
from the queue (tf.train.string_input_producer's) when the current file is done;
read_up_to(queue, n) returns up to n pairs of one file. Keys are TF's: "file:line" (from 1,
header lines counted) for text lines, "file:offset" (the record's byte offset) for TFRecords,
"file:record" (from 0) for fixed-length records and the file name for whole files. When
the queue is closed and empty, read raises OutOfRangeError, which ends the QueueRunner of a
tf.train.batch reading from it.

A reader's position lives in the session (one per session and reader, guarded by a lock,
as queues and tables are); the ops run in the executor. A trailing partial fixed-length
record is ignored, as TF's reader does.
"""

from __future__ import annotations

import threading

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.tensor_shape import TensorShape

_LOCK = threading.Lock()


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.records = None   # the current file's iterator of (key, value)
        self.produced = 0
        self.completed = 0


def _state(session, reader) -> _State:
    with _LOCK:
        if not hasattr(session, "_xlapy_readers"):
            session._xlapy_readers = {}
        st = session._xlapy_readers.get(id(reader))
        if st is None:
            st = session._xlapy_readers[id(reader)] = _State()
        return st


def _read_file(path: str, compression: str = "") -> bytes:
    from xlapy.compat.v1.data.readers import _read
    return _read(path, compression)


class ReaderBase:
    """A reader of records from the files named by a queue."""

    def __init__(self, name):
        self._name = get_default_graph().unique_name(name, mark_as_used=True)

    name = property(lambda self: self._name)
    reader_ref = property(lambda self: self)
    supports_serialize = False

    def _records(self, path: str):
        raise NotImplementedError

    def read(self, queue, name=None):
        """(key, value): the next record, string scalars."""
        op = make_op("ReaderReadV2", [], {"reader": self, "queue": _queue(queue)},
                     name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values): up to num_records records of one file, string vectors."""
        n = convert_to_tensor(num_records, dtype=dtypes.int64)
        op = make_op("ReaderReadUpToV2", [n], {"reader": self, "queue": _queue(queue)},
                     name=name or "ReaderReadUpToV2")
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        return make_op("ReaderNumRecordsProducedV2", [], {"reader": self},
                       name=name or "ReaderNumRecordsProducedV2").outputs[0]

    def num_work_units_completed(self, name=None):
        return make_op("ReaderNumWorkUnitsCompletedV2", [], {"reader": self},
                       name=name or "ReaderNumWorkUnitsCompletedV2").outputs[0]

    def reset(self, name=None):
        return make_op("ReaderResetV2", [], {"reader": self}, name=name or "ReaderResetV2")


def _queue(q):
    if not hasattr(q, "_state") or not hasattr(q, "dtypes"):
        raise InvalidArgumentError(f"a reader reads the file names of a queue (e.g. "
                                   f"tf.train.string_input_producer's), got {q!r}")
    if q.dtypes[0] != dtypes.string:
        raise InvalidArgumentError(f"the queue of a reader holds file names (strings), got "
                                   f"{q.dtypes[0].name}")
    return q


class TextLineReader(ReaderBase):
    """The lines of text files (without "\\n" / "\\r\\n"); skip_header_lines skips the first
    lines of each file."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(name or "TextLineReader")
        self._skip = int(skip_header_lines or 0)

    def _records(self, path):
        lines = _read_file(path).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for n, line in enumerate(lines, start=1):
            if n > self._skip:
                yield f"{path}:{n}", line[:-1] if line.endswith(b"\r") else line


class TFRecordReader(ReaderBase):
    """The records of TFRecord files; options: TFRecordOptions or a compression type."""

    def __init__(self, name=None, options=None):
        from xlapy.compat.v1.io.tf_record import TFRecordOptions
        super().__init__(name or "TFRecordReader")
        self._compression = TFRecordOptions.get_compression_type_string(options)

    def _records(self, path):
        from xlapy.compat.v1.io.tf_record import read_records
        offset = 0
        for rec in read_records(path, self._compression):
            yield f"{path}:{offset}", rec
            offset += 16 + len(rec)


class FixedLengthRecordReader(ReaderBase):
    """Records of record_bytes bytes after header_bytes, before footer_bytes (hop_bytes: the
    distance between record starts, record_bytes when None)."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(name or "FixedLengthRecordReader")
        self._record = int(record_bytes)
        if self._record <= 0:
            raise InvalidArgumentError(f"record_bytes must be > 0, got {record_bytes}")
        self._header, self._footer = int(header_bytes or 0), int(footer_bytes or 0)
        self._hop = int(hop_bytes or 0) or self._record
        self._compression = (encoding or "").upper()
        if self._compression not in ("", "GZIP", "ZLIB"):
            raise InvalidArgumentError(f"Unsupported encoding: {encoding}")

    def _records(self, path):
        yield from ((f"{path}:{i}", rec) for i, rec in enumerate(fixed_length_records(
            _read_file(path, self._compression), self._record, self._header, self._footer,
            self._hop)))


def fixed_length_records(data: bytes, record: int, header: int, footer: int, hop=None):
    """The records of a fixed-length record file's bytes (a partial last one ignored)."""
    end = len(data) - footer
    pos, hop = header, hop or record
    while pos + record <= end:
        yield data[pos:pos + record]
        pos += hop


class WholeFileReader(ReaderBase):
    """Each file whole: key its name, value its contents."""

    def __init__(self, name=None):
        super().__init__(name or "WholeFileReader")

    def _records(self, path):
        yield path, _read_file(path)


# ---- the ops and their executor hooks ---------------------------------------------------------

def _strings(n):
    return (dtypes.string, TensorShape([] if n is None else [None]))


register_op("ReaderReadV2", lowering=None, stateful=True,
            infer=lambda op: [_strings(None), _strings(None)])(lambda m: None)
register_op("ReaderReadUpToV2", lowering=None, stateful=True,
            infer=lambda op: [_strings(1), _strings(1)])(lambda m, n: None)
register_op("ReaderNumRecordsProducedV2", lowering=None, stateful=True,
            infer=lambda op: [(dtypes.int64, TensorShape([]))])(lambda m: None)
register_op("ReaderNumWorkUnitsCompletedV2", lowering=None, stateful=True,
            infer=lambda op: [(dtypes.int64, TensorShape([]))])(lambda m: None)
register_op("ReaderResetV2", lowering=None, stateful=True, infer=lambda op: [])(
    lambda m: None)


def _next_file(session, reader, queue, st, op):
    from xlapy.compat.v1.ops.queue_ops import take_row
    name = np.asarray(take_row(queue, session, op)[0], dtype=object).item()
    path = name.decode() if isinstance(name, bytes) else str(name)
    st.records = iter(reader._records(path))


def _read(session, op, n, one_file):
    """Up to n (key, value) records (at least one, or OutOfRangeError)."""
    reader, queue = op.get_attr("reader"), op.get_attr("queue")
    st = _state(session, reader)
    keys, vals = [], []
    with st.lock:
        while len(keys) < n:
            if st.records is None:
                if keys and one_file:
                    break
                try:
                    _next_file(session, reader, queue, st, op)
                except OutOfRangeError:
                    if keys:
                        break
                    raise
            rec = next(st.records, None)
            if rec is None:
                st.records = None
                st.completed += 1
                continue
            keys.append(rec[0].encode() if isinstance(rec[0], str) else rec[0])
            vals.append(rec[1])
            st.produced += 1
    return keys, vals


def _objects(vals):
    out = np.empty(len(vals), object)
    out[:] = vals
    return out


def _read_executor(session, op):
    def run():
        keys, vals = _read(session, op, 1, True)
        return [np.asarray(keys[0], dtype=object), np.asarray(vals[0], dtype=object)]
    return run


def _read_up_to_executor(session, op):
    def run(n):
        n = int(np.asarray(n))
        if n <= 0:
            raise InvalidArgumentError(f"num_records must be > 0, got {n}", op=op)
        keys, vals = _read(session, op, n, True)
        return [_objects(keys), _objects(vals)]
    return run


def _count_executor(session, op):
    produced = op.type == "ReaderNumRecordsProducedV2"

    def run():
        st = _state(session, op.get_attr("reader"))
        return [np.int64(st.produced if produced else st.completed)]
    return run


def _reset_executor(session, op):
    def run():
        st = _state(session, op.get_attr("reader"))
        with st.lock:
            st.records, st.produced, st.completed = None, 0, 0
        return []
    return run


for _t, _f in (("ReaderReadV2", _read_executor), ("ReaderReadUpToV2", _read_up_to_executor),
               ("ReaderNumRecordsProducedV2", _count_executor),
               ("ReaderNumWorkUnitsCompletedV2", _count_executor),
               ("ReaderResetV2", _reset_executor)):
    get_op_def(_t).extra.update(executor=_f)
not_differentiable("ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                   "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2")
