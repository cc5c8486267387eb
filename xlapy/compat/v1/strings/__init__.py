"""tf.strings: string splitting into SparseTensors (ops/string_ops.py), the string
transformations of ops/text_ops.py, and format and the Unicode ops (ops/misc_more3.py)."""

from xlapy.compat.v1.ops.parsing_ops import as_string
from xlapy.compat.v1.ops.string_ops import split
from xlapy.compat.v1.ops.text_ops import (join, length, lower, reduce_join, regex_full_match,
                                          regex_replace, strip, substr, to_hash_bucket_fast,
                                          to_number, upper)
from xlapy.compat.v1.ops.misc_more3 import (string_format as format, unicode_decode,
                                            unicode_decode_with_offsets, unicode_encode,
                                            unicode_split, unicode_split_with_offsets,
                                            unicode_transcode)

__all__ = ["as_string", "join", "length", "lower", "reduce_join", "regex_full_match",
           "regex_replace", "split", "strip", "substr", "to_hash_bucket_fast", "to_number",
           "upper", "format", "unicode_decode", "unicode_decode_with_offsets",
           "unicode_encode", "unicode_split", "unicode_split_with_offsets",
           "unicode_transcode"]
