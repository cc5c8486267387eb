"""tf.data.TextLineDataset: the lines of text files (without their "\n" or "\r\n" endings)
as string scalars, read on the host when the iterator reaches them; compression_type "" (none),
"GZIP" or "ZLIB". tf.data.TFRecordDataset: the records of TFRecord files (io/tf_record.py),
likewise; tf.data.FixedLengthRecordDataset: the fixed-length records of binary files."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.data.dataset import Dataset
from xlapy.compat.v1.data.structure import _Spec
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.ops._common import constant_value
from xlapy.compat.v1.tensor_shape import TensorShape


def _names(filenames, what="TextLineDataset") -> list:
    if hasattr(filenames, "op"):
        v = constant_value(filenames)
        if v is None:
            raise InvalidArgumentError(f"{what}: filenames must be known when the graph "
                                       "is built (strings or a constant)")
        filenames = v
    names = [filenames] if isinstance(filenames, (str, bytes, os.PathLike)) else \
        list(np.reshape(np.asarray(filenames, dtype=object), [-1]))
    return [n.decode() if isinstance(n, bytes) else os.fspath(n) for n in names]


def _read(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data


class TextLineDataset(Dataset):
    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        names = _names(filenames)
        comp = (compression_type or "").upper()
        if comp not in ("", "GZIP", "ZLIB"):
            raise InvalidArgumentError(f"Unsupported compression_type: {compression_type}")

        def elements(ctx):
            for path in names:
                data = _read(path, comp)
                lines = data.split(b"\n")
                if lines and lines[-1] == b"":
                    lines.pop()  # the file's final newline ends the last line
                for line in lines:  # a trailing \r is part of the line ending, as TF's
                    yield [np.asarray(line[:-1] if line.endswith(b"\r") else line,
                                      dtype=object)]
        super().__init__(elements, _Spec(dtypes.string, TensorShape([])))


class TFRecordDataset(Dataset):
    """The records of TFRecord files, in order, as string scalars: TFRecordDataset(filenames,
    compression_type=None ("" / "ZLIB" / "GZIP"), buffer_size=None, num_parallel_reads=None).
    A corrupt record raises DataLossError from get_next, a missing file NotFoundError."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        from xlapy.compat.v1.io.tf_record import read_records
        names = _names(filenames, "TFRecordDataset")
        comp = (compression_type or "").upper()
        if comp not in ("", "GZIP", "ZLIB"):
            raise InvalidArgumentError(f"Unsupported compression_type: {compression_type}")

        def elements(ctx):
            for path in names:
                for record in read_records(path, comp):
                    yield [np.asarray(record, dtype=object)]
        super().__init__(elements, _Spec(dtypes.string, TensorShape([])))


class FixedLengthRecordDataset(Dataset):
    """The fixed-length records of binary files (CIFAR-10's format), as string scalars:
    FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None, footer_bytes=None,
    buffer_size=None, compression_type=None). Each file's records start after header_bytes
    and end before its last footer_bytes; a partial last record is ignored."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        from xlapy.compat.v1.ops.reader_ops import fixed_length_records
        names = _names(filenames, "FixedLengthRecordDataset")
        record, header, footer = (_int_arg(v, what) for v, what in (
            (record_bytes, "record_bytes"), (header_bytes, "header_bytes"),
            (footer_bytes, "footer_bytes")))
        if record <= 0:
            raise InvalidArgumentError(f"record_bytes must be greater than zero, got {record}")
        if header < 0 or footer < 0:
            raise InvalidArgumentError("header_bytes and footer_bytes must be >= 0")
        comp = (compression_type or "").upper()
        if comp not in ("", "GZIP", "ZLIB"):
            raise InvalidArgumentError(f"Unsupported compression_type: {compression_type}")

        def elements(ctx):
            for path in names:
                for rec in fixed_length_records(_read(path, comp), record, header, footer):
                    yield [np.asarray(rec, dtype=object)]
        super().__init__(elements, _Spec(dtypes.string, TensorShape([])))


def _int_arg(v, what) -> int:
    if v is None:
        return 0
    if hasattr(v, "op"):
        c = constant_value(v)
        if c is None:
            raise InvalidArgumentError(f"FixedLengthRecordDataset: {what} must be known when "
                                       "the graph is built")
        v = c
    return int(v)
