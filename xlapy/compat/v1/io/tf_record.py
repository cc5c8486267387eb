"""TFRecord files (tf.python_io / tf.io): TFRecordWriter, tf_record_iterator, TFRecordOptions
and TFRecordCompressionType; tf.data.TFRecordDataset reads them through `read_records`.

A file is a sequence of records, each

    uint64  length of the data, little-endian
    uint32  masked CRC32C of those 8 bytes
    bytes   data
    uint32  masked CRC32C of the data

with mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32), the whole file
optionally compressed as one GZIP or ZLIB stream. A record whose checksum does not match, or
that ends before its length says, raises DataLossError ("corrupted record at N",
"truncated record at N", N the offset of the part read, in the uncompressed stream), as TF's
record reader.

CRC32C (Castagnoli) comes from google-crc32c (Google's C library) when it is importable, else
from the table-driven pure-Python fallback below (correct, about 100x slower).
"""

from __future__ import annotations

import os
import struct
import zlib

from xlapy.compat.v1.errors import DataLossError, InvalidArgumentError, NotFoundError

# ---- CRC32C ------------------------------------------------------------------------------

_POLY = 0x82F63B78  # Castagnoli, reflected


def _make_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def _crc32c_python(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


try:
    import google_crc32c as _gcrc

    def crc32c(data: bytes) -> int:
        """The CRC32C of `data` (an unsigned 32-bit int)."""
        return _gcrc.value(bytes(data))
except ImportError:  # the fallback: pure Python
    def crc32c(data: bytes) -> int:
        """The CRC32C of `data` (an unsigned 32-bit int)."""
        return _crc32c_python(bytes(data))

_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


# ---- options -------------------------------------------------------------------------------

class TFRecordCompressionType:
    """The compression of a TFRecord file."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """Options of a TFRecord file: the compression type ("", "ZLIB", "GZIP" or a
    TFRecordCompressionType) and zlib's settings (compression_level, window_bits, mem_level,
    compression_strategy; flush_mode and the buffer sizes are accepted and unused)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = _compression_name(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression of `options` (TFRecordOptions, a name or a compression type) as
        "", "ZLIB" or "GZIP"."""
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _compression_name(options)

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _compression_name(c) -> str:
    if c is None:
        return ""
    if isinstance(c, TFRecordOptions):
        return c.compression_type
    if isinstance(c, bytes):
        c = c.decode()
    if isinstance(c, int) and not isinstance(c, bool) and c in _NAMES:
        return _NAMES[c]
    if isinstance(c, str) and c.upper() in ("", "ZLIB", "GZIP"):
        return c.upper()
    raise InvalidArgumentError(f"Unsupported compression_type: {c!r} (expected '', 'ZLIB', "
                               "'GZIP' or a TFRecordCompressionType)")


def _options(options) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(_compression_name(options))


def _path(p) -> str:
    return os.fspath(p.decode() if isinstance(p, bytes) else p)


# ---- writing -------------------------------------------------------------------------------

def encode_record(data: bytes) -> bytes:
    """One record's bytes in the file (before compression)."""
    header = struct.pack("<Q", len(data))
    return b"".join((header, struct.pack("<I", masked_crc32c(header)), data,
                     struct.pack("<I", masked_crc32c(data))))


class TFRecordWriter:
    """Writes records to a TFRecord file: TFRecordWriter(path, options=None), where options
    is a TFRecordOptions or a compression type. write(record) appends one record (bytes; a
    str is written as UTF-8), flush(), close(); a context manager that closes on exit."""

    def __init__(self, path, options=None):
        opts = _options(options)
        self._path = _path(path)
        try:
            self._file = open(self._path, "wb")
        except FileNotFoundError:
            raise NotFoundError(f"{self._path}; No such file or directory") from None
        self._z = None
        if opts.compression_type:
            level = -1 if opts.compression_level is None else int(opts.compression_level)
            bits = 15 if opts.window_bits is None else int(opts.window_bits)
            self._z = zlib.compressobj(
                level, zlib.DEFLATED, bits + 16 if opts.compression_type == "GZIP" else bits,
                8 if opts.mem_level is None else int(opts.mem_level),
                0 if opts.compression_strategy is None else int(opts.compression_strategy))

    def _check(self):
        if self._file is None:
            raise DataLossError(f"TFRecordWriter for {self._path} is closed")

    def write(self, record):
        self._check()
        if isinstance(record, str):
            record = record.encode()
        elif not isinstance(record, (bytes, bytearray, memoryview)):
            raise InvalidArgumentError(f"TFRecordWriter.write takes bytes, got "
                                       f"{type(record).__name__}")
        data = encode_record(bytes(record))
        self._file.write(self._z.compress(data) if self._z else data)

    def flush(self):
        self._check()
        if self._z:
            self._file.write(self._z.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._z:
            self._file.write(self._z.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_file", None) is not None:
            self.close()


# ---- reading -------------------------------------------------------------------------------

class _Inflating:
    """read(n) of the decompressed stream of a GZIP or ZLIB file."""

    def __init__(self, f, gzip: bool):
        self._f = f
        self._gzip = gzip
        self._z = zlib.decompressobj(31 if gzip else 15)
        self._buf = b""

    def read(self, n: int) -> bytes:
        while len(self._buf) < n:
            if self._z.eof:
                rest = self._z.unused_data
                if self._gzip and rest.strip(b"\0"):  # concatenated gzip members
                    self._z = zlib.decompressobj(31)
                    self._buf += self._z.decompress(rest)
                    continue
                break
            chunk = self._f.read(1 << 16)
            if not chunk:
                try:
                    self._buf += self._z.flush()
                except zlib.error as e:
                    raise DataLossError(f"{self._name()}: corrupted compressed stream "
                                        f"({e})") from None
                break
            try:
                self._buf += self._z.decompress(chunk)
            except zlib.error as e:
                raise DataLossError(f"{self._name()}: corrupted compressed stream ({e})") \
                    from None
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _name(self):
        return getattr(self._f, "name", "file")


def read_records(path, compression_type=""):
    """The records (bytes) of one TFRecord file, read as they are reached. Raises
    NotFoundError for a missing file and DataLossError for corrupt records."""
    path = _path(path)
    comp = _compression_name(compression_type)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    with f:
        src = _Inflating(f, comp == "GZIP") if comp else f
        offset = 0
        while True:
            header = src.read(12)
            if not header:
                return
            if len(header) < 12:
                raise DataLossError(f"truncated record at {offset}")
            length, crc = struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != crc:
                raise DataLossError(f"corrupted record at {offset}")
            body = src.read(length + 4)
            if len(body) < length + 4:
                raise DataLossError(f"truncated record at {offset + 12}")
            data = body[:length]
            if masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                raise DataLossError(f"corrupted record at {offset + 12}")
            offset += 16 + length
            yield data


def tf_record_iterator(path, options=None):
    """An iterator over the records (bytes) of a TFRecord file; options: TFRecordOptions or a
    compression type. Corrupt data raises DataLossError."""
    return read_records(path, TFRecordOptions.get_compression_type_string(options))
