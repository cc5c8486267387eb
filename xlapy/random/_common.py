"""Shared argument handling of xlapy.random: errors, default dtypes, shapes, and the
internal jit every sampler runs through (as JAX's samplers are jitted: called eagerly they
compile once per shape and dtype; called under jit they trace into the caller's program)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from xlapy.errors import XlapyError, XlapyWarning
from xlapy.frontend.core import Tracer


class RandomError(XlapyError, ValueError):
    """Bad arguments to an xlapy.random function (a ValueError too, as in JAX)."""


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled (JAX's jax_enable_x64). Off by default, as in JAX;
    follows xlapy's config flag when that exists."""
    try:
        from xlapy import config
    except ImportError:
        return False
    flag = getattr(config, "x64_enabled", None)
    if flag is None:
        flag = getattr(config, "jax_enable_x64", False)
    return bool(flag() if callable(flag) else flag)


def _narrow(dtype: np.dtype, fn: str) -> np.dtype:
    if dtype.itemsize == 8 and dtype.kind in "fiu" and not x64_enabled():
        narrow = np.dtype(f"{dtype.kind}4")
        warnings.warn(f"{fn}: explicitly requested dtype {dtype} is not available without "
                      f"x64 enabled, and will be truncated to dtype {narrow}", XlapyWarning,
                      stacklevel=4)
        return narrow
    return dtype


def float_dtype(dtype, fn: str) -> np.dtype:
    """The float dtype a sampler produces: the default float (float32, float64 with x64)
    for None; 64-bit requests narrowed without x64, as JAX does."""
    if dtype is None:
        return np.dtype(np.float64 if x64_enabled() else np.float32)
    dt = _as_dtype(dtype, fn)
    if not _is_float(dt):
        raise RandomError(f"{fn}: the dtype must be a float dtype, got {dt}")
    return _narrow(dt, fn)


def int_dtype(dtype, fn: str, unsigned: bool = False) -> np.dtype:
    if dtype is None:
        return np.dtype((np.uint64 if unsigned else np.int64) if x64_enabled()
                        else (np.uint32 if unsigned else np.int32))
    dt = _as_dtype(dtype, fn)
    if dt.kind not in ("u" if unsigned else "iu"):
        kind = "an unsigned integer" if unsigned else "an integer"
        raise RandomError(f"{fn}: the dtype must be {kind} dtype, got {dt}")
    return _narrow(dt, fn)


def _as_dtype(dtype, fn: str) -> np.dtype:
    if dtype is float:
        return np.dtype(np.float64 if x64_enabled() else np.float32)
    if dtype is int:
        return np.dtype(np.int64 if x64_enabled() else np.int32)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise RandomError(f"{fn}: {dtype!r} is not a dtype") from None


def _is_float(dt: np.dtype) -> bool:
    import ml_dtypes
    return dt.kind == "f" or dt == np.dtype(ml_dtypes.bfloat16)


def canonical_shape(shape, fn: str) -> tuple:
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(operator_index(d)) for d in shape)
    except TypeError:
        raise RandomError(f"{fn}: shape must be a tuple of non-negative integers, got "
                          f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise RandomError(f"{fn}: shape must be a tuple of non-negative integers, got {dims}")
    return dims


def operator_index(d):
    if isinstance(d, Tracer):
        raise d._concrete_error("used as a shape (shapes must be static)")
    import operator
    return operator.index(d)


def broadcast_shapes(*shapes, fn: str = "xlapy.random") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RandomError(f"{fn}: incompatible shapes for broadcasting: {list(shapes)}") \
            from None


def check_shape(fn: str, shape: tuple, *param_shapes) -> None:
    """`shape` must be what the parameters broadcast to together with it (JAX's rule)."""
    if param_shapes:
        joint = broadcast_shapes(shape, *param_shapes, fn=fn)
        if joint != tuple(shape):
            raise RandomError(f"{fn}: parameter shapes {list(param_shapes)} must broadcast to "
                              f"the shape argument {tuple(shape)}, got {joint}")


def size(shape) -> int:
    return math.prod(shape)


_JITTED: dict = {}


def jitted(fn, *static: str):
    """fn under xlapy.jit with the named arguments static (one compiled program per shape,
    dtype and static value; traced through when called inside another trace)."""
    key = (fn, static)
    f = _JITTED.get(key)
    if f is None:
        from xlapy.frontend.jit import jit
        f = _JITTED[key] = jit(fn, static_argnames=static)
    return f


def float_param(x):
    """A parameter as JAX sees it: Python scalars, integers and (without x64) float64
    arrays become the default float type; traced values keep theirs."""
    if isinstance(x, Tracer):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind in "biu" or isinstance(x, (int, float)):
        return arr.astype(float_dtype(None, "xlapy.random"))
    if arr.dtype == np.float64 and not x64_enabled():
        return arr.astype(np.float32)
    return arr
