"""tf.quantization: fake quantization (training-time simulation of uint8 inference) and
quantize / dequantize (quantize_ops.py)."""

from xlapy.compat.v1.ops.bitwise_ops import (fake_quant_with_min_max_args,
                                             fake_quant_with_min_max_vars)
from xlapy.compat.v1.ops.quantize_ops import dequantize, quantize

__all__ = ["dequantize", "fake_quant_with_min_max_args", "fake_quant_with_min_max_vars",
           "quantize"]
