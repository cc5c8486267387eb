"""Host-side ops of tf.io and the top level that work on strings, files or the clock:
tf.io.serialize_tensor / parse_tensor (TensorProto bytes), tf.io.encode_base64 /
decode_base64 (web-safe base64), tf.io.matching_files (glob) and tf.timestamp.

XLA has no string type and no clock, so each of these stays in the executor."""

from __future__ import annotations

import base64
import glob
import re
import time

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.graph_def import TensorProto, make_ndarray, shape_proto
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import SCALAR, make, same_as_input, tensor
from xlapy.compat.v1.proto.graph_pb import DataType
from xlapy.compat.v1.protowire import DecodeError
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

__all__ = ["decode_base64", "encode_base64", "matching_files", "parse_tensor",
           "serialize_tensor", "timestamp"]


def _string_input(x, what: str):
    is_tensor = isinstance(x, Tensor) or hasattr(x, "_to_tensor")
    t = tensor(x) if is_tensor else tensor(x, dtype=dtypes.string)
    if t.dtype != dtypes.string:
        raise InvalidTypeError(f"{what}: expected a string tensor, got {t.dtype.name}")
    return t


def _bytes_array(values, shape) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


# ---- tf.timestamp ---------------------------------------------------------------------------

@register_op("Timestamp", infer=lambda op: [(dtypes.float64, SCALAR)], lowering=None,
             stateful=True)
def _timestamp(m):
    """Seconds since the Unix epoch, as a float64 scalar, read when the op runs."""
    return np.asarray(time.time(), np.float64)


def timestamp(name=None):
    """tf.timestamp: the time (seconds since the epoch, float64) when the op runs."""
    return make("Timestamp", [], name=name)


# ---- tf.io.serialize_tensor / tf.io.parse_tensor ---------------------------------------------

# the DataType enum of each dtype (graph_def.py's table lacks the complex types)
_ENUM = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE",
         "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64",
         "uint8": "DT_UINT8", "uint16": "DT_UINT16", "bool": "DT_BOOL", "string": "DT_STRING",
         "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128", "bfloat16": "DT_BFLOAT16"}
_DTYPE = {DataType.values[e]: dtypes.as_dtype(n) for n, e in _ENUM.items()}


@register_op("SerializeTensor", infer=lambda op: [(dtypes.string, SCALAR)], lowering=None)
def _serialize_tensor(m, x):
    """A TensorProto holding x, serialized as TF's SerializeTensor writes it: numbers in
    tensor_content (little-endian), strings in string_val."""
    arr = np.asarray(x)
    dt = dtypes.string if arr.dtype == object else dtypes.as_dtype(arr.dtype)
    p = TensorProto(dtype=DataType.values[_ENUM[dt.name]],
                    tensor_shape=shape_proto(list(arr.shape)))
    if dt == dtypes.string:
        p.string_val.extend(bytes(b) for b in arr.reshape(-1))
    else:
        p.tensor_content = np.ascontiguousarray(arr).astype(
            arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return np.asarray(p.SerializeToString(), dtype=object)


def _parse_infer(op):
    t = op.inputs[0]
    if t.dtype != dtypes.string:
        raise InvalidTypeError(f"parse_tensor: serialized must be a string tensor, got "
                               f"{t.dtype.name}")
    if t.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"parse_tensor: serialized must be a scalar, got shape "
                                   f"{t.shape}")
    return [(op.get_attr("out_type"), unknown_shape())]


def _proto_value(p, dt) -> np.ndarray:
    shape = [int(d.size) for d in p.tensor_shape.dim]
    if dt.is_complex:  # (make_ndarray reads the other dtypes)
        if p.tensor_content:
            flat = np.frombuffer(p.tensor_content, dt.np.newbyteorder("<"))
        else:
            parts = np.asarray(list(p.scomplex_val if dt == dtypes.complex64 else
                                    p.dcomplex_val), dt.real_dtype.np)
            flat = parts[0::2] + 1j * parts[1::2]
        n = int(np.prod(shape))
        if flat.size not in (n, 1) and not (flat.size == 0 and n == 0):
            raise InvalidArgumentError("Could not parse `serialized` as TensorProto")
        return np.broadcast_to(flat.astype(dt.np), (n,)).reshape(shape).copy()
    if p.tensor_content:
        n = int(np.prod(shape))
        if len(p.tensor_content) != n * dt.np.itemsize:
            raise InvalidArgumentError("Could not parse `serialized` as TensorProto")
    return make_ndarray(p)


@register_op("ParseTensor", infer=_parse_infer, attrs=("out_type",), lowering=None)
def _parse_tensor(m, serialized, out_type=dtypes.float32):
    """The tensor a serialized TensorProto holds; its dtype must be out_type."""
    p = TensorProto()
    try:
        p.ParseFromString(bytes(np.asarray(serialized, dtype=object)[()]))
    except (DecodeError, ValueError, TypeError):
        raise InvalidArgumentError("Could not parse `serialized` as TensorProto") from None
    got = _DTYPE.get(p.dtype)
    if got is None:
        raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto: DataType "
                                   f"{p.dtype} is not supported")
    if got != out_type:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({got.name}) and "
                                   f"dtype ({out_type.name})")
    return _proto_value(p, got)


def serialize_tensor(tensor_, name=None):
    """tf.io.serialize_tensor: a scalar string, the tensor as TensorProto bytes."""
    return make("SerializeTensor", [tensor(tensor_)], name=name)


def parse_tensor(serialized, out_type, name=None):
    """tf.io.parse_tensor: the tensor of serialize_tensor's bytes (out_type its dtype)."""
    return make("ParseTensor", [_string_input(serialized, "parse_tensor")],
                {"out_type": dtypes.as_dtype(out_type)}, name=name)


# ---- tf.io.encode_base64 / tf.io.decode_base64 ------------------------------------------------

def _string_same_shape(op):
    if op.inputs[0].dtype != dtypes.string:
        raise InvalidTypeError(f"{op.type}: input must be a string tensor, got "
                               f"{op.inputs[0].dtype.name}")
    return same_as_input()(op)


_B64_CHARS = re.compile(rb"[A-Za-z0-9_\-]*=*")


def _b64decode(b: bytes) -> bytes:
    if not _B64_CHARS.fullmatch(b):
        raise InvalidArgumentError("Invalid character found in base64.")
    s = b.rstrip(b"=")
    if len(s) % 4 == 1 or len(b) - len(s) > 2:
        raise InvalidArgumentError("Invalid base64 data: the length is not a valid base64 "
                                   "length.")
    return base64.urlsafe_b64decode(s + b"=" * (-len(s) % 4))


@register_op("EncodeBase64", infer=_string_same_shape, attrs=("pad",), lowering=None)
def _encode_base64(m, x, pad=False):
    """Each string in web-safe base64 ('-' and '_' for '+' and '/'); '=' padding only
    with pad=True."""
    x = np.asarray(x, dtype=object)
    out = [base64.urlsafe_b64encode(bytes(v)) for v in x.reshape(-1)]
    if not pad:
        out = [v.rstrip(b"=") for v in out]
    return _bytes_array(out, x.shape)


@register_op("DecodeBase64", infer=_string_same_shape, lowering=None)
def _decode_base64(m, x):
    """The inverse of EncodeBase64: web-safe base64, padding optional."""
    x = np.asarray(x, dtype=object)
    return _bytes_array([_b64decode(bytes(v)) for v in x.reshape(-1)], x.shape)


def encode_base64(input, pad=False, name=None):
    """tf.io.encode_base64: web-safe base64 of each string (no '=' padding by default)."""
    return make("EncodeBase64", [_string_input(input, "encode_base64")], {"pad": bool(pad)},
                name=name)


def decode_base64(input, name=None):
    """tf.io.decode_base64: the bytes of each web-safe base64 string."""
    return make("DecodeBase64", [_string_input(input, "decode_base64")], name=name)


# ---- tf.io.matching_files ---------------------------------------------------------------------

def _matching_infer(op):
    t = op.inputs[0]
    if t.dtype != dtypes.string:
        raise InvalidTypeError(f"matching_files: pattern must be a string tensor, got "
                               f"{t.dtype.name}")
    if t.shape.ndims is not None and t.shape.ndims > 1:
        raise InvalidArgumentError(f"matching_files: pattern must be a scalar or a vector, "
                                   f"got shape {t.shape}")
    return [(dtypes.string, TensorShape([None]))]


@register_op("MatchingFiles", infer=_matching_infer, lowering=None, stateful=True)
def _matching_files(m, pattern):
    """The paths matching any of the glob patterns (hidden files included), sorted."""
    found: list = []
    for p in np.asarray(pattern, dtype=object).reshape(-1):
        p = bytes(p).decode("utf-8")
        found.extend(glob.glob(p, include_hidden=True))
    return _bytes_array(sorted(f.encode("utf-8") for f in found), (len(found),))


def matching_files(pattern, name=None):
    """tf.io.matching_files: the files matching a glob pattern (or a vector of them), as a
    sorted 1-D string tensor; empty when nothing matches."""
    return make("MatchingFiles", [_string_input(pattern, "matching_files")], name=name)


not_differentiable("Timestamp", "SerializeTensor", "ParseTensor", "EncodeBase64",
                   "DecodeBase64", "MatchingFiles")
