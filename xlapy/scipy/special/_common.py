"""Argument handling shared by xlapy.scipy: inputs become floats as in JAX (integers and
bools the default float type, float32 unless x64 is enabled; Python scalars take the
other arguments' type), and polynomial evaluation."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.random._common import x64_enabled


def default_float() -> np.dtype:
    return np.dtype(np.float64 if x64_enabled() else np.float32)


def _is_float(dt) -> bool:
    return B.is_float(dt)


def _weak(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def floats(*xs):
    """The arguments as arrays of one float dtype (JAX's promote_args_inexact)."""
    arrays = [x if isinstance(x, Tracer) else np.asarray(x) for x in xs]
    strong = [B.aval_of(a).dtype for x, a in zip(xs, arrays) if not _weak(x)]
    if strong:
        dt = strong[0]
        for d in strong[1:]:
            dt = xnp.promote_types(dt, d) if not (_is_float(dt) and _is_float(d)) else \
                _wider(dt, d)
        if not _is_float(dt):
            dt = default_float()
    else:
        dt = default_float()
    return [B.convert(a, dt) if B.aval_of(a).dtype != dt else a for a in arrays]


def _wider(a, b):
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if a.itemsize != b.itemsize:
        return a if a.itemsize > b.itemsize else b
    return np.dtype(np.float32)  # float16 with bfloat16, as JAX


def float1(x):
    return floats(x)[0]


def polyval(coeffs, x):
    """sum(c * x**(n-1-i)), Horner's scheme, coefficients highest degree first."""
    acc = xnp.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * x + np.asarray(c, B.aval_of(x).dtype)
    return acc


def const(x, value):
    return np.asarray(value, B.aval_of(x).dtype)
