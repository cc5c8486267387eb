"""Dtype canonicalization under jax_enable_x64 (xlapy.config), as JAX does it.

With x64 off, float64 -> float32, int64 -> int32 and uint64 -> uint32 wherever a value
enters a computation: `bind` canonicalizes concrete operands and dtype parameters, jit
and the differentiation entry points canonicalize their arguments, graph traces their
captured constants. Python ints that do not fit int32 raise OverflowError (as JAX).
`explicit(dtype, where)` is for user-facing dtype arguments: a 64-bit request is
truncated with JAX's warning. With x64 on, everything passes through unchanged.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from xlapy.config import x64_enabled

_NARROW = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
           np.dtype(np.uint64): np.dtype(np.uint32)}


def canonicalize_dtype(dtype) -> np.dtype:
    """dtype as computations use it under the current x64 setting."""
    dt = np.dtype(dtype)
    narrow = _NARROW.get(dt)
    return dt if narrow is None or x64_enabled() else narrow


def default_float() -> np.dtype:
    return np.dtype(np.float64) if x64_enabled() else np.dtype(np.float32)


def default_int() -> np.dtype:
    return np.dtype(np.int64) if x64_enabled() else np.dtype(np.int32)


def explicit(dtype, where: str) -> np.dtype | None:
    """A dtype the user asked for in `where` (None stays None), canonicalized; a 64-bit
    request with x64 off warns as JAX does."""
    if dtype is None:
        return None
    dt = np.dtype(dtype)
    if x64_enabled() or dt not in _NARROW:
        return dt
    new = _NARROW[dt]
    warnings.warn(f"Explicitly requested dtype {dt} requested in {where} is not available, "
                  f"and will be truncated to dtype {new}. To enable more dtypes, set the "
                  "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
                  "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
                  UserWarning, stacklevel=_user_stacklevel())
    return new


_XLAPY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """The stacklevel of the first frame outside xlapy (so warnings point at user code)."""
    f, level = sys._getframe(2), 2
    while f is not None and f.f_code.co_filename.startswith(_XLAPY_DIR):
        f, level = f.f_back, level + 1
    return level


def canonicalize_value(x):
    """A concrete value (NumPy array or scalar, Python number) with a canonical dtype;
    anything else (tracers, arrays already canonical) is returned as is."""
    if isinstance(x, np.ndarray):
        dt = x.dtype
        if dt in _NARROW and not x64_enabled():
            return x.astype(_NARROW[dt])
        return x
    if isinstance(x, np.generic):
        return canonicalize_value(np.asarray(x))
    if type(x) is float or type(x) is int:
        if x64_enabled():
            return x
        if type(x) is int:
            return np.asarray(x, np.int32)  # OverflowError when it does not fit, as JAX
        return np.asarray(x, np.float32)
    return x


def canonicalize_params(params: dict) -> dict:
    """dtype-valued parameters of a primitive, canonicalized (the dict is copied only when
    something changes)."""
    out = params
    for k, v in params.items():
        if isinstance(v, np.dtype) and v in _NARROW:
            if out is params:
                out = dict(params)
            out[k] = _NARROW[v]
    return out
