"""tf.quantization: fake quantization (training-time simulation of uint8 inference)."""

from xlapy.compat.v1.ops.bitwise_ops import (fake_quant_with_min_max_args,
                                             fake_quant_with_min_max_vars)

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_vars"]
