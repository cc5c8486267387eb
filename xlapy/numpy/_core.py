"""The NumPy-compatible layer's foundations: conversion, type promotion, broadcasting.

Semantics follow NumPy 2 (NEP 50): Python scalars are "weak" (x_f32 * 2.0 stays f32),
array dtypes promote as np.result_type says (i32 + f32 -> f64, as NumPy does). Every
function accepts NumPy arrays, Python scalars and traced values; outside jit it runs
eagerly and returns NumPy arrays, inside jit/grad it records primitives.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.frontend.array import as_result
from xlapy.errors import XlapyError
from xlapy.config import x64_enabled
from xlapy.frontend.core import Tracer, concrete_shape
from xlapy.frontend.dtypes import canonicalize_dtype, canonicalize_value, explicit
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S

_PY_SCALARS = (bool, int, float, complex)
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_EXTRA_FLOATS = (BFLOAT16,)  # NumPy sees ml_dtypes' floats as kind "V"


def kind(dtype) -> str:
    """NumPy's dtype.kind, with bfloat16 counted as a float ("f")."""
    dtype = np.dtype(dtype)
    return "f" if dtype in _EXTRA_FLOATS else dtype.kind


def is_array_like(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer) + _PY_SCALARS)


def asarray(x, dtype=None, *, _where="asarray"):
    """x as an array (a NumPy array, or the traced value itself). With jax_enable_x64 off
    (the default) 64-bit values become 32-bit, as in JAX (explicit 64-bit dtypes warn)."""
    dtype = explicit(dtype, _where)
    if isinstance(x, Tracer):
        return x if dtype is None else B.convert(x, dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) for e in _flat(x)):
        return stack_any(x, dtype)
    if dtype is not None and not isinstance(x, _PY_SCALARS):
        # arrays convert with XLA's semantics (float -> int saturates, NaN -> 0) eagerly
        # too, so eager and jitted code agree; Python scalars keep NumPy's range checks
        return cast(asarray(x), dtype)
    if dtype is None and not x64_enabled():
        arr = np.asarray(x)
        if arr.dtype.kind in "iu" and isinstance(x, (int, list, tuple)):
            # Python ints become int32 as in JAX (OverflowError when they do not fit)
            arr = _python_ints(x, arr)
    else:
        arr = np.asarray(x, dtype=dtype)
    check_dtype(arr.dtype)
    return as_result(canonicalize_value(arr))


def _python_ints(x, arr):
    """Python integers (possibly nested in lists) as the default int dtype; NumPy integer
    arrays inside keep their dtype (canonicalized)."""
    if arr.dtype.kind == "i" and arr.dtype.itemsize == 8 and arr.size:
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        if int(arr.min()) < lo or int(arr.max()) > hi:
            raise OverflowError(f"Python int too large to convert to int32: {x!r} (enable "
                                "jax_enable_x64 for 64-bit integers)")
    return arr


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def stack_any(x, dtype=None):
    parts = [asarray(e) for e in x]
    parts = [p if not isinstance(p, list) else asarray(p) for p in parts]
    dt = result_type(*parts) if dtype is None else np.dtype(dtype)
    parts = [S.reshape(cast(p, dt), (1,) + shape(p)) for p in parts]
    return S.concatenate(parts, 0)


def shape(x) -> tuple:
    if isinstance(x, Tracer):
        return x.shape
    return np.shape(x)


def ndim(x) -> int:
    return len(shape(x))


def dtype_of(x) -> np.dtype:
    """x's dtype as computations see it (canonicalized: 32-bit when x64 is off)."""
    if isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, np.ndarray | np.generic):
        return canonicalize_dtype(x.dtype)
    return canonicalize_dtype(np.asarray(x).dtype)


def _promotion_arg(x):
    if isinstance(x, Tracer):
        if x.aval.weak_type and x.dtype.kind in "iufc":  # a Python scalar passed to jit
            return {"f": 0.0, "c": 0j}.get(x.dtype.kind, 0)
        return x.dtype
    if isinstance(x, _PY_SCALARS):
        return x  # weak
    if isinstance(x, (np.dtype, str)) or (isinstance(x, type) and issubclass(x, np.generic)):
        return np.dtype(x)  # result_type(np.int8, np.uint8), as NumPy
    return np.asarray(x).dtype


def result_type(*xs) -> np.dtype:
    """NumPy 2's promotion result, canonicalized (64-bit -> 32-bit when x64 is off)."""
    return canonicalize_dtype(_result_type(*xs))


def _result_type(*xs) -> np.dtype:
    args = [_promotion_arg(x) for x in xs]
    if not any(isinstance(a, np.dtype) and a in _EXTRA_FLOATS for a in args):
        return np.result_type(*args)
    # bfloat16 (NumPy has no rule for most pairs): JAX's lattice. Integers, bools and weak
    # Python scalars keep bfloat16; with float16 it is float32; wider floats win.
    floats = [a for a in args if isinstance(a, np.dtype) and a.kind == "f"]
    if not floats:
        return BFLOAT16
    r = np.result_type(*floats)
    return np.dtype(np.float32) if r == np.float16 else r


def check_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype in _EXTRA_FLOATS:
        return dtype
    if dtype.kind not in "biufc" or (dtype.kind == "f" and dtype.itemsize > 8) or (
            dtype.kind == "c" and dtype.itemsize > 16):
        raise XlapyError(f"xlapy arrays hold bool, int, uint, float (up to 64 bits) or complex "
                         f"(complex64, complex128) values; got {dtype}")
    return dtype


def cast(x, dtype):
    """x converted to dtype (a NumPy array for concrete input, else a traced convert)."""
    dtype = canonicalize_dtype(check_dtype(dtype))
    if isinstance(x, Tracer):
        return B.convert(x, dtype)
    arr = np.asarray(x)
    if arr.dtype == dtype:
        return as_result(arr)
    if arr.ndim == 0 and isinstance(x, _PY_SCALARS):
        with np.errstate(over="ignore"):  # 1e300 as float16 is inf, as in NumPy
            return as_result(np.asarray(x, dtype=dtype))  # a weak Python scalar: other type
    return B.convert(canonicalize_value(arr), dtype)


def promote(*xs, dtype=None):
    dt = check_dtype(result_type(*xs) if dtype is None else dtype)
    return [cast(x, dt) for x in xs]


def broadcast_shapes(*shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise XlapyError(f"operands could not be broadcast together with shapes "
                         f"{' '.join(str(list(s)) for s in shapes)}") from None


def broadcast_to(x, shp):
    shp = concrete_shape(shp, "broadcast_to's shape")
    s = shape(x)
    if s == shp:
        return x if isinstance(x, Tracer) else canonicalize_value(np.asarray(x))
    if len(s) > len(shp):
        raise XlapyError(f"cannot broadcast an array of shape {list(s)} to {list(shp)}")
    offset = len(shp) - len(s)
    for d, n in enumerate(s):
        if n not in (1, shp[offset + d]):
            raise XlapyError(f"cannot broadcast an array of shape {list(s)} to {list(shp)}")
    return B.broadcast_in_dim(x, shp, tuple(range(offset, len(shp))))


def broadcast_arrays(*xs):
    shp = broadcast_shapes(*[shape(x) for x in xs])
    return [broadcast_to(x, shp) for x in xs]


def promote_and_broadcast(*xs, dtype=None):
    return broadcast_arrays(*promote(*xs, dtype=dtype))


def float_dtype_for(dt) -> np.dtype:
    """The dtype NumPy's float ufuncs return for an input dtype (int32 -> f64, ...;
    canonicalized: f32 when x64 is off)."""
    dt = np.dtype(dt)
    if kind(dt) == "f":
        return dt
    return canonicalize_dtype(np.result_type(dt, np.float16))


def normalize_axis(axis, nd, name="axis") -> int:
    a = int(axis)
    if not -nd <= a < nd:
        raise XlapyError(f"{name} {axis} is out of bounds for an array of dimension {nd}")
    return a % nd


def normalize_axes(axis, nd) -> tuple:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (int, np.integer)):
        return (normalize_axis(axis, nd),)
    axes = tuple(normalize_axis(a, nd) for a in axis)
    if len(set(axes)) != len(axes):
        raise XlapyError(f"repeated axis in {axis}")
    return axes
