"""Sequences and signals as NumPy has them, composed from xlapy.numpy's own functions:
geomspace, ediff1d, gradient (second-order inside, first-order edges), trapezoid, convolve
and correlate of 1-d arrays (one gather of a zero-padded operand and a row sum), unwrap,
vander and the window functions hanning, hamming, blackman, bartlett, kaiser."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    xnp = _xnp()
    s, e = xnp.asarray(start), xnp.asarray(stop)
    if axis != 0:
        raise XlapyError("geomspace: only axis=0 is supported")
    sign = xnp.sign(s)
    out = sign * xnp.logspace(xnp.log10(xnp.abs(s)), xnp.log10(xnp.abs(e)), num,
                              endpoint=endpoint)
    if num:  # the ends exactly
        out = out.at[0].set(s) if axis == 0 and xnp.ndim(s) == 0 else out
        if endpoint and axis == 0 and xnp.ndim(e) == 0:
            out = out.at[-1].set(e)
    return out.astype(dtype) if dtype is not None else out


def ediff1d(ary, to_end=None, to_begin=None):
    xnp = _xnp()
    d = xnp.diff(xnp.ravel(ary))
    parts = ([xnp.ravel(xnp.asarray(to_begin)).astype(d.dtype)] if to_begin is not None
             else []) + [d] + ([xnp.ravel(xnp.asarray(to_end)).astype(d.dtype)]
                               if to_end is not None else [])
    return xnp.concatenate(parts) if len(parts) > 1 else d


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the edges (unit or scalar
    spacing per axis)."""
    xnp = _xnp()
    if edge_order not in (None, 1):
        raise XlapyError("gradient: only edge_order=1 is supported (as JAX)")
    f = xnp.asarray(f)
    if np.dtype(f.dtype).kind not in "fc":
        f = f.astype(np.float32)
    nd = len(xnp.shape(f))
    axes = list(range(nd)) if axis is None else \
        [a % nd for a in ((axis,) if isinstance(axis, int) else axis)]
    spacing = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacing) == 1 and len(axes) > 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes):
        raise XlapyError("gradient: one spacing per axis, or one for all")
    out = []
    for ax, h in zip(axes, spacing):
        if xnp.ndim(h) != 0:
            raise XlapyError("gradient: coordinate arrays as spacing are not supported")
        n = xnp.shape(f)[ax]
        if n < 2:
            raise XlapyError(f"gradient: axis {ax} needs at least 2 points, has {n}")

        def sl(a, b, _ax=ax):
            return tuple(slice(a, b) if d == _ax else slice(None) for d in range(nd))

        inner = (f[sl(2, None)] - f[sl(None, -2)]) / (2.0 * h)
        first = (f[sl(1, 2)] - f[sl(0, 1)]) / h
        last = (f[sl(-1, None)] - f[sl(-2, -1)]) / h
        out.append(xnp.concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    xnp = _xnp()
    y = xnp.asarray(y)
    y = xnp.moveaxis(y, axis, -1)
    if x is None:
        return dx * (xnp.sum(y, -1) - (y[..., 0] + y[..., -1]) * 0.5)
    x = xnp.asarray(x)
    x = xnp.moveaxis(x, axis, -1) if xnp.ndim(x) > 1 else x
    d = xnp.diff(x, axis=-1)
    return xnp.sum(d * (y[..., 1:] + y[..., :-1]) * 0.5, -1)


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-d arrays (full, same or valid)."""
    return _correlate_1d(a, v, mode, flip=True, name="convolve")


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-d arrays (valid, same or full), NumPy's convention
    (v conjugated)."""
    return _correlate_1d(a, v, mode, flip=False, name="correlate")


def _correlate_1d(a, v, mode, flip, name):
    xnp = _xnp()
    a, v = xnp.asarray(a), xnp.asarray(v)
    if xnp.ndim(a) != 1 or xnp.ndim(v) != 1:
        raise XlapyError(f"{name}: 1-d arrays are needed, got shapes {xnp.shape(a)} and "
                         f"{xnp.shape(v)}")
    if xnp.shape(a)[0] == 0 or xnp.shape(v)[0] == 0:
        raise XlapyError(f"{name}: arrays must not be empty")
    dt = xnp.result_type(a, v)
    dt = np.dtype(np.float32) if np.dtype(dt).kind == "b" else np.dtype(dt)
    a, v = a.astype(dt), v.astype(dt)
    if not flip:  # correlate(a, v) = convolve(a, reversed conj(v))
        v = (xnp.conj(v) if dt.kind == "c" else v)[::-1]
    n, m = xnp.shape(a)[0], xnp.shape(v)[0]
    if m > n:
        a, v, n, m = v, a, m, n
    full = n + m - 1
    # out[k] = sum_j a[k - j] v[j] over a zero-padded a: one gather and a row sum
    pad = xnp.pad(a, (m - 1, m - 1))
    idx = np.arange(full)[:, None] + (m - 1 - np.arange(m))[None, :]
    out = xnp.sum(pad[idx.astype(np.int32)] * v[None, :], axis=1)
    if mode == "full":
        return out
    if mode == "same":
        start = (full - n) // 2
        return out[start:start + n]
    if mode == "valid":
        return out[m - 1:n]
    raise XlapyError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """p with jumps larger than max(discont, period/2) along axis replaced by their
    complement modulo period."""
    xnp = _xnp()
    p = xnp.asarray(p)
    if np.dtype(p.dtype).kind not in "f":
        p = p.astype(np.float32)
    d = xnp.diff(p, axis=axis)
    half = period / 2
    disc = half if discont is None else max(discont, half)
    dm = xnp.mod(d + half, period) - half
    dm = xnp.where((dm == -half) & (d > 0), xnp.full_like(dm, half), dm)
    corr = xnp.where(xnp.abs(d) < disc, xnp.zeros_like(d), dm - d)
    csum = xnp.cumsum(corr, axis=axis)
    first = xnp.take(p, xnp.arange(1), axis=axis)
    rest = xnp.take(p, xnp.arange(1, xnp.shape(p)[axis]), axis=axis) + csum
    return xnp.concatenate([first, rest], axis=axis)


def vander(x, N=None, increasing=False):
    xnp = _xnp()
    x = xnp.asarray(x)
    if xnp.ndim(x) != 1:
        raise XlapyError(f"vander: x must be 1-d, got shape {xnp.shape(x)}")
    n = xnp.shape(x)[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    return xnp.power(x[:, None], powers.astype(np.int32)[None, :])


def _window(values_fn, M):
    xnp = _xnp()
    M = int(M)
    if M < 1:
        return xnp.zeros((0,), np.float32)
    if M == 1:
        return xnp.ones((1,), np.float32)
    n = xnp.arange(M, dtype=np.float32)
    return values_fn(n, M).astype(np.float32)


def hanning(M):
    xnp = _xnp()
    return _window(lambda n, m: 0.5 - 0.5 * xnp.cos(2 * np.pi * n / (m - 1)), M)


def hamming(M):
    xnp = _xnp()
    return _window(lambda n, m: 0.54 - 0.46 * xnp.cos(2 * np.pi * n / (m - 1)), M)


def blackman(M):
    xnp = _xnp()
    return _window(lambda n, m: 0.42 - 0.5 * xnp.cos(2 * np.pi * n / (m - 1)) +
                   0.08 * xnp.cos(4 * np.pi * n / (m - 1)), M)


def bartlett(M):
    xnp = _xnp()
    return _window(lambda n, m: 1 - xnp.abs(2 * n / (m - 1) - 1), M)


def kaiser(M, beta):
    xnp = _xnp()
    from xlapy.scipy.special import i0 as bessel_i0  # the special function
    return _window(lambda n, m: bessel_i0(beta * xnp.sqrt(1 - (2 * n / (m - 1) - 1) ** 2)) /
                   bessel_i0(xnp.asarray(beta, np.float32)), M)


__all__ = ["geomspace", "ediff1d", "gradient", "trapezoid", "convolve", "correlate", "unwrap",
           "vander", "hanning", "hamming", "blackman", "bartlett", "kaiser"]
