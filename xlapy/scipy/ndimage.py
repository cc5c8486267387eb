"""xlapy.scipy.ndimage (jax.scipy.ndimage): map_coordinates.

map_coordinates(input, coordinates, order, mode="constant", cval=0.0): input's values at
fractional coordinates (one array per input dimension, all of one shape), by nearest
neighbour (order 0, rounding halves away from zero) or multilinear interpolation
(order 1), as JAX's. Coordinates outside the array follow `mode`: constant (cval),
nearest (the edge value), wrap (periodic), mirror (reflected about the edge samples) or
reflect (about the edges' outer borders). Integer inputs give rounded results in their
dtype. Differentiable in input and in the coordinates (order 1), under jit and vmap.
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.errors import ShapeError, UnsupportedError, XlapyError

__all__ = ["map_coordinates"]


def _mirror(i, n):
    s = n - 1  # the half period of the triangle wave over [0, n - 1]
    if s == 0:
        return i * 0
    return abs((i + s) % (2 * s) - s)


def _reflect(i, n):
    return (_mirror(2 * i + 1, 2 * n + 1) - 1) // 2


_MODES = {
    "constant": lambda i, n: i,
    "nearest": lambda i, n: i.clip(0, n - 1),
    "wrap": lambda i, n: i % n,
    "mirror": _mirror,
    "reflect": _reflect,
}


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """input interpolated at the given coordinates (see the module)."""
    import xlapy.numpy as xnp
    from xlapy import lax

    arr = xnp.asarray(input)
    coords = [xnp.asarray(c) for c in coordinates]
    if len(coords) != arr.ndim:
        raise ShapeError(f"map_coordinates: needs one coordinate array per input dimension "
                         f"({arr.ndim}), got {len(coords)}")
    if len({tuple(c.shape) for c in coords}) > 1:
        raise ShapeError(f"map_coordinates: the coordinate arrays must have one shape, got "
                         f"{[list(c.shape) for c in coords]}")
    if mode not in _MODES:
        raise UnsupportedError(f"map_coordinates: mode {mode!r} is not supported (xlapy "
                               f"has {', '.join(_MODES)})")
    if order not in (0, 1):
        raise UnsupportedError(f"map_coordinates: order must be 0 or 1 (as in JAX), got "
                               f"{order!r}")
    if any(n == 0 for n in arr.shape):
        raise XlapyError(f"map_coordinates: input of shape {list(arr.shape)} has no values")
    fix = _MODES[mode]
    cval = xnp.asarray(cval).astype(arr.dtype)

    per_dim = []
    for c, n in zip(coords, arr.shape):
        if c.dtype.kind not in "fc":
            c = c.astype(xnp.result_type(c, 1.0)) if order == 1 else c
        if order == 0:
            idx = (lax.round(c) if c.dtype.kind == "f" else c).astype(np.int32)
            nodes = [(idx, None)]
        else:
            lo = xnp.floor(c)
            w_hi = c - lo
            idx = lo.astype(np.int32)
            nodes = [(idx, 1 - w_hi), (idx + 1, w_hi)]
        per_dim.append([(xnp.clip(fix(i, n), 0, n - 1), (i >= 0) & (i < n), w)
                        for i, w in nodes])

    total = None
    for combo in itertools.product(*per_dim):
        idx = tuple(i for i, _, _ in combo)
        value = arr[idx]
        if mode == "constant":
            ok = combo[0][1]
            for _, v, _ in combo[1:]:
                ok = ok & v
            value = xnp.where(ok, value, cval)
        weights = [w for _, _, w in combo if w is not None]
        if weights:
            w = weights[0]
            for x in weights[1:]:
                w = w * x
            value = w * value
        total = value if total is None else total + value
    if arr.dtype.kind in "iub":
        total = lax.round(total) if xnp.asarray(total).dtype.kind == "f" else total
    return xnp.asarray(total).astype(arr.dtype)
