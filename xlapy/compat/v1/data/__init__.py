"""tf.data (host-side datasets and iterators for TF 1.x graphs): see dataset.py."""

from xlapy.compat.v1.data.dataset import Dataset
from xlapy.compat.v1.data.iterator_ops import (Iterator, get_output_shapes, get_output_types,
                                               make_initializable_iterator,
                                               make_one_shot_iterator)
from xlapy.compat.v1.data.readers import (FixedLengthRecordDataset, TextLineDataset,
                                          TFRecordDataset)
from xlapy.compat.v1.data import experimental
from xlapy.compat.v1.data.experimental import Options

__all__ = ["Dataset", "FixedLengthRecordDataset", "Iterator", "Options", "experimental",
           "get_output_shapes", "get_output_types", "make_initializable_iterator",
           "make_one_shot_iterator", "TextLineDataset", "TFRecordDataset"]
