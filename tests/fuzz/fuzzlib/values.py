"""Input arrays for generated programs: ordinary values with edge values mixed in.

Floats: normal values at a random scale, and in about a third of the arrays NaN, +-Inf,
+-0.0, subnormals, the largest finite values and small integers replace some elements.
Integers: small values, and in some arrays the type's extremes, 0 and -1. A parameter may
carry a role that fixes its range: "index" (in and a little out of range, for dynamic
slices, gathers and scatters), "shift" (shift amounts from -2 to the bit width + 2),
"unique" (a permutation: scatter with a combiner whose result depends on order).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)


def _float_specials(dt: np.dtype) -> np.ndarray:
    info = ml_dtypes.finfo(dt) if dt == BF16 else np.finfo(dt)
    tiny = float(info.smallest_subnormal)
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, tiny * 3,
              float(info.smallest_normal) * 0.5, float(info.max), -float(info.max),
              1.0, -1.0, 0.5, 2.0, float(info.smallest_normal)]
    with np.errstate(all="ignore"):
        return np.array(values, dtype=np.float64).astype(dt)


def float_array(rng: np.random.Generator, dt: np.dtype, dims, specials: bool) -> np.ndarray:
    scale = float(rng.choice([1.0, 1.0, 1e-2, 30.0]))
    with np.errstate(all="ignore"):
        a = np.asarray((rng.standard_normal(dims) * scale).astype(dt))
    if specials and a.size:
        mask = rng.random(dims) < 0.15
        a[mask] = rng.choice(_float_specials(dt), size=int(mask.sum()))
    return a


def int_array(rng: np.random.Generator, dt: np.dtype, dims, specials: bool) -> np.ndarray:
    info = np.iinfo(dt)
    lo, hi = (-12, 13) if info.min < 0 else (0, 25)
    a = np.asarray(rng.integers(lo, hi, dims).astype(dt))
    if specials and a.size:
        mask = rng.random(dims) < 0.2
        pool = np.array([int(info.min), int(info.max), 0, 1, int(info.max) - 1,
                         int(info.min) + 1] + ([-1, -2] if info.min < 0 else [2, 3]),
                        dtype=object).astype(dt)
        a[mask] = pool[rng.integers(0, len(pool), int(mask.sum()))]
    return a


def array_for(rng: np.random.Generator, dt, dims, role: str | None = None,
              bound: int = 0) -> np.ndarray:
    """One input array of dtype `dt` and shape `dims` (`bound`: the extent for indices)."""
    dt = np.dtype(dt)
    dims = tuple(dims)
    if role == "index":
        return rng.integers(-2, max(bound, 0) + 3, dims).astype(dt)
    if role == "inrange":
        return rng.integers(0, max(bound, 1), dims).astype(dt)
    if role == "shift":
        bits = dt.itemsize * 8
        lo = -2 if np.iinfo(dt).min < 0 else 0
        return rng.integers(lo, bits + 3, dims).astype(dt)
    if role == "unique":
        n = int(np.prod(dims, dtype=np.int64))
        return rng.permutation(max(bound, n))[:n].reshape(dims).astype(dt)
    if role == "small":  # exponents of integer powers, loop trip counts
        return rng.integers(-1, 6, dims).astype(dt)
    if role == "finite":  # ordinary values only (cholesky's factor: an SPD matrix)
        return float_array(rng, dt, dims, False)
    specials = rng.random() < 0.35
    if dt == np.bool_:
        return np.asarray(rng.random(dims) < 0.5)
    if dt == BF16 or dt.kind == "f":
        return float_array(rng, dt, dims, specials)
    return int_array(rng, dt, dims, specials)
