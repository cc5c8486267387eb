"""tf.fft3d / tf.ifft3d (tf.signal.fft3d / ifft3d): TF's FFT3D and IFFT3D, the complex
FFT over the innermost three dimensions (complex64 or complex128, rank >= 3).

Kernels are numpy.fft.fftn / ifftn in the executor and xlapy.numpy.fft's when compiled
(XLA's FFT). Gradients are TF's: FFT3D's is N * IFFT3D(g), IFFT3D's FFT3D(g) / N, with N
the number of points of the transformed dimensions (known when the graph is built).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.ops.spectral_ops import _c, _fft_infer, _scale, _static_dims

_AXES = (-3, -2, -1)

register_op("FFT3D", infer=_fft_infer(3))(lambda m, x: _c(m, m.fft.fftn(x, axes=_AXES), x))
register_op("IFFT3D", infer=_fft_infer(3))(lambda m, x: _c(m, m.fft.ifftn(x, axes=_AXES), x))


@register_gradient("FFT3D")
def _fft3d_grad(op, g):
    return [_scale(make("IFFT3D", [g]), float(np.prod(_static_dims(g, 3, "fft3d"))))]


@register_gradient("IFFT3D")
def _ifft3d_grad(op, g):
    return [_scale(make("FFT3D", [g]), 1.0 / float(np.prod(_static_dims(g, 3, "ifft3d"))))]


def fft3d(input, name=None):
    """The 3-D discrete Fourier transform over the innermost three dimensions."""
    return make("FFT3D", [tensor(input)], name=name or "FFT3D")


def ifft3d(input, name=None):
    """The inverse 3-D discrete Fourier transform over the innermost three dimensions."""
    return make("IFFT3D", [tensor(input)], name=name or "IFFT3D")
