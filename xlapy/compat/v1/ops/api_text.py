"""The tf.* names of text in TF 1.x input pipelines: string ops (text_ops.py), lookup
tables' initializer (lookup_table_ops.py) and the queue-based readers (reader_ops.py)."""

from __future__ import annotations

from xlapy.compat.v1.ops.lookup_table_ops import initialize_all_tables, tables_initializer
from xlapy.compat.v1.ops.reader_ops import (FixedLengthRecordReader, ReaderBase,
                                            TextLineReader, TFRecordReader, WholeFileReader)
from xlapy.compat.v1.ops.text_ops import (reduce_join, regex_replace, string_join,
                                          string_to_hash_bucket_fast, substr)

__all__ = ["FixedLengthRecordReader", "ReaderBase", "TextLineReader", "TFRecordReader",
           "WholeFileReader", "initialize_all_tables", "reduce_join", "regex_replace",
           "string_join", "string_to_hash_bucket_fast", "substr", "tables_initializer"]
