"""tf.io: file reading and writing ops, image codecs, and tf.io.gfile (tf.gfile)."""

from __future__ import annotations

from xlapy.compat.v1 import gfile  # tf.io.gfile
from xlapy.compat.v1.ops.io_ops import (decode_image, decode_jpeg, decode_png, encode_png,
                                        read_file, write_file)
