"""Lookup tables of TF 1.x input pipelines: tf.contrib.lookup.HashTable (tf.lookup's
StaticHashTable), its initializers KeyValueTensorInitializer and TextFileInitializer, the
ops behind them (InitializeTableV2, InitializeTableFromTextFileV2, LookupTableFindV2,
LookupTableSizeV2) and tf.tables_initializer.

A table's contents live in the session that runs its initializer (one per session and
table, as TF keeps one per resource container, and as queue_ops.py keeps queues): a lookup
before the initializer ran raises FailedPreconditionError("Table not initialized."); running
the initializer again keeps the contents, as TF's. Every table's initializer is in the
TABLE_INITIALIZERS collection, which tf.tables_initializer() groups. The ops run in the
executor (also inside tf.data map functions), never in a compiled cluster.

The vocabulary tables (index_table_from_tensor / _file, IdTableWithHashBuckets) are in
ops/lookup_vocab.py.
"""

from __future__ import annotations

import threading

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    InvalidTypeError, NotFoundError)
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.tensor_shape import TensorShape

TABLE_INITIALIZERS = "table_initializer"   # tf.GraphKeys.TABLE_INITIALIZERS
_LOCK = threading.Lock()


def _tables(session) -> dict:
    with _LOCK:
        if not hasattr(session, "_xlapy_tables"):
            session._xlapy_tables = {}
        return session._xlapy_tables


def _key(v, dt):
    """A key or value of dtype dt as a hashable Python value (bytes, int or float)."""
    if dt == dtypes.string:
        v = v.item() if isinstance(v, np.ndarray) else v
        return v.encode() if isinstance(v, str) else bytes(v)
    if dt.is_integer:
        return int(v)
    if dt == dtypes.bool:
        return bool(v)
    return float(v)


def _show(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _insert(table, content: dict, k, v):
    old = content.get(k, v)
    if old != v:
        raise FailedPreconditionError(
            f"HashTable has different value for same key. Key {_show(k)} has {_show(old)} and "
            f"trying to add value {_show(v)} (table {table.name})")
    content[k] = v


def _store(session, table, content: dict):
    st = _tables(session)
    with _LOCK:
        st.setdefault(id(table), content)  # a second initialization keeps the first


def _content(session, table, op) -> dict:
    c = _tables(session).get(id(table))
    if c is None:
        raise FailedPreconditionError(f"Table not initialized.\n\t [[{op.name}]]", op=op)
    return c


# ---- initializers ---------------------------------------------------------------------------

class TableInitializerBase:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)


class KeyValueTensorInitializer(TableInitializerBase):
    """A table's contents from a tensor of keys and one of values (1-D, of one size)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        g = get_default_graph()
        with g.name_scope(name or "key_value_init"):
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        if not self._keys.shape.is_compatible_with(self._values.shape):
            raise InvalidArgumentError(f"Expected shape {self._keys.shape} for values, got "
                                       f"{self._values.shape}")
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        op = make_op("InitializeTableV2", [self._keys, self._values], {"table": table},
                     name="table_init")
        get_default_graph().add_to_collection(TABLE_INITIALIZERS, op)
        return op


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """A table's contents from a text file: each line's key and value are its whole text
    (TextFileIndex.WHOLE_LINE), its number from 0 (LINE_NUMBER) or one of its columns split
    at `delimiter`; vocab_size reads only that many lines (and the file must have them)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None):
        super().__init__(key_dtype, value_dtype)
        for what, idx, dt in (("key", key_index, self._key_dtype),
                              ("value", value_index, self._value_dtype)):
            if idx < -2:
                raise InvalidArgumentError(f"Invalid {what} index {idx}.")
            if idx == TextFileIndex.LINE_NUMBER and dt != dtypes.int64:
                raise InvalidArgumentError(f"Signature mismatch. {what.capitalize()} must be "
                                           f"dtype int64, got {dt.name}.")
            if idx == TextFileIndex.WHOLE_LINE and dt != dtypes.string:
                raise InvalidArgumentError(f"Signature mismatch. {what.capitalize()} must be "
                                           f"dtype string, got {dt.name}.")
        if vocab_size is not None and int(vocab_size) <= 0:
            raise InvalidArgumentError(f"Invalid vocab_size {vocab_size}.")
        with get_default_graph().name_scope(name or "text_file_init"):
            self._filename = convert_to_tensor(filename, dtype=dtypes.string,
                                               name="asset_filepath")
        self._attrs = {"key_index": int(key_index), "value_index": int(value_index),
                       "vocab_size": -1 if vocab_size is None else int(vocab_size),
                       "delimiter": delimiter}

    def initialize(self, table):
        op = make_op("InitializeTableFromTextFileV2", [self._filename],
                     dict(self._attrs, table=table), name="table_init")
        get_default_graph().add_to_collection(TABLE_INITIALIZERS, op)
        return op


class TextFileStringTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None,
                 delimiter="\t", name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string,
                         value_column_index, vocab_size, delimiter, name)


class TextFileIdTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None,
                 delimiter="\t", name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64,
                         value_column_index, vocab_size, delimiter, name)


# ---- tables ---------------------------------------------------------------------------------

class LookupInterface:
    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._name = name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    name = property(lambda self: self._name)

    def _keys_in(self, keys):
        from xlapy.compat.v1.sparse_tensor import SparseTensor
        if isinstance(keys, SparseTensor):
            return keys, keys.values
        k = convert_to_tensor(keys, dtype=self._key_dtype if not hasattr(keys, "op")
                              else None)
        if k.dtype != self._key_dtype:
            if k.dtype.is_integer and self._key_dtype.is_integer:
                from xlapy.compat.v1.ops.math_ops import cast
                return None, cast(k, self._key_dtype)
            raise InvalidTypeError(f"Signature mismatch. Keys must be dtype "
                                   f"{self._key_dtype.name}, got {k.dtype.name}.")
        return None, k

    @staticmethod
    def _like(sparse, values):
        if sparse is None:
            return values
        from xlapy.compat.v1.sparse_tensor import SparseTensor
        return SparseTensor(sparse.indices, values, sparse.dense_shape)


class InitializableLookupTableBase(LookupInterface):
    """A table filled by its initializer when that runs in a session."""

    def __init__(self, default_value, initializer, name=None):
        super().__init__(initializer.key_dtype, initializer.value_dtype, None)
        g = get_default_graph()
        with g.name_scope(name or "hash_table") as scope:
            self._name = scope.rstrip("/") if scope else (name or "hash_table")
            self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype,
                                                    name="default_value")
            if self._default_value.shape.ndims not in (None, 0):
                raise InvalidArgumentError(f"Expected shape [] for default value, got "
                                           f"{self._default_value.shape}")
            self._initializer = initializer
            self._init_op = initializer.initialize(self)

    default_value = property(lambda self: self._default_value)

    def _base(self) -> str:
        return self._name.rsplit("/", 1)[-1]

    initializer = property(lambda self: self._init_op)
    init = initializer

    def size(self, name=None):
        """The number of entries (int64); the table must be initialized."""
        return make_op("LookupTableSizeV2", [], {"table": self},
                       name=name or f"{self._base()}_Size").outputs[0]

    def lookup(self, keys, name=None):
        """The value of each key (default_value for a missing one), keys' shape; a
        SparseTensor's values are looked up and the result is a SparseTensor."""
        sparse, k = self._keys_in(keys)
        out = make_op("LookupTableFindV2", [k, self._default_value], {"table": self},
                      name=name or f"{self._base()}_Lookup").outputs[0]
        return self._like(sparse, out)


class HashTable(InitializableLookupTableBase):
    """tf.contrib.lookup.HashTable(initializer, default_value) / tf.lookup.StaticHashTable:
    an immutable table filled by its initializer."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        super().__init__(default_value, initializer, name)


StaticHashTable = HashTable


def tables_initializer(name="init_all_tables"):
    """An op running every table initializer of the graph (a no-op without tables)."""
    from xlapy.compat.v1.ops.array_ops import group, no_op
    ops = get_default_graph().get_collection(TABLE_INITIALIZERS)
    return group(*ops, name=name) if ops else no_op(name=name)


initialize_all_tables = tables_initializer


# ---- the ops and their executor hooks ----------------------------------------------------------

def _init_infer(op):
    t = op.get_attr("table")
    if op.type == "InitializeTableV2":
        k, v = op.inputs
        if k.dtype != t.key_dtype or v.dtype != t.value_dtype:
            raise InvalidTypeError(f"Signature mismatch. Keys must be dtype "
                                   f"{t.key_dtype.name}, got {k.dtype.name}; values must be "
                                   f"dtype {t.value_dtype.name}, got {v.dtype.name}.")
    return []


def _find_infer(op):
    t = op.get_attr("table")
    k, d = op.inputs
    if k.dtype != t.key_dtype:
        raise InvalidTypeError(f"Signature mismatch. Keys must be dtype {t.key_dtype.name}, "
                               f"got {k.dtype.name}.")
    return [(t.value_dtype, k.shape)]


def _unreachable(m, *a):
    raise AssertionError("table ops run through their executor hooks")


register_op("InitializeTableV2", infer=_init_infer, lowering=None, stateful=True)(_unreachable)
register_op("InitializeTableFromTextFileV2", infer=_init_infer, lowering=None, stateful=True,
            attrs=("key_index", "value_index", "vocab_size", "delimiter"))(_unreachable)
register_op("LookupTableFindV2", infer=_find_infer, lowering=None, stateful=True)(_unreachable)
register_op("LookupTableSizeV2", infer=lambda op: [(dtypes.int64, TensorShape([]))],
            lowering=None, stateful=True)(_unreachable)


def _init_executor(session, op):
    table = op.get_attr("table")

    def run(keys, values):
        keys, values = np.asarray(keys), np.asarray(values)
        if keys.shape != values.shape:
            raise InvalidArgumentError(f"Expected shape {list(keys.shape)} for value, got "
                                       f"{list(values.shape)}\n\t [[{op.name}]]", op=op)
        content: dict = {}
        for k, v in zip(keys.reshape(-1), values.reshape(-1)):
            _insert(table, content, _key(k, table.key_dtype), _key(v, table.value_dtype))
        _store(session, table, content)
        return []
    return run


def _column(tokens, idx, line, n, dt, path, what):
    if idx == TextFileIndex.LINE_NUMBER:
        return n
    if idx == TextFileIndex.WHOLE_LINE:
        return line
    tok = tokens[idx]
    if dt == dtypes.string:
        return tok
    try:
        return int(tok) if dt.is_integer else float(tok)
    except ValueError:
        raise InvalidArgumentError(f"Field {tok.decode('utf-8', 'replace')} in line {n} is "
                                   f"not a valid {dt.name}.") from None


def read_text_table(path, key_index, value_index, key_dtype, value_dtype, vocab_size=-1,
                    delimiter="\t", table=None) -> dict:
    """The {key: value} of a vocabulary file, as InitializeTableFromTextFileV2 reads it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
    if vocab_size >= 0:
        if len(lines) < vocab_size:
            raise InvalidArgumentError(f"Invalid vocab_size in {path}: expected {vocab_size} "
                                       f"but got {len(lines)}")
        lines = lines[:vocab_size]
    delim = delimiter.encode() if isinstance(delimiter, str) else bytes(delimiter)
    need = max(key_index, value_index)
    content: dict = {}
    for n, line in enumerate(lines):
        tokens = line.split(delim) if need >= 0 else None
        if need >= 0 and len(tokens) <= need:
            raise InvalidArgumentError(f"Invalid number of columns in {path} line {n} "
                                       f"({line.decode('utf-8', 'replace')}) : expected "
                                       f"{need + 1} got {len(tokens)}")
        k = _column(tokens, key_index, line, n, key_dtype, path, "key")
        v = _column(tokens, value_index, line, n, value_dtype, path, "value")
        if table is not None:
            _insert(table, content, k, v)
        else:
            content.setdefault(k, v)
    return content


def _init_file_executor(session, op):
    table = op.get_attr("table")
    a = {k: op.get_attr(k) for k in ("key_index", "value_index", "vocab_size", "delimiter")}

    def run(filename):
        path = np.asarray(filename, dtype=object).item()
        path = path.decode() if isinstance(path, bytes) else str(path)
        if id(table) in _tables(session):
            return []  # already initialized: TF keeps the table as it is
        content = read_text_table(path, a["key_index"], a["value_index"], table.key_dtype,
                                  table.value_dtype, a["vocab_size"], a["delimiter"], table)
        _store(session, table, content)
        return []
    return run


def _find_executor(session, op):
    table = op.get_attr("table")
    kd, vd = table.key_dtype, table.value_dtype

    def run(keys, default):
        content = _content(session, table, op)
        keys = np.asarray(keys)
        d = _key(np.asarray(default), vd)
        vals = [content.get(_key(k, kd), d) for k in keys.reshape(-1)]
        if vd == dtypes.string:
            out = np.empty(len(vals), object)
            out[:] = vals
        else:
            out = np.asarray(vals, dtype=vd.np)
        return [out.reshape(keys.shape)]
    return run


def _size_executor(session, op):
    table = op.get_attr("table")

    def run():
        return [np.int64(len(_content(session, table, op)))]
    return run


for _t, _f in (("InitializeTableV2", _init_executor),
               ("InitializeTableFromTextFileV2", _init_file_executor),
               ("LookupTableFindV2", _find_executor), ("LookupTableSizeV2", _size_executor)):
    get_op_def(_t).extra.update(executor=_f)
not_differentiable("InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2",
                   "LookupTableSizeV2")
