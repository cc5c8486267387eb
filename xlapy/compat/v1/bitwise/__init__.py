"""tf.bitwise: elementwise bit operations on integer tensors."""

from xlapy.compat.v1.ops.bitwise_ops import (bitwise_and, bitwise_or, bitwise_xor, invert,
                                             left_shift, right_shift)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
