"""tf.spectral: TF 1.x's FFTs and DCTs (the same functions as tf.signal's)."""

from xlapy.compat.v1.ops.spectral_ops import (fft, fft2d, ifft, ifft2d, irfft, irfft2d, rfft,
                                              rfft2d)
from xlapy.compat.v1.ops.fft3d_ops import fft3d, ifft3d
from xlapy.compat.v1.signal.spectral import dct, idct

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d", "rfft",
           "rfft2d", "dct", "idct"]
