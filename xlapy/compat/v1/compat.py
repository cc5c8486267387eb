"""tf.compat: TensorFlow 1.x's text/bytes helpers (tf.compat.as_bytes, as_text, ...)."""

from __future__ import annotations

import numbers
import os

import numpy as np

from xlapy.compat.v1.errors import InvalidTypeError

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding="utf-8") -> bytes:
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise InvalidTypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8") -> str:
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise InvalidTypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value) -> str:
    return as_str(value) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    return os.fspath(path) if hasattr(path, "__fspath__") else path
