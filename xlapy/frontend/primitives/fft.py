"""The fft primitive (jax.lax.fft): XLA's `fft` opcode over the last len(fft_lengths)
(1 to 3) dimensions, fft_type FFT, IFFT (scaled by 1/N), RFFT (real -> the n/2+1
non-negative frequencies of the last dimension), IRFFT (its inverse).

Its rules are JAX's: linear (JVP: the fft of the tangent), batch dimensions lead (vmap,
frontend/batching/fft.py), and the transposes (VJP): FFT and IFFT are symmetric, so each
is its own transpose; RFFT's is the real part of the FFT of the cotangent zero-padded to
n along the last dimension (the transpose of rfft = slice . fft . complex); IRFFT's is
conj(RFFT(ct) * m / N) with m weighting the bins that stand for two (1 for the zero bin
and the Nyquist bin of an even length, 2 otherwise).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.eager import via_evaluator
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import complex as C
from xlapy.frontend.primitives import shapes as S

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = primitive("fft")
fft_p.def_impl(via_evaluator(fft_p))
fft_p.def_lowering(lambda ctx, x, fft_type, fft_lengths: ctx.b.op(
    "fft", x, fft_type=fft_type, fft_length=tuple(fft_lengths)))


@fft_p.def_abstract_eval
def fft_aval(a, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise ShapeError(f"fft: fft_type {fft_type!r} is not one of {', '.join(FFT_TYPES)}")
    if not 1 <= k <= 3 or a.ndim < k:
        raise ShapeError(f"fft: fft_lengths {list(fft_lengths)} must name 1 to 3 of the "
                         f"trailing dimensions of {a}")
    lead, tail = a.shape[:a.ndim - k], tuple(a.shape[a.ndim - k:])
    half = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
    if fft_type == "RFFT":
        if not B.is_float(a.dtype) or a.dtype.itemsize < 4:
            raise ShapeError(f"fft: RFFT takes a float32 or float64 operand, got {a}")
        if tail != tuple(fft_lengths):
            raise ShapeError(f"fft: RFFT of {a} needs trailing dimensions {list(fft_lengths)}")
        return ShapedArray(lead + half, C.complex_dtype(a.dtype))
    if not B.is_complex(a.dtype):
        raise ShapeError(f"fft: {fft_type} takes a complex operand, got {a}")
    if fft_type == "IRFFT":
        if tail != half:
            raise ShapeError(f"fft: IRFFT of {a} to lengths {list(fft_lengths)} needs trailing "
                             f"dimensions {list(half)}")
        return ShapedArray(lead + tuple(fft_lengths), B.real_dtype(a.dtype))
    if tail != tuple(fft_lengths):
        raise ShapeError(f"fft: {fft_type} of {a} needs trailing dimensions "
                         f"{list(fft_lengths)}")
    return a


def fft(x, fft_type: str, fft_lengths):
    return bind(fft_p, x, fft_type=str(fft_type), fft_lengths=tuple(int(n) for n in fft_lengths))


def _rfft_transpose(ct, fft_lengths):
    n = fft_lengths[-1]
    a = B.aval_of(ct)
    zero = np.zeros((), a.dtype)
    config = [(0, 0, 0)] * (a.ndim - 1) + [(0, n - a.shape[-1], 0)]
    full = S.pad(ct, zero, config)
    return C.real(fft(full, "FFT", fft_lengths))


def _irfft_transpose(ct, fft_lengths):
    x = fft(ct, "RFFT", fft_lengths)
    a = B.aval_of(x)
    n = a.shape[-1]
    odd = fft_lengths[-1] % 2
    weights = np.array([1.0] + [2.0] * (n - 2 + odd) + [1.0] * (1 - odd), a.dtype)[:n]
    scale = weights / math.prod(fft_lengths)
    w = B.broadcast_in_dim(scale.astype(a.dtype), a.shape, (a.ndim - 1,))
    return C.conj(B.mul(x, w))


@fft_p.def_vjp
def _fft_vjp(ct, x, out, fft_type, fft_lengths):
    if fft_type == "RFFT":
        return (_rfft_transpose(ct, fft_lengths),)
    if fft_type == "IRFFT":
        return (_irfft_transpose(ct, fft_lengths),)
    return (fft(ct, fft_type, fft_lengths),)


__all__ = ["fft", "fft_p", "FFT_TYPES"]
