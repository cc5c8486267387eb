"""More TF 1.15 top-level math and array functions: quantize / dequantize, fingerprint,
betainc, matrix_square_root, fft3d / ifft3d, extract_volume_patches,
histogram_fixed_width_bins, batch_scatter_update, guarantee_const, floor_div, and the
quantized dtype names (carried by plain integer dtypes: see quantize_ops.py)."""

from __future__ import annotations

from xlapy.compat.v1.ops.array_misc_more import (batch_scatter_update, floor_div,
                                                 guarantee_const, histogram_fixed_width_bins)
from xlapy.compat.v1.ops.fft3d_ops import fft3d, ifft3d
from xlapy.compat.v1.ops.fingerprint_ops import fingerprint
from xlapy.compat.v1.ops.matrix_sqrt_ops import matrix_square_root
from xlapy.compat.v1.ops.quantize_ops import (dequantize, qint8, qint16, qint32, quantize,
                                              quantize_v2, quint8, quint16)
from xlapy.compat.v1.ops.special_betainc import betainc
from xlapy.compat.v1.ops.volume_patches import extract_volume_patches

__all__: list = [
    "batch_scatter_update", "betainc", "dequantize", "extract_volume_patches", "fft3d",
    "fingerprint", "floor_div", "guarantee_const", "histogram_fixed_width_bins", "ifft3d",
    "matrix_square_root", "qint8", "qint16", "qint32", "quantize", "quantize_v2", "quint8",
    "quint16",
]
