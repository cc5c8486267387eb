"""tf.strings: string splitting into SparseTensors (ops/string_ops.py)."""

from xlapy.compat.v1.ops.string_ops import split

__all__ = ["split"]
