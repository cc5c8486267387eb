"""tf.contrib.lookup: HashTable, its initializers and the vocabulary tables of TF 1.x input
pipelines (ops/lookup_table_ops.py, ops/lookup_vocab.py)."""

from xlapy.compat.v1.ops.lookup_table_ops import (HashTable, InitializableLookupTableBase,
                                                  KeyValueTensorInitializer, LookupInterface,
                                                  TableInitializerBase, TextFileIdTableInitializer,
                                                  TextFileIndex, TextFileInitializer,
                                                  TextFileStringTableInitializer)
from xlapy.compat.v1.ops.lookup_vocab import (FastHashSpec, HasherSpec,
                                              IdTableWithHashBuckets, StrongHashSpec,
                                              index_table_from_file, index_table_from_tensor,
                                              index_to_string, index_to_string_table_from_file,
                                              index_to_string_table_from_tensor,
                                              string_to_index)

__all__ = ["FastHashSpec", "HashTable", "HasherSpec", "IdTableWithHashBuckets",
           "InitializableLookupTableBase", "KeyValueTensorInitializer", "LookupInterface",
           "StrongHashSpec", "TableInitializerBase", "TextFileIdTableInitializer",
           "TextFileIndex", "TextFileInitializer", "TextFileStringTableInitializer",
           "index_table_from_file", "index_table_from_tensor", "index_to_string",
           "index_to_string_table_from_file", "index_to_string_table_from_tensor",
           "string_to_index"]
