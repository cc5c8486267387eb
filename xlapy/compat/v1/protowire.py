"""Protobuf's wire format and text-format scalars, written here (xlapy's core
dependencies do not include the protobuf runtime): varints, tags, length-delimited fields,
a field reader, string escapes and float32's shortest text. Shared by tf.train.Example
(train/example_pb.py), the graph protos' runtime (proto/message.py) and the TensorBoard
GraphDef writer (summary/graph_def.py)."""

from __future__ import annotations

import numpy as np


class DecodeError(Exception):
    """Bytes that are not a valid serialization of the message (protobuf's DecodeError)."""


# ---- wire format ---------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64: ten-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf, pos: int, end: int):
    result = shift = 0
    while True:
        if pos >= end:
            raise DecodeError("Truncated message.")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("Too many bytes when decoding varint.")


def _fields(buf, pos: int, end: int):
    """(field number, wire type, value, ...) of the fields of buf[pos:end]: the value is an int
    (varint), bytes (fixed32 / fixed64 / length-delimited)."""
    while pos < end:
        key, pos = _read_varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise DecodeError("Field number 0 is illegal.")
        if wt == 0:
            v, pos = _read_varint(buf, pos, end)
        elif wt == 1:
            if pos + 8 > end:
                raise DecodeError("Truncated message.")
            v, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wt == 2:
            n, pos = _read_varint(buf, pos, end)
            if pos + n > end:
                raise DecodeError("Truncated message.")
            v, pos = bytes(buf[pos:pos + n]), pos + n
        elif wt == 5:
            if pos + 4 > end:
                raise DecodeError("Truncated message.")
            v, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            raise DecodeError(f"Tag had invalid wire type {wt}.")
        yield num, wt, v


def _tag(num: int, wt: int) -> bytes:
    return _varint((num << 3) | wt)


def _delimited(num: int, payload: bytes) -> bytes:
    return _tag(num, 2) + _varint(len(payload)) + payload


def _int64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# ---- text format ---------------------------------------------------------------------------

def _escape(b: bytes) -> str:
    out = []
    for c in b:
        if c == 0x0A:
            out.append(r"\n")
        elif c == 0x0D:
            out.append(r"\r")
        elif c == 0x09:
            out.append(r"\t")
        elif c == 0x22:
            out.append('\\"')
        elif c == 0x27:
            out.append("\\'")
        elif c == 0x5C:
            out.append("\\\\")
        elif 32 <= c < 127:
            out.append(chr(c))
        else:
            out.append(f"\\{c:03o}")
    return "".join(out)


def _escape_str(s: str) -> str:
    """A string field in the text format: escaped as bytes, characters beyond ASCII kept."""
    return "".join(c if ord(c) > 127 else _escape(c.encode()) for c in s)


def _float_text(v: float) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(_shortest_f32(v))


def _shortest_f32(v: float) -> float:
    """The shortest decimal, from 6 significant digits on, that rounds to the same float32
    (protobuf's text format: type_checkers.ToShortestFloat)."""
    f = np.float32(v)
    for digits in range(6, 10):
        r = float(f"{float(f):.{digits}g}")
        if np.float32(r) == f:
            return r
    return float(f)
