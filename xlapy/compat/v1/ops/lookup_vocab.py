"""Vocabulary tables (tf.contrib.lookup): index_table_from_tensor / index_table_from_file
(string or integer keys to their ids), index_to_string_table_from_tensor / _from_file (ids
back to strings), IdTableWithHashBuckets and tf.lookup.StaticVocabularyTable.

A key outside the vocabulary maps to default_value, or with num_oov_buckets > 0 to
vocab_size + Fingerprint64(key) % num_oov_buckets (FarmHash's Fingerprint64 of the string,
or of an integer key's decimal text), TF's FastHashSpec buckets. StrongHashSpec (keyed
SipHash) is not supported.
"""

from __future__ import annotations

import collections

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.lookup_table_ops import (HashTable, KeyValueTensorInitializer,
                                                  LookupInterface, TextFileIndex,
                                                  TextFileInitializer)

HasherSpec = collections.namedtuple("HasherSpec", ["hasher", "key"])
FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """Keyed SipHash buckets (to_hash_bucket_strong): not supported by xlapy."""

    def __new__(cls, key):
        return super().__new__(cls, "stronghash", key)


def _check_hasher(spec):
    if spec is None or spec == FastHashSpec:
        return
    if isinstance(spec, HasherSpec) and spec.hasher == "stronghash":
        raise UnimplementedError("StrongHashSpec (keyed SipHash buckets) is not supported by "
                                 "xlapy: use FastHashSpec")
    raise InvalidArgumentError(f"hasher_spec must be FastHashSpec, got {spec!r}")


def _check_oov(num_oov_buckets):
    if num_oov_buckets is None or int(num_oov_buckets) < 0:
        raise InvalidArgumentError(f"num_oov_buckets must be >= 0, got {num_oov_buckets}.")
    return int(num_oov_buckets)


def _key_dtype(dt):
    d = dtypes.as_dtype(dt)
    if d == dtypes.string:
        return d
    if d.is_integer:
        return dtypes.int64
    raise InvalidArgumentError(f"Only integer and string keys are supported, got {d.name}.")


class IdTableWithHashBuckets(LookupInterface):
    """A string (or integer) to id table whose missing keys fall into num_oov_buckets hash
    buckets after the table's ids; table None: every key is hashed."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None,
                 key_dtype=None):
        _check_hasher(hasher_spec)
        self._table = table
        self._num_oov_buckets = _check_oov(num_oov_buckets)
        kd = table.key_dtype if table is not None else _key_dtype(key_dtype or dtypes.string)
        super().__init__(kd, dtypes.int64, name or (table.name if table is not None
                                                    else "hash_bucket"))

    init = property(lambda self: self._table.init if self._table is not None else None)
    initializer = init

    def size(self, name=None):
        """The number of ids: the table's size plus the OOV buckets."""
        if self._table is None:
            return convert_to_tensor(self._num_oov_buckets, dtype=dtypes.int64)
        return self._table.size(name) + self._num_oov_buckets

    def lookup(self, keys, name=None):
        sparse, k = self._keys_in(keys)
        with get_default_graph().name_scope(name or f"{self._name}_Lookup"):
            if self._table is None:
                return self._like(sparse, self._buckets(k))
            ids = self._table.lookup(k)
            if self._num_oov_buckets:
                from xlapy.compat.v1.ops.index_ops import where
                from xlapy.compat.v1.ops.math_ops import add, equal
                buckets = add(self._buckets(k), self._table.size())
                ids = where(equal(ids, -1), buckets, ids)
        return self._like(sparse, ids)

    def _buckets(self, k):
        return make("StringToHashBucketFast", [k], {"num_buckets": self._num_oov_buckets,
                                                    "keep_empty": True}, name="hash_bucket")


class StaticVocabularyTable(IdTableWithHashBuckets):
    """tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets): ids of the
    initializer's keys, hash buckets after them for the others."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if _check_oov(num_oov_buckets) < 1:
            raise InvalidArgumentError(f"oov_buckets must be > 0; use StaticHashTable, got "
                                       f"{num_oov_buckets}")
        table = HashTable(initializer, -1, name=name or "vocabulary")
        super().__init__(table, num_oov_buckets, name=name)


def index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1,
                            hasher_spec=FastHashSpec, dtype=dtypes.string, name=None):
    """A table from the strings (or integers) of the 1-D `mapping` to their positions
    (int64); other keys give default_value, or a hash bucket after them."""
    if mapping is None:
        raise InvalidArgumentError("mapping must be specified.")
    oov = _check_oov(num_oov_buckets)
    _check_hasher(hasher_spec)
    kd = _key_dtype(dtype)
    g = get_default_graph()
    with g.name_scope(name or "string_to_index"):
        keys = convert_to_tensor(mapping, dtype=kd if not hasattr(mapping, "op") else None,
                                 name="mapping")
        if keys.dtype.is_integer and keys.dtype != dtypes.int64:
            from xlapy.compat.v1.ops.math_ops import cast
            keys = cast(keys, dtypes.int64)
        if (keys.dtype == dtypes.string) != (kd == dtypes.string):
            raise InvalidArgumentError(f"Expected {kd.name} keys, got {keys.dtype.name}.")
        if keys.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"mapping must be a vector, got shape {keys.shape}")
        from xlapy.compat.v1.ops.manip_ops import range_
        from xlapy.compat.v1.ops.array_ops import size
        values = range_(size(keys, out_type=dtypes.int64), dtype=dtypes.int64)
        table = HashTable(KeyValueTensorInitializer(keys, values, kd, dtypes.int64),
                          -1 if oov else default_value, name="hash_table")
    if oov:
        return IdTableWithHashBuckets(table, oov, hasher_spec, key_dtype=kd)
    return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=FastHashSpec,
                          key_dtype=dtypes.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table from the lines (or a column) of a vocabulary file to their line numbers (or
    another column); other keys give default_value, or a hash bucket after them."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise InvalidArgumentError("vocabulary_file must be specified and must not be empty.")
    oov = _check_oov(num_oov_buckets)
    _check_hasher(hasher_spec)
    kd = _key_dtype(key_dtype)
    with get_default_graph().name_scope(name or "string_to_index"):
        init = TextFileInitializer(vocabulary_file, kd, key_column_index, dtypes.int64,
                                   value_column_index, vocab_size, delimiter)
        table = HashTable(init, -1 if oov else default_value, name="hash_table")
    if oov:
        return IdTableWithHashBuckets(table, oov, hasher_spec, key_dtype=kd)
    return table


def index_to_string_table_from_tensor(vocabulary_list=None, default_value="UNK", name=None,
                                      mapping=None):
    """A table from ids (int64) to the strings of `vocabulary_list`; other ids give
    default_value."""
    mapping = vocabulary_list if vocabulary_list is not None else mapping
    if mapping is None:
        raise InvalidArgumentError("vocabulary_list must be specified.")
    with get_default_graph().name_scope(name or "index_to_string"):
        values = convert_to_tensor(mapping, dtype=dtypes.string if not hasattr(mapping, "op")
                                   else None, name="vocabulary_list")
        from xlapy.compat.v1.ops.manip_ops import range_
        from xlapy.compat.v1.ops.array_ops import size
        keys = range_(size(values, out_type=dtypes.int64), dtype=dtypes.int64)
        return HashTable(KeyValueTensorInitializer(keys, values, dtypes.int64, dtypes.string),
                         default_value, name="hash_table")


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """A table from line numbers (or a column) to the lines (or a column) of a file."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise InvalidArgumentError("vocabulary_file must be specified and must not be empty.")
    with get_default_graph().name_scope(name or "index_to_string"):
        init = TextFileInitializer(vocabulary_file, dtypes.int64, key_column_index,
                                   dtypes.string, value_column_index, vocab_size, delimiter)
        return HashTable(init, default_value, name="hash_table")


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """The strings of `mapping` at the ids of `tensor` (a table initialized by
    tf.tables_initializer())."""
    return index_to_string_table_from_tensor(mapping, default_value, name).lookup(tensor)


def string_to_index(tensor, mapping, default_value=-1, name=None):
    """The ids of `tensor`'s strings in `mapping` (a table initialized by
    tf.tables_initializer())."""
    return index_table_from_tensor(mapping, default_value=default_value,
                                   name=name).lookup(tensor)
