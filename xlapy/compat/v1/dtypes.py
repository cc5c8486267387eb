"""TensorFlow's DType objects (tf.float32, tf.int64, ...) over NumPy dtypes.

`as_dtype` accepts a DType, a NumPy dtype or type, a Python type or a TF type name.
Python values convert as TensorFlow converts them: float -> float32, int -> int32,
bool -> bool; NumPy arrays keep their dtype. bfloat16 is ml_dtypes.bfloat16 (NumPy gives it
kind "V", so the float checks below name it); TF's DataType enum numbers convert too.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError

_pybool = type(True)  # `bool` below is tf.bool
_BF16 = np.dtype(ml_dtypes.bfloat16)

# TF's DataType enum (types.proto) of each dtype: DType.as_datatype_enum, as_dtype(enum)
_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
         "string": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17,
         "complex128": 18, "float16": 19}


class DType:
    __slots__ = ("name", "as_numpy_dtype", "_np")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self._np = np.dtype(np_dtype)
        self.as_numpy_dtype = self._np.type

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def np(self) -> np.dtype:
        return self._np

    @property
    def as_datatype_enum(self) -> int:
        """TF's DataType enum value (DT_FLOAT = 1, DT_BFLOAT16 = 14, ...)."""
        return _ENUM[self.name]

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f" or self._np == _BF16

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def real_dtype(self) -> "DType":
        """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
        return as_dtype(np.finfo(self._np).dtype) if self.is_complex else self

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def size(self) -> int:
        return self._np.itemsize

    def _info(self, what: str):
        if self.is_floating:
            return ml_dtypes.finfo(self._np)  # NumPy's finfo does not know bfloat16
        if self.is_integer:
            return np.iinfo(self._np)
        raise TypeError(f"Cannot find {what} value of {self!r}.")

    @property
    def min(self):
        """The lowest finite value (a NumPy scalar of this dtype for floats)."""
        return self._info("minimum").min

    @property
    def max(self):
        return self._info("maximum").max

    @property
    def limits(self):
        """TF's intensity limits (min, max) of images of this dtype, the negative range
        clipped as TF's property does: (0, 1) for floats (bfloat16 and float16 included,
        where TF 1.15's table has no entry), (0, max) for integers, (False, True) for bool."""
        if self.is_bool:
            return (False, True)
        if self.is_floating:
            return (0, 1)
        if self.is_integer:
            return (0, int(np.iinfo(self._np).max))
        raise TypeError(f"{self!r} has no intensity limits")

    def is_compatible_with(self, other) -> bool:
        return self == as_dtype(other)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._np == other._np
        try:
            return self._np == as_dtype(other)._np
        except (InvalidArgumentError, TypeError):
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._np)

    def __repr__(self):
        return f"tf.{self.name}"

    __str__ = lambda self: f"<dtype: '{self.name}'>"


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
bool = DType("bool", np.bool_)
string = DType("string", np.object_)  # elements are Python bytes (summaries, text)
complex64 = DType("complex64", np.complex64)  # FFTs (ops/spectral_ops.py) and their inputs
complex128 = DType("complex128", np.complex128)
bfloat16 = DType("bfloat16", _BF16)  # brain floating point: float32's exponent, 8-bit mantissa
half, double = float16, float64

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16, bool, string,
        complex64, complex128, bfloat16]
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})
_BY_ENUM = {_ENUM[d.name]: d for d in _ALL}


def as_dtype(x) -> DType:
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    if x is float:
        return float32
    if x is int:
        return int32
    if x is _pybool:
        return bool
    if isinstance(x, (int, np.integer)) and not isinstance(x, (_pybool, np.bool_)):
        if int(x) in _BY_ENUM:  # a DataType enum value (types_pb2.DT_BFLOAT16, ...)
            return _BY_ENUM[int(x)]
        raise InvalidArgumentError(f"cannot convert {x!r} to a dtype: not a supported "
                                   "DataType enum value")
    try:
        d = np.dtype(x)
    except TypeError:
        raise InvalidArgumentError(f"cannot convert {x!r} to a dtype") from None
    if d not in _BY_NP:
        raise InvalidArgumentError(f"dtype {d} is not supported (supported: "
                                   f"{', '.join(sorted(_BY_NAME))})")
    return _BY_NP[d]


def dtype_of_value(value) -> DType:
    """The dtype TensorFlow gives a Python or NumPy value."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    if isinstance(value, (str, bytes)):
        return string
    a = np.asarray(value)
    if a.dtype.kind in "SU":
        return string
    if a.dtype == np.float64 and not isinstance(value, (np.ndarray, np.generic)):
        return float32  # a Python list of floats
    if a.dtype == np.int64 and not isinstance(value, (np.ndarray, np.generic)):
        if a.size == 0 or (np.iinfo(np.int32).min <= a.min() and a.max() <= np.iinfo(np.int32).max):
            return int32  # a Python list of ints
    return as_dtype(a.dtype)
