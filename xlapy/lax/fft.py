"""xlapy.lax.fft and FftType (jax.lax's): XLA's fft opcode on the trailing dimensions."""

from __future__ import annotations

import enum

from xlapy.errors import XlapyError
from xlapy.frontend.primitives.fft import fft as _fft


class FftType(enum.IntEnum):
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """The fft_type transform (FftType or its name) of x over len(fft_lengths) trailing
    dimensions."""
    name = fft_type.name if isinstance(fft_type, FftType) else str(fft_type).upper()
    name = name.rsplit(".", 1)[-1]
    if name not in FftType.__members__:
        raise XlapyError(f"fft: unknown fft_type {fft_type!r} (FFT, IFFT, RFFT or IRFFT)")
    return _fft(x, name, tuple(fft_lengths))


__all__ = ["fft", "FftType"]
