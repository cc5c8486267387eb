"""Constant values (literals): conversion from parsed scalars and the text form.

Floats print the way XLA's RoundTripFpToString does: `%.{digits10}g`, and if that does not
read back to the same value, `%.{max_digits10}g`; inf/nan print as inf, -inf, nan, and a
NaN whose payload is not the canonical quiet NaN prints as nan(0x<payload>) so that bitwise
round trips hold.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.hlo.shapes import PRIMITIVE_TYPES, PrimitiveType, Shape


class _Elided:
    def __repr__(self):
        return "ELIDED"


ELIDED = _Elided()  # a constant printed as {...}: its value is unknown

_DIGITS = {"f16": (3, 5), "bf16": (2, 4), "f32": (6, 9), "f64": (15, 17)}
_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_MANT = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}


def format_float(value, type_name: str) -> str:
    v = float(value)
    if math.isnan(v):
        arr = np.asarray(value, dtype=_float_dtype(type_name))
        bits = int(arr.view(_UINT[arr.dtype.itemsize * 8]))
        mant_bits = _MANT[type_name]
        payload = bits & ((1 << mant_bits) - 1)
        sign = "-" if bits >> (arr.dtype.itemsize * 8 - 1) else ""
        if payload == 1 << (mant_bits - 1):  # canonical quiet NaN
            return sign + "nan"
        return f"{sign}nan(0x{payload:x})"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    lo, hi = _DIGITS[type_name]
    dt = _float_dtype(type_name)
    s = f"{v:.{lo}g}"
    if np.asarray(float(s), dtype=dt) != np.asarray(value, dtype=dt):
        s = f"{v:.{hi}g}"
    return s


def _float_dtype(type_name: str) -> np.dtype:
    return PRIMITIVE_TYPES[type_name].np_dtype


def format_scalar(value, t: PrimitiveType) -> str:
    if t.is_pred:
        return "true" if bool(value) else "false"
    if t.is_float:
        return format_float(value, t.name)
    return str(int(value))


def format_literal(value, shape: Shape) -> str:
    """The text inside constant(...)."""
    if value is ELIDED:
        return "{...}"
    if shape.is_tuple:
        return "(" + ", ".join(format_literal(v, s)
                               for v, s in zip(value, shape.tuple_shapes)) + ")"
    arr = np.asarray(value)
    t = shape.element_type
    if shape.rank == 0:
        return format_scalar(arr.reshape(()).item() if not t.is_float else arr.reshape(())[()], t)
    flat = [format_scalar(x, t) for x in arr.reshape(-1)]

    def nest(dims, offset):
        if len(dims) == 1:
            return "{" + ", ".join(flat[offset:offset + dims[0]]) + "}", offset + dims[0]
        parts = []
        for _ in range(dims[0]):
            s, offset = nest(dims[1:], offset)
            parts.append(s)
        return "{ " + ", ".join(parts) + " }", offset

    return nest(shape.dims, 0)[0]


def nan_with_payload(type_name: str, payload: int, negative: bool):
    """A NaN of the given type with the given mantissa payload."""
    dt = _float_dtype(type_name)
    nbits = dt.itemsize * 8
    exp_bits = nbits - 1 - _MANT[type_name]
    bits = (((1 << exp_bits) - 1) << _MANT[type_name]) | payload
    if negative:
        bits |= 1 << (nbits - 1)
    return np.array(bits, dtype=_UINT[nbits]).view(dt)[()]
