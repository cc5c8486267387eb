"""histogram_bin_edges, histogram2d and histogramdd, as jax.numpy has them.

Bins are a static count (equal bins over `range`, by default the data's min and max,
widened by 1/2 on each side when those are equal) or given edges. A value falls in bin i
when edges[i] <= value < edges[i + 1]; the last bin is closed; values outside the edges
are not counted. Counts are integers (the default int type), weighted or density
histograms floats. Everything traces: under jit the edges come from the traced data.
"""

from __future__ import annotations

import builtins

import numpy as np

from xlapy.errors import UnsupportedError, XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import default_float
from xlapy.numpy._core import asarray, dtype_of, kind, shape


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


def _inexact(dt) -> np.dtype:
    dt = np.dtype(dt)
    return dt if kind(dt) in "fc" else np.dtype(default_float())


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins histogram(a, bins, range) uses (weights are ignored, as
    NumPy)."""
    xnp = _xnp()
    a = xnp.ravel(asarray(a))
    dt = _inexact(dtype_of(a))
    if isinstance(bins, str):
        raise UnsupportedError(f"histogram_bin_edges: string values for bins ({bins!r}) are "
                               "not supported (as in JAX); give a count or the edges")
    if isinstance(bins, Tracer) and len(shape(bins)) == 0:
        raise bins._concrete_error("histogram_bin_edges: the number of bins must be a static "
                                   "count")
    if isinstance(bins, (int, np.integer)) or (not isinstance(bins, Tracer)
                                               and np.ndim(bins) == 0):
        n = int(bins)
    else:
        edges = asarray(bins)
        if len(shape(edges)) != 1:
            raise XlapyError(f"histogram_bin_edges: bins must be a count or 1-d edges, got "
                             f"shape {shape(edges)}")
        return edges.astype(dt)
    if n < 1:
        raise XlapyError(f"histogram_bin_edges: bins must be a positive count, got {n}")
    if range is None:
        if shape(a)[0] == 0:
            lo, hi = xnp.asarray(0.0, dt), xnp.asarray(1.0, dt)  # NumPy's for no data
        else:
            lo, hi = xnp.min(a).astype(dt), xnp.max(a).astype(dt)
    else:
        if len(range) != 2:
            raise XlapyError(f"histogram_bin_edges: range must be a (min, max) pair, got "
                             f"{range!r}")
        lo, hi = asarray(range[0]).astype(dt), asarray(range[1]).astype(dt)
        if not hasattr(lo, "aval") and not hasattr(hi, "aval") and float(np.asarray(lo)) > \
                float(np.asarray(hi)):
            raise XlapyError(f"histogram_bin_edges: max must be larger than min in range, "
                             f"got {range!r}")
    same = lo == hi
    lo, hi = xnp.where(same, lo - 0.5, lo), xnp.where(same, hi + 0.5, hi)
    t = xnp.arange(n + 1).astype(dt) / np.asarray(n, dt)
    return lo * (1 - t) + hi * t  # (exact at both ends)


def _bin_index(x, edges):
    """The bin of each value, or nb (one past the last) for values outside the edges."""
    xnp = _xnp()
    nb = shape(edges)[0] - 1
    idx = xnp.searchsorted(edges, x, side="right") - 1
    idx = xnp.where(x == edges[-1], nb - 1, idx)  # the last bin is closed
    return xnp.where((idx < 0) | (idx >= nb), nb, idx), nb


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The histogram of N points in D dimensions (sample of shape (N, D)): (counts of shape
    (bins_0, ..., bins_{D-1}), [edges_0, ..., edges_{D-1}])."""
    xnp = _xnp()
    sample = asarray(sample)
    if len(shape(sample)) == 1:
        sample = xnp.reshape(sample, (-1, 1))
    if len(shape(sample)) != 2:
        raise XlapyError(f"histogramdd: sample must have shape (N, D), got {shape(sample)}")
    n_pts, d = shape(sample)
    if isinstance(bins, (int, np.integer)):
        bins = [int(bins)] * d
    elif len(bins) != d:
        raise XlapyError(f"histogramdd: bins has {len(bins)} entries for {d} dimensions")
    ranges = [None] * d if range is None else list(range)
    if len(ranges) != d:
        raise XlapyError(f"histogramdd: range has {len(ranges)} entries for {d} dimensions")
    edges, sizes = [], []
    flat = xnp.zeros((n_pts,), np.int32)
    outside = xnp.zeros((n_pts,), bool)
    for k in builtins.range(d):
        e = histogram_bin_edges(sample[:, k], bins[k], ranges[k])
        idx, nb = _bin_index(sample[:, k], e)
        edges.append(e)
        sizes.append(nb)
        outside = outside | (idx == nb)
        flat = flat * nb + xnp.where(idx == nb, 0, idx).astype(np.int32)
    total = int(np.prod(sizes, dtype=np.int64))
    flat = xnp.where(outside, total, flat)  # counted past the end, then dropped
    w = None if weights is None else xnp.ravel(asarray(weights))
    if w is not None and shape(w)[0] != n_pts:
        raise XlapyError(f"histogramdd: {shape(w)[0]} weights for {n_pts} points")
    hist = xnp.bincount(flat, w, length=total + 1)[:total]
    hist = xnp.reshape(hist, tuple(sizes))
    if density:
        dt = _inexact(dtype_of(hist))
        hist = hist.astype(dt) / xnp.sum(hist).astype(dt)
        for k, e in enumerate(edges):
            widths = xnp.diff(e).astype(dt)
            hist = hist / xnp.reshape(widths, (1,) * k + (-1,) + (1,) * (d - k - 1))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """The 2-d histogram of the points (x[i], y[i]): (counts, x edges, y edges). bins: a
    count, edges for both axes, or a pair (one per axis)."""
    xnp = _xnp()
    x, y = xnp.ravel(asarray(x)), xnp.ravel(asarray(y))
    if shape(x) != shape(y):
        raise XlapyError(f"histogram2d: x and y must have one length, got {shape(x)[0]} and "
                         f"{shape(y)[0]}")
    if not isinstance(bins, (int, np.integer)):
        try:
            count = len(bins)
        except TypeError:
            count = 1
        if count not in (1, 2):
            bins = [bins, bins]
    hist, edges = histogramdd(xnp.stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]

__all__ = ["histogram_bin_edges", "histogramdd", "histogram2d"]
