"""xlapy.scipy.signal: jax.scipy.signal's convolutions (convolve, correlate, convolve2d,
correlate2d, fftconvolve) with scipy.signal's output geometry.

Every mode is one slice of the full convolution (size n1 + n2 - 1 per axis): 'full' all
of it, 'same' the centered n1 entries (start (n2 - 1) // 2), 'valid' the entries where one
input covers the other (|n1 - n2| + 1, one input must be at least as large as the other
in every axis). The direct method is one lax.conv_general_dilated of the flipped kernel
with exactly the padding that slice needs (complex operands: real convolutions of the
real and imaginary parts); fftconvolve multiplies (r)fftn spectra of the full size.
Integer and bool inputs are promoted to the default float type, as in JAX; all of it is
differentiable and runs under jit and vmap.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import UnsupportedError, XlapyError
from xlapy.numpy._core import canonicalize_dtype, result_type, shape

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]

_MODES = ("full", "same", "valid")


class SignalError(XlapyError, ValueError):
    """Bad arguments to an xlapy.scipy.signal function (a ValueError too, as in JAX)."""


def _inexact(name, in1, in2):
    in1, in2 = xnp.asarray(in1), xnp.asarray(in2)
    dt = result_type(in1, in2)
    if dt.kind not in "fc" and dt != np.dtype("bfloat16"):
        dt = canonicalize_dtype(np.float64)
    if len(shape(in1)) != len(shape(in2)):
        raise SignalError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                          f"shapes {shape(in1)} and {shape(in2)}")
    return in1.astype(dt), in2.astype(dt)


def _check_mode(name, mode):
    if mode not in _MODES:
        raise SignalError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}")


def _window(name, s1, s2, mode):
    """(start, size) per axis of the requested slice of the full convolution."""
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2))
                                or all(a <= b for a, b in zip(s1, s2))):
        raise SignalError(f"{name}: for mode 'valid' one input must be at least as large as "
                          f"the other in every dimension, got shapes {s1} and {s2}")
    full = [a + b - 1 for a, b in zip(s1, s2)]
    if mode == "full":
        out = full
    elif mode == "same":
        out = list(s1)
    else:
        out = [abs(a - b) + 1 for a, b in zip(s1, s2)]
    return [((f - o) // 2, o) for f, o in zip(full, out)]


def _direct_real(x, k, window):
    """The window of the full convolution of real x and k (same ndim)."""
    pads, crops = [], []
    for (start, size), m, n in zip(window, shape(k), shape(x)):
        lo = m - 1 - start
        hi = (start + size) - n
        pads.append((max(lo, 0), max(hi, 0)))
        crops.append(slice(max(-lo, 0), max(-lo, 0) + size))
    kernel = xnp.flip(k)
    out = lax.conv_general_dilated(x[None, None], kernel[None, None], (1,) * len(pads), pads)
    return out[0, 0][tuple(crops)]


def _direct(x, k, window):
    if xnp.iscomplexobj(x) or xnp.iscomplexobj(k):
        xr, xi, kr, ki = xnp.real(x), xnp.imag(x), xnp.real(k), xnp.imag(k)
        re = _direct_real(xr, kr, window) - _direct_real(xi, ki, window)
        im = _direct_real(xr, ki, window) + _direct_real(xi, kr, window)
        return lax.complex(re, im)
    return _direct_real(x, k, window)


def _conv(name, in1, in2, mode):
    _check_mode(name, mode)
    in1, in2 = _inexact(name, in1, in2)
    if 0 in shape(in1) or 0 in shape(in2):
        raise SignalError(f"{name}: zero-size arrays are not supported, got shapes "
                          f"{shape(in1)} and {shape(in2)}")
    return _direct(in1, in2, _window(name, shape(in1), shape(in2), mode))


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution of in1 and in2 (method 'auto'/'direct' or 'fft')."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise SignalError(f"convolve: method must be 'auto', 'direct' or 'fft', got "
                          f"{method!r}")
    return _conv("convolve", in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation: convolve(in1, flip(conj(in2)))."""
    in2 = xnp.asarray(in2)
    return convolve(in1, xnp.flip(xnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedError(f"{name}: only boundary='fill' with fillvalue=0 is supported "
                               f"(as in JAX), got boundary={boundary!r}, "
                               f"fillvalue={fillvalue!r}")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise SignalError(f"{name}: both inputs must be 2-dimensional, got shapes "
                          f"{shape(in1)} and {shape(in2)}")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-dimensional convolution (zero fill at the boundary)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _conv("convolve2d", in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-dimensional cross-correlation (zero fill at the boundary). In 'valid' mode with in2
    the larger, the result is scipy's: the correlation of in2 with in1, flipped."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = xnp.asarray(in1), xnp.asarray(in2)
    s1, s2 = shape(in1), shape(in2)
    if mode == "valid" and s1 != s2 and all(a <= b for a, b in zip(s1, s2)):
        return _conv("correlate2d", xnp.flip(in2), xnp.conj(in1), mode)
    return xnp.flip(_conv("correlate2d", xnp.flip(in1), xnp.conj(in2), mode))


def fftconvolve(in1, in2, mode="full", axes=None):
    """N-dimensional convolution through FFTs of the full size, over `axes` (default all);
    the other axes must have equal sizes and are paired elementwise."""
    _check_mode("fftconvolve", mode)
    in1, in2 = _inexact("fftconvolve", in1, in2)
    s1, s2 = shape(in1), shape(in2)
    nd = len(s1)
    if axes is None:
        axes = tuple(range(nd))
    else:
        axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
        if any(not -nd <= a < nd for a in axes):
            raise SignalError(f"fftconvolve: axes {axes} out of range for {nd} dimensions")
        axes = tuple(sorted({a % nd for a in axes}))
    other = [d for d in range(nd) if d not in axes]
    if any(s1[d] != s2[d] for d in other):
        raise SignalError(f"fftconvolve: the axes not convolved must have the same sizes, "
                          f"got shapes {s1} and {s2} with axes={axes}")
    window = _window("fftconvolve", [s1[d] for d in axes], [s2[d] for d in axes], mode)
    full = [s1[d] + s2[d] - 1 for d in axes]
    if all(s1[d] == 1 or s2[d] == 1 for d in axes):
        conv = in1 * in2
    elif xnp.iscomplexobj(in1):
        conv = xnp.fft.ifftn(xnp.fft.fftn(in1, full, axes) * xnp.fft.fftn(in2, full, axes),
                             full, axes)
    else:
        conv = xnp.fft.irfftn(xnp.fft.rfftn(in1, full, axes) * xnp.fft.rfftn(in2, full, axes),
                              full, axes)
    index = [slice(None)] * nd
    for d, (start, size) in zip(axes, window):
        index[d] = slice(start, start + size)
    return conv[tuple(index)].astype(in1.dtype)
