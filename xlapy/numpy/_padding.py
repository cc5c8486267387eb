"""np.pad for modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'.

pad_width follows NumPy (an int, (before, after), or one pair per axis). 'constant' takes
constant_values as a scalar (one pad op; it may be traced) or NumPy-style pairs per axis
(axes padded in order, so corners take the later axes' values, as NumPy). 'reflect' /
'symmetric' / 'wrap' support widths up to n-1 / n / n per side (NumPy repeats the pattern
beyond that; xlapy raises). reflect_type='odd' is not supported.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, dtype_of, shape


def _pairs(value, nd, name):
    try:
        arr = np.broadcast_to(np.asarray(value), (nd, 2))
    except ValueError:
        raise XlapyError(f"pad: {name} {value!r} cannot be broadcast to one (before, after) "
                         f"pair per axis of a {nd}-d array") from None
    return arr


def _slice_axis(x, axis, start, stop, step=1):
    s = shape(x)
    starts, limits = [0] * len(s), list(s)
    strides = [1] * len(s)
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return S.slice_(x, starts, limits, strides)


def _along(x, axis, before, after, mode):
    n = shape(x)[axis]
    if before == 0 and after == 0:
        return x
    if n == 0:
        raise XlapyError(f"pad: can't extend an empty axis {axis} with mode {mode!r}")
    if mode == "reflect" and n == 1:
        mode = "edge"
    limit = {"reflect": n - 1, "symmetric": n, "wrap": n}.get(mode)
    if limit is not None and max(before, after) > limit:
        raise XlapyError(f"pad: mode {mode!r} supports at most {limit} elements per side along "
                         f"axis {axis} (size {n}); got ({before}, {after})")
    parts = []
    if mode == "edge":
        def rep(i, k):
            s = list(shape(x))
            s[axis] = k
            return B.broadcast_in_dim(_slice_axis(x, axis, i, i + 1), s, tuple(range(len(s))))
        lo, hi = (rep(0, before) if before else None), (rep(n - 1, after) if after else None)
    elif mode == "reflect":
        lo = S.rev(_slice_axis(x, axis, 1, before + 1), (axis,)) if before else None
        hi = S.rev(_slice_axis(x, axis, n - 1 - after, n - 1), (axis,)) if after else None
    elif mode == "symmetric":
        lo = S.rev(_slice_axis(x, axis, 0, before), (axis,)) if before else None
        hi = S.rev(_slice_axis(x, axis, n - after, n), (axis,)) if after else None
    else:  # wrap
        lo = _slice_axis(x, axis, n - before, n) if before else None
        hi = _slice_axis(x, axis, 0, after) if after else None
    parts = [p for p in (lo, x, hi) if p is not None]
    return S.concatenate(parts, axis)


def pad(array, pad_width, mode="constant", **kwargs):
    """np.pad (modes constant, edge, reflect, symmetric, wrap)."""
    x = asarray(array)
    nd = len(shape(x))
    if callable(mode):
        raise XlapyError("pad: a callable mode is not supported")
    widths = _pairs(pad_width, nd, "pad_width")
    if widths.dtype.kind not in "iu":
        raise XlapyError(f"pad: pad_width must be integers, got {pad_width!r}")
    if (widths < 0).any():
        raise XlapyError(f"pad: pad_width {pad_width!r} has negative values")
    widths = [(int(a), int(b)) for a, b in widths]
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
    if mode not in allowed:
        raise XlapyError(f"pad: mode {mode!r} is not supported (supported: "
                         f"{', '.join(allowed)})")
    extra = set(kwargs) - allowed[mode]
    if extra:
        raise XlapyError(f"pad: unsupported keyword(s) {sorted(extra)} for mode {mode!r}")
    if kwargs.get("reflect_type", "even") != "even":
        raise XlapyError("pad: reflect_type='odd' is not supported")
    dt = dtype_of(x)
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        if isinstance(cv, Tracer) or np.ndim(cv) == 0:
            v = B.convert(cv, dt) if isinstance(cv, Tracer) else np.asarray(cv).astype(dt)
            if isinstance(cv, Tracer) and cv.shape != ():
                raise XlapyError(f"pad: a traced constant_values must be a scalar, got {cv.aval}")
            return S.pad(x, v, [(a, b, 0) for a, b in widths])
        vals = _pairs(cv, nd, "constant_values")
        for axis, (a, b) in enumerate(widths):
            if a:
                x = S.pad(x, np.asarray(vals[axis][0]).astype(dt),
                          [(a if d == axis else 0, 0, 0) for d in range(nd)])
            if b:
                x = S.pad(x, np.asarray(vals[axis][1]).astype(dt),
                          [(0, b if d == axis else 0, 0) for d in range(nd)])
        return x
    for axis, (a, b) in enumerate(widths):
        x = _along(x, axis, a, b, mode)
    return x
