"""The tf.* names of the image, signal and spatial ops (space_batch_ops, image/patches.py,
spectral_ops, bitwise), collected for xlapy.compat.v1's namespace."""

from __future__ import annotations

from xlapy.compat.v1.image.patches import extract_image_patches
from xlapy.compat.v1.ops.dilated_pool import required_space_to_batch_paddings
from xlapy.compat.v1.ops.space_batch_ops import (batch_to_space, batch_to_space_nd,
                                                 space_to_batch, space_to_batch_nd)
from xlapy.compat.v1.ops.spectral_ops import (angle, complex, conj, fft, fft2d, ifft, ifft2d,
                                              imag, real)

__all__ = ["batch_to_space", "batch_to_space_nd", "space_to_batch", "space_to_batch_nd",
           "extract_image_patches", "angle", "complex", "conj", "fft", "fft2d", "ifft",
           "ifft2d", "imag", "real", "required_space_to_batch_paddings"]
