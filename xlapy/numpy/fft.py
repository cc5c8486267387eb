"""xlapy.numpy.fft: NumPy's (and jax.numpy.fft's) discrete Fourier transforms on XLA's fft
opcode.

fft, ifft, rfft, irfft (one axis, `n`), fft2, ifft2, rfft2, irfft2 (two axes), fftn,
ifftn, rfftn, irfftn (`s`, `axes`), hfft, ihfft; fftfreq, rfftfreq, fftshift, ifftshift.
`norm` is "backward" (the default: the inverse is scaled by 1/n), "ortho" (both by
1/sqrt(n)) or "forward" (the forward transform by 1/n). As in JAX, inputs are promoted to
complex64 (complex128 for float64 inputs with x64 on), the transformed axes are moved to
the end for the opcode (at most three at a time: more are transformed in groups), and each
axis is zero-padded or truncated to the requested length first.

Everything is differentiable and batches under vmap through the fft primitive's rules
(frontend/primitives/fft.py).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import complex as C
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.primitives.fft import fft as _fft_op
from xlapy.numpy._core import asarray, cast, dtype_of, normalize_axis, shape
from xlapy.numpy._shape_ops import roll

_NORMS = (None, "backward", "ortho", "forward")

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def _complex_dtype(dt) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex128 if dt == np.float64 else np.complex64)


def _real_dtype(dt) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "c":
        return B.real_dtype(dt)
    return np.dtype(np.float64 if dt == np.float64 else np.float32)


def _resize(x, axis: int, n: int):
    """x truncated or zero-padded to length n along axis."""
    m = shape(x)[axis]
    if n == m:
        return x
    if n < m:
        starts = [0] * len(shape(x))
        limits = list(shape(x))
        limits[axis] = n
        return S.slice_(x, starts, limits)
    config = [(0, 0, 0)] * len(shape(x))
    config[axis] = (0, n - m, 0)
    return S.pad(x, np.zeros((), dtype_of(x)), config)


def _scale(x, norm, n: int, inverse: bool):
    """The factor the opcode leaves out: the opcode's forward is unscaled, its inverse 1/n."""
    if norm not in _NORMS:
        raise XlapyError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    norm = norm or "backward"
    if norm == "backward" or n == 0:
        return x
    if norm == "ortho":
        f = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:  # forward
        f = float(n) if inverse else 1 / n
    return B.mul(x, B.full_like(x, f))


def _axes_and_sizes(x, s, axes, name: str):
    nd = len(shape(x))
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(normalize_axis(a, nd, "axis") for a in axes)
    if len(set(axes)) != len(axes):
        raise XlapyError(f"{name}: repeated axes {axes}")
    if s is not None:
        s = tuple(int(v) for v in s)
        if len(s) != len(axes):
            raise XlapyError(f"{name}: s {s} and axes {axes} must have the same length")
        if any(v < 1 for v in s):
            raise XlapyError(f"{name}: invalid number of FFT data points {s}")
    return axes, s


def _on_trailing(x, axes, fn):
    """fn applied with `axes` moved to the end (in order), and moved back."""
    nd = len(shape(x))
    rest = [d for d in range(nd) if d not in axes]
    perm = rest + list(axes)
    if perm == list(range(nd)):
        return fn(x)
    y = fn(S.transpose(x, tuple(perm)))
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return S.transpose(y, tuple(inv))


def _c2c(x, axes, s, inverse: bool, norm, name: str):
    x = asarray(x)
    axes, s = _axes_and_sizes(x, s, axes, name)
    x = cast(x, _complex_dtype(dtype_of(x)))
    if s is not None:
        for a, n in zip(axes, s):
            x = _resize(x, a, n)
    if not axes:
        return x
    lengths = [shape(x)[a] for a in axes]
    kind = "IFFT" if inverse else "FFT"
    for k in range(0, len(axes), 3):  # the opcode takes at most three axes
        group = axes[k:k + 3]
        glen = tuple(shape(x)[a] for a in group)
        if 0 in glen:
            raise XlapyError(f"{name}: invalid number of FFT data points {glen}")
        x = _on_trailing(x, group, lambda y, g=glen: _fft_op(y, kind, g))
    return _scale(x, norm, math.prod(lengths), inverse)


def fftn(a, s=None, axes=None, norm=None):
    return _c2c(a, axes, s, False, norm, "fftn")


def ifftn(a, s=None, axes=None, norm=None):
    return _c2c(a, axes, s, True, norm, "ifftn")


def fft(a, n=None, axis=-1, norm=None):
    return _c2c(a, (axis,), None if n is None else (n,), False, norm, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    return _c2c(a, (axis,), None if n is None else (n,), True, norm, "ifft")


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c(a, axes, s, False, norm, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c(a, axes, s, True, norm, "ifft2")


def rfftn(a, s=None, axes=None, norm=None):
    x = asarray(a)
    if dtype_of(x).kind == "c":
        raise XlapyError("rfftn does not support complex input (use fftn)")
    axes, s = _axes_and_sizes(x, s, axes, "rfftn")
    if not axes:
        raise XlapyError("rfftn needs at least one axis")
    x = cast(x, _real_dtype(dtype_of(x)))
    if s is not None:
        for ax, n in zip(axes, s):
            x = _resize(x, ax, n)
    lengths = [shape(x)[ax] for ax in axes]
    if 0 in lengths:
        raise XlapyError(f"rfftn: invalid number of FFT data points {tuple(lengths)}")
    last = axes[-3:]  # the real transform over the last (up to three) axes
    glen = tuple(shape(x)[ax] for ax in last)
    x = _on_trailing(x, last, lambda y: _fft_op(y, "RFFT", glen))
    if len(axes) > 3:
        x = _c2c(x, axes[:-3], None, False, None, "rfftn")
    return _scale(x, norm, math.prod(lengths), False)


def irfftn(a, s=None, axes=None, norm=None):
    x = asarray(a)
    axes, s = _axes_and_sizes(x, s, axes, "irfftn")
    if not axes:
        raise XlapyError("irfftn needs at least one axis")
    x = cast(x, _complex_dtype(dtype_of(x)))
    if s is None:
        s = tuple(shape(x)[ax] for ax in axes[:-1]) + (2 * (shape(x)[axes[-1]] - 1),)
    if s[-1] < 1:
        raise XlapyError(f"irfftn: invalid number of data points {s[-1]}")
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _resize(x, ax, n)
    x = _resize(x, axes[-1], s[-1] // 2 + 1)
    if len(axes) > 3:
        x = _c2c(x, axes[:-3], None, True, None, "irfftn")
    last = axes[-3:]
    glen = tuple(s[-len(last):])
    x = _on_trailing(x, last, lambda y: _fft_op(y, "IRFFT", glen))
    return _scale(x, norm, math.prod(s), True)


def rfft(a, n=None, axis=-1, norm=None):
    return rfftn(a, None if n is None else (n,), (axis,), norm)


def irfft(a, n=None, axis=-1, norm=None):
    return irfftn(a, None if n is None else (n,), (axis,), norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm)


_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry (a real spectrum): irfft(conj(a)) * n."""
    if norm not in _NORMS:
        raise XlapyError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    x = asarray(a)
    x = cast(x, _complex_dtype(dtype_of(x)))
    return irfft(C.conj(x), n, axis, _SWAP[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: conj(rfft(a)) / n."""
    if norm not in _NORMS:
        raise XlapyError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return C.conj(rfft(a, n, axis, _SWAP[norm]))


# ---- frequencies and shifts ----------------------------------------------------------------

def _freq_dtype(dtype):
    from xlapy.frontend.dtypes import default_float, explicit
    return explicit(dtype, "fftfreq") if dtype is not None else default_float()


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies [0, 1, ..., n/2-1, -n/2, ..., -1] / (d n) (NumPy's order)."""
    n = int(n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    dt = _freq_dtype(dtype)
    return B.div(asarray(k.astype(dt)), B.full((n,), d * n, dt)) if n else np.zeros(0, dt)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies [0, 1, ..., n//2] / (d n)."""
    n = int(n)
    dt = _freq_dtype(dtype)
    k = np.arange(0, n // 2 + 1).astype(dt)
    return B.div(asarray(k), B.full(k.shape, d * n, dt))


def _shift(x, axes, sign: int):
    x = asarray(x)
    nd = len(shape(x))
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    shifts = tuple(sign * (shape(x)[normalize_axis(a, nd)] // 2) for a in axes)
    return roll(x, shifts, tuple(axes))


def fftshift(x, axes=None):
    """The zero frequency moved to the middle."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)
