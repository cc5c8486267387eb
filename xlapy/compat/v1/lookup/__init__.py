"""tf.lookup (TF 1.15): static tables and their initializers (ops/lookup_table_ops.py,
ops/lookup_vocab.py)."""

from xlapy.compat.v1.ops.lookup_table_ops import (KeyValueTensorInitializer, StaticHashTable,
                                                  TextFileIndex, TextFileInitializer)
from xlapy.compat.v1.ops.lookup_vocab import StaticVocabularyTable

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable",
           "TextFileIndex", "TextFileInitializer"]
