"""tf.python_io: TFRecord files (TFRecordWriter, tf_record_iterator, TFRecordOptions,
TFRecordCompressionType), implemented in xlapy.compat.v1.io.tf_record."""

from xlapy.compat.v1.io.tf_record import (TFRecordCompressionType, TFRecordOptions,
                                          TFRecordWriter, tf_record_iterator)
