"""xlapy.dtypes: dtype helpers as jax.dtypes has them.

float0 is the dtype of the tangents of integer and boolean values (zero bytes per element),
as JAX's; canonicalize_dtype maps a dtype to the one computations use under the current
jax_enable_x64 setting (float64 -> float32, int64 -> int32, uint64 -> uint32 when off).

result_type(*args) follows JAX's type promotion lattice, not NumPy's table: Python scalars
are "weak" (1.0 + an f16 array is f16), an integer with a float gives that float (i32 + f16
is f16), bf16 with f16 gives f32, u64 with a signed integer gives the default float. The
lattice, as JAX documents it (each type promotes to the types it points at):

    bool -> int* -> u8 -> u16 -> u32 -> u64 -> float*     int* -> i8 -> i16 -> i32 -> i64
    u8 -> i16, u16 -> i32, u32 -> i64, i64 -> float*
    float* -> bf16 | f16 -> f32 -> f64 -> c128,  float* -> complex* -> c64 -> c128,
    f32 -> c64

(int*, float*, complex*: Python int, float, complex scalars, and values derived from them.)
The result of two types is the least type both reach. issubdtype knows bfloat16 is a
floating type (NumPy's does not).
"""

from __future__ import annotations

import ml_dtypes as _ml
import numpy as np

from xlapy.frontend.dtypes import canonicalize_dtype, default_float, default_int
from xlapy.frontend.forward import float0

__all__ = ["bfloat16", "canonicalize_dtype", "float0", "issubdtype", "result_type"]

bfloat16 = _ml.bfloat16
_BF16 = np.dtype(bfloat16)

_EDGES = {
    "bool": ("int*",), "int*": ("uint8", "int8"),
    "uint8": ("uint16", "int16"), "uint16": ("uint32", "int32"),
    "uint32": ("uint64", "int64"), "uint64": ("float*",),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": ("float*",),
    "float*": ("complex*", "bfloat16", "float16"), "bfloat16": ("float32",),
    "float16": ("float32",), "float32": ("float64", "complex64"), "float64": ("complex128",),
    "complex*": ("complex64",), "complex64": ("complex128",), "complex128": (),
}


def _upper(node: str) -> frozenset:
    seen, todo = {node}, [node]
    while todo:
        for nxt in _EDGES[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


_UP = {n: _upper(n) for n in _EDGES}


def _node(x) -> str:
    """The lattice node of a result_type argument."""
    from xlapy.frontend.core import Tracer
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int*"
    if isinstance(x, float):
        return "float*"
    if isinstance(x, complex):
        return "complex*"
    if isinstance(x, Tracer):
        if x.aval.weak_type and x.dtype.kind in "iufc":
            return {"i": "int*", "u": "int*", "f": "float*", "c": "complex*"}[x.dtype.kind]
        dt = np.dtype(x.dtype)
    elif x is None:
        raise TypeError("result_type: None is not a dtype (give a dtype, an array or a "
                        "Python scalar)")
    elif hasattr(x, "dtype") and not isinstance(x, type):
        dt = np.dtype(x.dtype)
    else:
        dt = np.dtype(x)
    dt = canonicalize_dtype(dt)  # (as JAX: u64 is u32 before promotion when x64 is off)
    name = "bfloat16" if dt == _BF16 else dt.name
    if name not in _EDGES:
        raise TypeError(f"result_type: xlapy has no promotion rule for dtype {dt}")
    return name


def _join(nodes: list[str]) -> str:
    common = frozenset.intersection(*[_UP[n] for n in nodes])
    # the least element of the common upper bounds: the one that reaches all the others
    for c in common:
        if common <= _UP[c]:
            return c
    raise TypeError(f"result_type: no common type for {nodes}")  # (cannot happen)


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX's promotion gives `args` (dtypes, arrays, Python scalars),
    canonicalized for jax_enable_x64; with return_weak_type_flag, (dtype, weak)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    node = _join([_node(a) for a in args])
    weak = node.endswith("*")
    if node == "int*":
        dt = default_int()
    elif node == "float*":
        dt = default_float()
    elif node == "complex*":
        dt = np.dtype(np.complex128) if default_float().itemsize == 8 else \
            np.dtype(np.complex64)
    else:
        dt = canonicalize_dtype(_BF16 if node == "bfloat16" else np.dtype(node))
    return (dt, weak) if return_weak_type_flag else dt


def issubdtype(a, b) -> bool:
    """np.issubdtype, with bfloat16 a floating (inexact) type as in JAX."""
    if a is not None and not (isinstance(a, type) and issubclass(a, np.generic)
                              and a is not bfloat16):
        try:
            a_dt = np.dtype(a)
        except TypeError:
            a_dt = None
        if a_dt == _BF16:
            a = bfloat16
    if a is bfloat16:
        if isinstance(b, type) and b in (np.floating, np.inexact, np.number, np.generic):
            return True
        try:
            return np.dtype(b) == _BF16
        except TypeError:
            return False
    return bool(np.issubdtype(a, b))


def __getattr__(name):
    raise AttributeError(f"module 'xlapy.dtypes' has no attribute '{name}' (it has: "
                         f"{', '.join(__all__)})")
