"""Parsing ops of TF 1.x input pipelines: tf.parse_single_example / tf.parse_example (with
FixedLenFeature and FixedLenSequenceFeature), tf.parse_single_sequence_example,
tf.decode_raw, tf.decode_csv, tf.string_to_number and tf.as_string.

They run in the executor (bytes in; XLA computes no strings), as ops of the graph or of a
tf.data map function. The serialized tf.train.Example protos are decoded by
xlapy.compat.v1.train.example_pb. Dense outputs have static shapes from the feature specs
(and the batch of serialized examples where known); errors are InvalidArgumentError with
TF's messages ("Feature: x (data type: float) is required but could not be found.").

VarLenFeature and SparseFeature give tf.SparseTensor outputs (parsing_sparse.py) in
parse_single_example and parse_example; parse_single_sequence_example supports dense
features only.
"""

from __future__ import annotations

import collections
import re

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, UnimplementedError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape

# ---- feature specs -----------------------------------------------------------------------


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of fixed shape: its values fill `shape` (default_value when an example
    lacks it; without one the feature is required)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of items of shape `shape`: [n] + shape per example (in
    parse_example padded with default_value, or 0 / b"", to the longest of the batch)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature parsed into a tf.SparseTensor of its values."""


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature parsed into a tf.SparseTensor: the values of value_key at the
    positions of index_key in a vector of `size`."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


_KINDS = {"bytes_list": dtypes.string, "float_list": dtypes.float32,
          "int64_list": dtypes.int64}
_TF_NAMES = {dtypes.string: "string", dtypes.float32: "float", dtypes.int64: "int64"}


def _shape_str(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _feature_dtype(dt, key):
    d = dtypes.as_dtype(dt)
    if d not in _TF_NAMES:
        raise InvalidTypeError(f"Feature {key}: value for attr 'Tdense' of {d.name} is not in "
                               "the list of allowed values: float, int64, string")
    return d


def _fixed_shape(shape, key) -> tuple:
    if shape is None:
        raise InvalidArgumentError(f"Missing shape for feature {key}.")
    sh = TensorShape(shape if not isinstance(shape, int) else [shape])
    if not sh.is_fully_defined():
        raise InvalidArgumentError(f"All dimensions of shape for feature {key} need to be "
                                   f"known but received {sh.tf_str()}.")
    return tuple(int(d) for d in sh.as_list())


def _check_sparse(features):
    for key, f in features.items():
        if isinstance(f, (VarLenFeature, SparseFeature)):
            raise UnimplementedError(
                f"Feature {key}: {type(f).__name__} in a SequenceExample is not supported by "
                "xlapy; use FixedLenFeature or FixedLenSequenceFeature(allow_missing=True)")


class _Dense:
    """One dense feature's parsing parameters (the op's attributes)."""

    def __init__(self, key, f, what):
        if not isinstance(f, (FixedLenFeature, FixedLenSequenceFeature)):
            raise InvalidArgumentError(f"Unsupported feature type for {key}: "
                                       f"{type(f).__name__}")
        self.key = key
        self.dtype = _feature_dtype(f.dtype, key)
        self.shape = _fixed_shape(f.shape, key)
        self.sequence = isinstance(f, FixedLenSequenceFeature)
        self.allow_missing = bool(getattr(f, "allow_missing", False))
        default = f.default_value
        self.default = None
        if default is not None:
            if hasattr(default, "op"):
                raise UnimplementedError(f"Feature {key}: default_value must be a Python or "
                                         "NumPy value here, not a tensor")
            arr = _as_dtype(default, self.dtype)
            if self.sequence:
                if arr.size != 1:
                    raise InvalidArgumentError(f"Feature {key}: the default_value of a "
                                               "FixedLenSequenceFeature pads it: a scalar")
                arr = arr.reshape(())
            else:
                n = int(np.prod(self.shape, dtype=np.int64))
                if arr.size != n:
                    raise InvalidArgumentError(f"Cannot reshape a tensor with {arr.size} "
                                               f"elements to shape {list(self.shape)} "
                                               f"(default_value of feature {key})")
                arr = arr.reshape(self.shape)
            self.default = arr


def _as_dtype(v, dt):
    if dt == dtypes.string:
        a = np.asarray(v, dtype=object)
        return np.vectorize(lambda x: x.encode() if isinstance(x, str) else bytes(x),
                            otypes=[object])(a) if a.size else a
    return np.asarray(v, dtype=dt.np)


def _specs(features, what) -> tuple:
    """(dense specs, sparse specs) of the features, each sorted by key."""
    from xlapy.compat.v1.ops.parsing_sparse import sparse_specs
    if not isinstance(features, dict) or not features:
        raise InvalidArgumentError(f"{what}: features must be a non-empty dict of feature "
                                   "specs")
    dense = [_Dense(k, features[k], what) for k in sorted(features)
             if not isinstance(features[k], (VarLenFeature, SparseFeature))]
    return dense, sparse_specs(features, _feature_dtype)


def _attrs(dense: list, sparse: list = ()) -> dict:
    return {"sparse": tuple(sparse), "dense_keys": tuple(d.key for d in dense),
            "dense_types": tuple(d.dtype for d in dense),
            "dense_shapes": tuple(d.shape for d in dense),
            "sequence": tuple(d.sequence for d in dense),
            "allow_missing": tuple(d.allow_missing for d in dense),
            "defaults": tuple(d.default for d in dense)}


def _out_shape(shape, sequence) -> list:
    return ([None] if sequence else []) + list(shape)


def _single_infer(op):
    s = op.inputs[0]
    if s.dtype != dtypes.string:
        raise InvalidTypeError(f"parse_single_example: serialized must be a string tensor, "
                               f"got {s.dtype.name}")
    if s.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"parse_single_example: serialized must be a scalar, got "
                                   f"shape {s.shape.tf_str()}")
    return [(dt, TensorShape(_out_shape(sh, seq))) for dt, sh, seq in zip(
        op.get_attr("dense_types"), op.get_attr("dense_shapes"), op.get_attr("sequence"))] + \
        _sparse_infer(op, False)


def _sparse_infer(op, batched):
    from xlapy.compat.v1.ops.parsing_sparse import sparse_infer
    return sparse_infer(op.get_attr("sparse") or (), batched)


def _batch_infer(op):
    s = op.inputs[0]
    if s.dtype != dtypes.string:
        raise InvalidTypeError(f"parse_example: serialized must be a string tensor, got "
                               f"{s.dtype.name}")
    if s.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"parse_example: serialized must be a vector, got shape "
                                   f"{s.shape.tf_str()}")
    b = s.shape.dims[0] if s.shape.ndims == 1 else None
    return [(dt, TensorShape([b] + _out_shape(sh, seq))) for dt, sh, seq in zip(
        op.get_attr("dense_types"), op.get_attr("dense_shapes"), op.get_attr("sequence"))] + \
        _sparse_infer(op, True)


def _bytes(v) -> bytes:
    v = v.item() if isinstance(v, np.ndarray) else v
    if isinstance(v, str):
        return v.encode()
    return bytes(v)


def _decode_example(data: bytes, cls):
    from xlapy.compat.v1.protowire import DecodeError
    try:
        return cls.FromString(data)
    except DecodeError:
        raise InvalidArgumentError(f"Could not parse example input, value: "
                                   f"'{_printable(data)}'") from None


def _printable(data: bytes, limit: int = 64) -> str:
    from xlapy.compat.v1.protowire import _escape
    s = _escape(data[:limit])
    return s + ("..." if len(data) > limit else "")


def _values(feature, key, dt, name, index):
    """The values of a tf.train.Feature as a 1-D array of dtype dt, or raise if its kind is
    another type (a Feature with no kind has no values)."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return np.zeros([0], dt.np)
    if _KINDS[kind] != dt:
        raise InvalidArgumentError(
            f"Name: {name}, Key: {key}, Index: {index}.  Data types don't match. Data type: "
            f"{_TF_NAMES[_KINDS[kind]]} but expected type: {_TF_NAMES[dt]}")
    vals = getattr(feature, kind).value._values
    if dt == dtypes.string:
        out = np.empty([len(vals)], object)
        out[:] = vals
        return out
    return np.asarray(vals, dt.np)


def _dense_value(features, i, key, dt, shape, seq, allow_missing, default, name, index,
                 batched):
    """One example's value of one dense feature ([n] + shape for a sequence)."""
    f = features.get(key)
    if f is None:
        if default is not None and not seq:
            return default
        if seq and (allow_missing or default is not None):
            return np.zeros([0] + list(shape), dt.np) if dt != dtypes.string else \
                np.full([0] + list(shape), b"", object)
        where = f"Name: {name}, " if batched else ""
        raise InvalidArgumentError(f"{where}Feature: {key} (data type: {_TF_NAMES[dt]}) is "
                                   "required but could not be found.")
    vals = _values(f, key, dt, name, index)
    n = int(np.prod(shape, dtype=np.int64))
    if seq:
        if n == 0 or len(vals) % n:
            raise InvalidArgumentError(
                f"Name: {name}, Key: {key}, Index: {index}.  Number of {_TF_NAMES[dt]} values "
                f"is not a multiple of stride length. Saw {len(vals)} values but output shape "
                f"is: {_shape_str([None] + list(shape))}")
        return vals.reshape([len(vals) // n] + list(shape))
    if len(vals) != n:
        raise InvalidArgumentError(
            f"Name: {name}, Key: {key}, Index: {index}.  Number of {_TF_NAMES[dt]} values != "
            f"expected.  Values size: {len(vals)} but output shape: {_shape_str(shape)}")
    return vals.reshape(shape)


def _parse(serialized_list, names, attrs, batched):
    from xlapy.compat.v1.train.example_pb import Example
    keys, types, shapes = attrs["dense_keys"], attrs["dense_types"], attrs["dense_shapes"]
    seqs, missing, defaults = attrs["sequence"], attrs["allow_missing"], attrs["defaults"]
    per_key = [[] for _ in keys]
    examples = []
    for index, data in enumerate(serialized_list):
        ex = _decode_example(_bytes(data), Example)
        feats = ex.features.feature._entries if ex.HasField("features") else {}
        examples.append(feats)
        name = names[index] if names is not None else "<unknown>"
        for j, key in enumerate(keys):
            per_key[j].append(_dense_value(feats, j, key, types[j], shapes[j], seqs[j],
                                           missing[j], defaults[j], name, index, batched))
    out = []
    for j, vals in enumerate(per_key):
        dt = types[j]
        if not batched:
            out.append(vals[0])
            continue
        if not vals:
            out.append(np.zeros([0] + _out_shape(shapes[j], seqs[j])
                                if not seqs[j] else [0, 0] + list(shapes[j]),
                                dt.np if dt != dtypes.string else object))
            continue
        if seqs[j]:
            longest = max(v.shape[0] for v in vals)
            pad = defaults[j] if defaults[j] is not None else (
                b"" if dt == dtypes.string else np.zeros((), dt.np))
            arr = np.full([len(vals), longest] + list(shapes[j]), pad,
                          dtype=object if dt == dtypes.string else dt.np)
            for i, v in enumerate(vals):
                arr[i, :v.shape[0]] = v
            out.append(arr)
        else:
            out.append(np.stack(vals).astype(object if dt == dtypes.string else dt.np,
                                             copy=False))
    if attrs.get("sparse"):
        from xlapy.compat.v1.ops.parsing_sparse import sparse_values
        out += sparse_values(examples, attrs["sparse"], names, batched, _values)
    return out[0] if len(out) == 1 else tuple(out)


_ATTRS = ("sparse", "dense_keys", "dense_types", "dense_shapes", "sequence", "allow_missing",
          "defaults")


@register_op("ParseSingleExample", infer=_single_infer, attrs=_ATTRS, lowering=None)
def _parse_single_example(m, serialized, **attrs):
    return _parse([serialized], None, attrs, batched=False)


@register_op("ParseExample", infer=_batch_infer, attrs=_ATTRS + ("example_names",),
             lowering=None)
def _parse_example(m, serialized, example_names=None, **attrs):
    s = np.asarray(serialized, dtype=object)
    if s.ndim != 1:
        raise InvalidArgumentError(f"Expected serialized to be a vector, got shape: "
                                   f"{list(s.shape)}")
    if example_names is not None and len(example_names) != s.shape[0]:
        raise InvalidArgumentError(f"Expected len(names) == len(serialized), but got: "
                                   f"{len(example_names)} vs. {s.shape[0]}")
    return _parse(list(s), example_names, attrs, batched=True)


def _outputs(dense, sparse, out) -> dict:
    from xlapy.compat.v1.ops.parsing_sparse import sparse_outputs
    if not isinstance(out, tuple):
        out = (out,)
    res = {d.key: t for d, t in zip(dense, out)}
    res.update(sparse_outputs(sparse, out[len(dense):]))
    return res


def parse_single_example(serialized, features, name=None, example_names=None):
    """One serialized tf.train.Example (a string scalar) parsed into a dict of dense tensors,
    one per key of `features` (FixedLenFeature: its shape; FixedLenSequenceFeature:
    [n] + shape; VarLenFeature, SparseFeature: a tf.SparseTensor)."""
    dense, sparse = _specs(features, "parse_single_example")
    s = tensor(serialized, dtype=dtypes.string)
    return _outputs(dense, sparse, make("ParseSingleExample", [s], _attrs(dense, sparse),
                                        name=name or "ParseSingleExample"))


def parse_example(serialized, features, name=None, example_names=None):
    """A batch of serialized tf.train.Examples (a string vector) parsed into a dict of dense
    tensors: [batch] + shape for a FixedLenFeature, [batch, longest] + shape for a
    FixedLenSequenceFeature (padded with its default_value, else 0 or b""), a tf.SparseTensor
    for a VarLenFeature or SparseFeature (indices [N, 2]: example, position)."""
    dense, sparse = _specs(features, "parse_example")
    for d in dense:
        if d.sequence and not d.allow_missing:
            raise InvalidArgumentError(f"Unsupported: FixedLenSequenceFeature requires "
                                       f"allow_missing to be True. (feature {d.key})")
    s = tensor(serialized, dtype=dtypes.string)
    attrs = _attrs(dense, sparse)
    if example_names is not None:
        attrs["example_names"] = tuple(
            n.decode() if isinstance(n, bytes) else str(n)
            for n in np.reshape(np.asarray(example_names, dtype=object), [-1]))
    return _outputs(dense, sparse, make("ParseExample", [s], attrs,
                                        name=name or "ParseExample"))


# ---- SequenceExample ---------------------------------------------------------------------

def _seq_infer(op):
    s = op.inputs[0]
    if s.dtype != dtypes.string or s.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"parse_single_sequence_example: serialized must be a "
                                   f"string scalar, got {s.dtype.name} {s.shape.tf_str()}")
    out = []
    for dt, sh, seq in zip(op.get_attr("dense_types"), op.get_attr("dense_shapes"),
                           op.get_attr("sequence")):
        out.append((dt, TensorShape(_out_shape(sh, seq))))
    for dt, sh in zip(op.get_attr("feature_list_types"), op.get_attr("feature_list_shapes")):
        out.append((dt, TensorShape([None] + list(sh))))
    return out


@register_op("ParseSingleSequenceExample", infer=_seq_infer, lowering=None,
             attrs=_ATTRS + ("feature_list_keys", "feature_list_types", "feature_list_shapes",
                             "feature_list_missing", "feature_list_defaults", "example_name"))
def _parse_sequence_example(m, serialized, feature_list_keys=(), feature_list_types=(),
                            feature_list_shapes=(), feature_list_missing=(),
                            feature_list_defaults=(), example_name="<unknown>", **attrs):
    from xlapy.compat.v1.train.example_pb import SequenceExample
    ex = _decode_example(_bytes(serialized), SequenceExample)
    ctx = ex.context.feature._entries if ex.HasField("context") else {}
    out = []
    for j, key in enumerate(attrs["dense_keys"]):
        out.append(_dense_value(ctx, j, key, attrs["dense_types"][j], attrs["dense_shapes"][j],
                                attrs["sequence"][j], attrs["allow_missing"][j],
                                attrs["defaults"][j], example_name, 0, batched=False))
    lists = ex.feature_lists.feature_list._entries if ex.HasField("feature_lists") else {}
    for key, dt, shape, allow, default in zip(feature_list_keys, feature_list_types,
                                              feature_list_shapes, feature_list_missing,
                                              feature_list_defaults):
        fl = lists.get(key)
        if fl is None:
            if not allow and default is None:
                raise InvalidArgumentError(
                    f"Name: {example_name}, Feature list '{key}' is required but could not "
                    "be found.  Did you mean to include it in feature_list_dense_missing_"
                    "assumed_empty or feature_list_dense_defaults?")
            out.append(np.zeros([0] + list(shape), dt.np if dt != dtypes.string else object))
            continue
        n = int(np.prod(shape, dtype=np.int64))
        rows = []
        for t, feature in enumerate(fl.feature):
            vals = _values(feature, key, dt, example_name, t)
            if len(vals) != n:
                raise InvalidArgumentError(
                    f"Name: {example_name}, Key: {key}, Index: {t}.  Number of "
                    f"{_TF_NAMES[dt]} values != expected.  values size: {len(vals)} but "
                    f"output shape: {_shape_str(shape)}")
            rows.append(vals.reshape(shape))
        out.append(np.stack(rows).astype(object if dt == dtypes.string else dt.np, copy=False)
                   if rows else np.zeros([0] + list(shape), dt.np if dt != dtypes.string
                                         else object))
    return out[0] if len(out) == 1 else tuple(out)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """One serialized tf.train.SequenceExample parsed into (context dict, sequence dict):
    context features as parse_single_example's, sequence features ([steps] + shape) from
    its feature_lists (FixedLenSequenceFeature; allow_missing: an absent list is empty)."""
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    if not context_features and not sequence_features:
        raise InvalidArgumentError("Missing features.")
    _check_sparse(context_features)
    _check_sparse(sequence_features)
    dense = [_Dense(k, context_features[k], "parse_single_sequence_example")
             for k in sorted(context_features)]
    lists = [_Dense(k, sequence_features[k], "parse_single_sequence_example")
             for k in sorted(sequence_features)]
    attrs = _attrs(dense)
    attrs.update(feature_list_keys=tuple(d.key for d in lists),
                 feature_list_types=tuple(d.dtype for d in lists),
                 feature_list_shapes=tuple(d.shape for d in lists),
                 feature_list_missing=tuple(d.allow_missing for d in lists),
                 feature_list_defaults=tuple(d.default for d in lists),
                 example_name=str(example_name) if example_name is not None else "<unknown>")
    s = tensor(serialized, dtype=dtypes.string)
    out = make("ParseSingleSequenceExample", [s], attrs,
               name=name or "ParseSingleSequenceExample")
    if not isinstance(out, tuple):
        out = (out,)
    return ({d.key: t for d, t in zip(dense, out)},
            {d.key: t for d, t in zip(lists, out[len(dense):])})


# ---- decode_raw ----------------------------------------------------------------------------

def _decode_raw_infer(op):
    x = op.inputs[0]
    if x.dtype != dtypes.string:
        raise InvalidTypeError(f"decode_raw: bytes must be a string tensor, got {x.dtype.name}")
    return [(op.get_attr("out_type"), x.shape.concatenate(TensorShape([None])))]


@register_op("DecodeRaw", infer=_decode_raw_infer, attrs=("out_type", "little_endian"),
             lowering=None)
def _decode_raw(m, data, out_type, little_endian=True):
    a = np.asarray(data, dtype=object)
    dt = np.dtype(out_type.np).newbyteorder("<" if little_endian else ">")
    size = dt.itemsize
    flat = [_bytes(b) for b in a.reshape(-1)]
    if not flat:
        return np.zeros(a.shape + (0,), out_type.np)
    n = len(flat[0])
    if n % size:
        raise InvalidArgumentError(f"Input to DecodeRaw has length {n} that is not a multiple "
                                   f"of {size}, the size of {_np_tf_name(out_type)}")
    for i, b in enumerate(flat):
        if len(b) != n:
            raise InvalidArgumentError(f"DecodeRaw requires input strings to all be the same "
                                       f"size, but element {i} has size {len(b)} != {n}")
    out = np.frombuffer(b"".join(flat), dtype=dt).astype(out_type.np)
    return out.reshape(a.shape + (n // size,))


def _np_tf_name(dt) -> str:
    return {"float32": "float", "float64": "double", "float16": "half"}.get(dt.name, dt.name)


_RAW_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
              dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.bool)


def decode_raw(bytes=None, out_type=None, little_endian=True, name=None, input_bytes=None):
    """The bytes of each string reinterpreted as a vector of out_type: shape
    bytes.shape + [length / size of out_type] (every string must have the same length)."""
    data = bytes if bytes is not None else input_bytes
    if data is None or out_type is None:
        raise InvalidArgumentError("decode_raw needs bytes and out_type")
    dt = dtypes.as_dtype(out_type)
    if dt not in _RAW_TYPES:
        raise InvalidTypeError(f"Value for attr 'out_type' of {dt.name} is not in the list of "
                               "allowed values: half, float, double, int32, uint16, uint8, "
                               "int16, int8, int64, bool")
    return make("DecodeRaw", [tensor(data, dtype=dtypes.string)],
                {"out_type": dt, "little_endian": bool(little_endian)},
                name=name or "DecodeRaw")



# ---- string_to_number / as_string ----------------------------------------------------------

_INT_RE = re.compile(r"^\s*[+-]?\d+\s*$")
_FLOAT_RE = re.compile(r"^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|"
                       r"nan)\s*$", re.IGNORECASE)


def _to_number(s: bytes, dt):
    """The number a string holds, as TF's safe_strto* read it, or None."""
    try:
        text = s.decode("ascii")
    except UnicodeDecodeError:
        return None
    if dt.is_integer:
        if not _INT_RE.match(text):
            return None
        v = int(text)
        info = np.iinfo(dt.np)
        return v if info.min <= v <= info.max else None
    if not _FLOAT_RE.match(text):
        return None
    return float(text)


def _stn_infer(op):
    x = op.inputs[0]
    if x.dtype != dtypes.string:
        raise InvalidTypeError(f"string_to_number: string_tensor must be a string tensor, got "
                               f"{x.dtype.name}")
    return [(op.get_attr("out_type"), x.shape)]


@register_op("StringToNumber", infer=_stn_infer, attrs=("out_type",), lowering=None)
def _string_to_number(m, x, out_type):
    a = np.asarray(x, dtype=object)
    out = np.empty(a.shape, out_type.np)
    flat = out.reshape(-1)
    for i, s in enumerate(a.reshape(-1)):
        v = _to_number(_bytes(s), out_type)
        if v is None:
            raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: "
                                       f"{_bytes(s).decode('utf-8', 'replace')}")
        flat[i] = v
    return out


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    """The numbers the strings hold (out_type float32, float64, int32 or int64)."""
    dt = dtypes.as_dtype(out_type)
    if dt not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"Value for attr 'out_type' of {dt.name} is not in the list of "
                               "allowed values: float, double, int32, int64")
    return make("StringToNumber", [tensor(string_tensor, dtype=dtypes.string)],
                {"out_type": dt}, name=name or "StringToNumber")


def _as_string_infer(op):
    x = op.inputs[0]
    if x.dtype == dtypes.string:
        raise InvalidTypeError("Value for attr 'T' of string is not in the list of allowed "
                               "values: int8, int16, int32, int64, float, double, bool")
    return [(dtypes.string, x.shape)]


@register_op("AsString", infer=_as_string_infer, attrs=("fmt",), lowering=None)
def _as_string(m, x, fmt):
    a = np.asarray(x)
    out = np.empty(a.shape, object)
    flat = out.reshape(-1)
    if a.dtype == np.bool_:
        for i, v in enumerate(a.reshape(-1)):
            flat[i] = b"true" if v else b"false"
        return out
    is_float = a.dtype.kind == "f"
    for i, v in enumerate(a.reshape(-1)):
        if is_float and not np.isfinite(v):
            s = "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
            spec = re.match(r"%([-+ 0#]*)(\d*)", fmt)
            width = int(spec.group(2) or 0)
            s = ("+" + s if "+" in spec.group(1) and v > 0 else s)
            s = s.ljust(width) if "-" in spec.group(1) else s.rjust(width)
            flat[i] = s.encode()
        else:
            flat[i] = (fmt % (float(v) if is_float else int(v))).encode()
    return out


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,
              fill="", name=None):
    """Each element formatted as a string, as TF's AsString (printf-style: %d for integers,
    %f / %e (scientific) / %g (shortest) with precision for floats, width with fill; bools as
    "true" / "false")."""
    x = tensor(input)
    dt = x.dtype
    if scientific and shortest:
        raise InvalidArgumentError("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise InvalidArgumentError(f"Fill string must be one or fewer characters: {fill}")
    if fill and fill not in " 0-+#":
        raise InvalidArgumentError(f"Fill argument not supported: \"{fill}\"")
    fmt = "%" + fill + (str(int(width)) if width > -1 else "")
    if dt.is_floating:
        if precision > -1:
            fmt += f".{int(precision)}"
        fmt += "g" if shortest else ("e" if scientific else "f")
    elif dt.is_integer:
        if precision > -1 or scientific or shortest:
            raise InvalidArgumentError(f"Cannot specify precision, scientific or shortest for "
                                       f"{dt.name}")
        fmt += "d"
    elif dt != dtypes.bool:
        raise InvalidTypeError(f"Value for attr 'T' of {dt.name} is not in the list of allowed "
                               "values: int8, int16, int32, int64, float, double, bool")
    return make("AsString", [x], {"fmt": fmt}, name=name or "AsString")


# ---- decode_csv ----------------------------------------------------------------------------

_CSV_TYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string)


def _split_csv(line: bytes, delim: bytes, quote: bool, record: int) -> list:
    if not quote:
        return line.split(delim)
    fields, i, n = [], 0, len(line)
    while True:
        if i < n and line[i:i + 1] == b'"':
            buf = bytearray()
            i += 1
            while True:
                if i >= n:
                    raise InvalidArgumentError(f"Quoted field has to end with quote followed "
                                               f"by delim or end (record {record})")
                c = line[i:i + 1]
                if c == b'"':
                    if line[i + 1:i + 2] == b'"':
                        buf += b'"'
                        i += 2
                        continue
                    i += 1
                    break
                buf += c
                i += 1
            if i < n and line[i:i + 1] != delim:
                raise InvalidArgumentError(f"Quoted field has to end with quote followed by "
                                           f"delim or end (record {record})")
            fields.append(bytes(buf))
        else:
            j = line.find(delim, i)
            j = n if j < 0 else j
            field = line[i:j]
            if b'"' in field:
                raise InvalidArgumentError(f"Unquoted fields cannot have quotes/CRLFs inside "
                                           f"(record {record})")
            fields.append(field)
            i = j
        if i >= n:
            return fields
        i += len(delim)  # past the delimiter; a trailing one ends with an empty field
        if i >= n:
            fields.append(b"")
            return fields


def _csv_infer(op):
    x = op.inputs[0]
    if x.dtype != dtypes.string:
        raise InvalidTypeError(f"decode_csv: records must be a string tensor, got "
                               f"{x.dtype.name}")
    return [(dt, x.shape) for dt in op.get_attr("out_types")]


@register_op("DecodeCSV", infer=_csv_infer, lowering=None,
             attrs=("out_types", "defaults", "field_delim", "use_quote_delim", "na_value",
                    "select_cols"))
def _decode_csv(m, records, out_types, defaults, field_delim=",", use_quote_delim=True,
                na_value="", select_cols=None):
    a = np.asarray(records, dtype=object)
    flat = [_bytes(r) for r in a.reshape(-1)]
    delim = field_delim.encode()
    na = na_value.encode()
    nout = len(out_types)
    cols = list(select_cols) if select_cols is not None else None
    outs = [np.empty(len(flat), object if dt == dtypes.string else dt.np) for dt in out_types]
    for r, line in enumerate(flat):
        fields = _split_csv(line, delim, use_quote_delim, r)
        if cols is not None:
            if len(fields) <= cols[-1]:
                raise InvalidArgumentError(f"Expect {cols[-1] + 1} fields but have "
                                           f"{len(fields)} in record {r}")
            fields = [fields[c] for c in cols]
        elif len(fields) != nout:
            raise InvalidArgumentError(f"Expect {nout} fields but have {len(fields)} in record "
                                       f"{r}")
        for k, (field, dt) in enumerate(zip(fields, out_types)):
            if field == b"" or field == na:
                if defaults[k] is None:
                    raise InvalidArgumentError(f"Field {k} is required but missing in record "
                                               f"{r}!")
                outs[k][r] = defaults[k]
                continue
            if dt == dtypes.string:
                outs[k][r] = field
                continue
            v = _to_number(field, dt)
            if v is None:
                what = {dtypes.int32: "int32", dtypes.int64: "int64", dtypes.float32: "float",
                        dtypes.float64: "double"}[dt]
                raise InvalidArgumentError(f"Field {k} in record {r} is not a valid {what}: "
                                           f"{field.decode('utf-8', 'replace')}")
            outs[k][r] = v
    return tuple(o.reshape(a.shape) for o in outs) if nout > 1 else outs[0].reshape(a.shape)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Each record (a CSV line) split into its fields: one tensor per column, of
    record_defaults' types (int32, int64, float32, float64, string), records' shape. A
    default is a one-element value used for an empty (or na_value) field; an empty one makes
    the column required."""
    if not record_defaults:
        raise InvalidArgumentError("record_defaults must not be empty")
    if len(field_delim) != 1:
        raise InvalidArgumentError("field_delim should be only 1 char")
    if select_cols is not None:
        cols = [int(c) for c in select_cols]
        if any(c < 0 for c in cols):
            raise InvalidArgumentError("select_cols contains negative values")
        if any(b <= a for a, b in zip(cols, cols[1:])):
            raise InvalidArgumentError("select_cols is not strictly increasing.")
        if len(cols) != len(record_defaults):
            raise InvalidArgumentError("Length of select_cols and record_defaults do not "
                                       "match.")
        select_cols = tuple(cols)
    types, defaults = [], []
    for i, d in enumerate(record_defaults):
        if hasattr(d, "op"):
            from xlapy.compat.v1.ops._common import constant_value
            dt, v = d.dtype, constant_value(d)
            if v is None:
                raise UnimplementedError("decode_csv: record_defaults must be known when the "
                                         "graph is built (Python values or constants)")
        else:  # as convert_to_tensor: [] is an empty float32 (a required float column)
            dt, v = dtypes.dtype_of_value(d), d
        if dt not in _CSV_TYPES:
            raise InvalidTypeError(f"record_defaults[{i}]: type {dt.name} is not in the list "
                                   "of allowed values: float, double, int32, int64, string")
        v = np.reshape(np.asarray(v, dtype=object if dt == dtypes.string else dt.np), [-1])
        if v.size > 1:
            raise InvalidArgumentError(f"record_defaults[{i}] must have at most one element")
        types.append(dt)
        defaults.append(None if v.size == 0 else (
            _bytes(v[0]) if dt == dtypes.string else v[0]))
    attrs = {"out_types": tuple(types), "defaults": tuple(defaults),
             "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
             "na_value": na_value, "select_cols": select_cols}
    out = make("DecodeCSV", [tensor(records, dtype=dtypes.string)], attrs,
               name=name or "DecodeCSV")
    return list(out) if isinstance(out, tuple) else [out]


not_differentiable("ParseSingleExample", "ParseExample", "ParseSingleSequenceExample",
                   "DecodeRaw", "StringToNumber", "AsString", "DecodeCSV")
