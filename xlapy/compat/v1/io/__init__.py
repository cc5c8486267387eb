"""tf.io: file reading and writing ops, image codecs, TFRecord files, tf.train.Example
parsing and the string decoding ops, tensor (de)serialization, base64, matching_files,
write_graph, and tf.io.gfile (tf.gfile)."""

from __future__ import annotations

from xlapy.compat.v1 import gfile  # tf.io.gfile
from xlapy.compat.v1.misc_api import write_graph
from xlapy.compat.v1.io.tf_record import (TFRecordCompressionType, TFRecordOptions,
                                          TFRecordWriter, tf_record_iterator)
from xlapy.compat.v1.ops.io_ops import (decode_image, decode_jpeg, decode_png, encode_png,
                                        read_file, write_file)
from xlapy.compat.v1.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature,
                                             SparseFeature, VarLenFeature, decode_csv,
                                             decode_raw, parse_example, parse_single_example,
                                             parse_single_sequence_example)
from xlapy.compat.v1.ops.misc_more3 import decode_compressed
from xlapy.compat.v1.ops.misc_io_ops import (decode_base64, encode_base64, matching_files,
                                             parse_tensor, serialize_tensor)
from xlapy.compat.v1.ops.sparse_more_io import (deserialize_many_sparse, serialize_many_sparse,
                                                serialize_sparse)
