"""String transformations of TF 1.x input pipelines: tf.string_join / tf.strings.join,
tf.reduce_join, tf.substr, tf.strings.length, tf.regex_replace, tf.strings.regex_full_match,
tf.strings.strip, tf.strings.lower / upper, tf.strings.to_number and
tf.strings.to_hash_bucket_fast.

Strings are object arrays of bytes, so every op runs in the executor (XLA has no string
type; clustering keeps string tensors out of clusters). Regular expressions are RE2's in
TF; here they are Python's `re`, which agrees on the common syntax (classes, groups,
alternation, repetition, anchors, \\d \\w \\s); RE2-only syntax (\\pN, \\C, possessive-free
semantics) may differ. Patterns are matched on the UTF-8 text (a "." is one character),
as RE2 does; a rewrite's \\0 is the whole match, \\1..\\9 the groups.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, broadcast_shape


def _b(v) -> bytes:
    v = v.item() if isinstance(v, np.ndarray) else v
    return v.encode() if isinstance(v, str) else bytes(v)


def _objects(shape, values) -> np.ndarray:
    out = np.empty(len(values), object)
    out[:] = values
    return out.reshape(shape)


def _strings(x) -> np.ndarray:
    a = np.asarray(x, dtype=object)
    return _objects(a.shape, [_b(v) for v in a.reshape(-1)])


def _text(s: bytes) -> str:
    return s.decode("utf-8", "surrogateescape")


def _bytes_of(t: str) -> bytes:
    return t.encode("utf-8", "surrogateescape")


def _check_string(op, *ts):
    for t in ts:
        if t.dtype != dtypes.string:
            raise InvalidTypeError(f"{op.type}: expected a string tensor, got {t.dtype.name}")


def _string_in(x, what="input"):
    t = tensor(x, dtype=dtypes.string) if not hasattr(x, "op") else x
    if t.dtype != dtypes.string:
        raise InvalidTypeError(f"{what} must be a string tensor, got {t.dtype.name}")
    return t


def _unit(unit):
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return unit


# ---- StringJoin ------------------------------------------------------------------------------

def _join_infer(op):
    _check_string(op, *op.inputs)
    shape = TensorShape([])
    for t in op.inputs:
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
        elif not shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(f"Input shapes do not match: {shape} vs. {t.shape}")
        else:
            shape = shape.merge_with(t.shape)
    return [(dtypes.string, shape)]


@register_op("StringJoin", infer=_join_infer, attrs=("separator",), lowering=None)
def _string_join(m, *inputs, separator=""):
    """The inputs joined elementwise (scalars broadcast; the others share one shape)."""
    arrays = [_strings(x) for x in inputs]
    shape = None
    for a in arrays:
        if a.ndim == 0:
            continue
        if shape is None:
            shape = a.shape
        elif a.shape != shape:
            raise InvalidArgumentError(f"Input shapes do not match: {list(shape)} vs. "
                                       f"{list(a.shape)}")
    shape = () if shape is None else shape
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    cols = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    n = int(np.prod(shape, dtype=np.int64))
    return _objects(shape, [sep.join(c[i] for c in cols) for i in range(n)])


def string_join(inputs, separator="", name=None):
    """tf.string_join: the strings of `inputs` (a list of string tensors of one shape, or
    scalars) joined elementwise with `separator`."""
    ts = [_string_in(x, "inputs") for x in inputs]
    if not ts:
        raise InvalidArgumentError("string_join needs at least one input")
    return make("StringJoin", ts, {"separator": separator}, name=name or "StringJoin")


# ---- ReduceJoin ------------------------------------------------------------------------------

def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    out = []
    for a in np.reshape(np.asarray(axis), [-1]):
        a = int(a)
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(f"Invalid reduction dimension {a} for input with "
                                       f"{ndim} dimensions.")
        a %= ndim
        if a in out:
            raise InvalidArgumentError(f"Duplicate reduction dimension {a}")
        out.append(a)
    return tuple(sorted(out))


def _reduce_join_infer(op):
    _check_string(op, op.inputs[0])
    x = op.inputs[0]
    axes, keep = op.get_attr("axes"), op.get_attr("keep_dims")
    if x.shape.ndims is None:
        return [(dtypes.string, TensorShape(None))]
    axes = _axes(axes, x.shape.ndims)
    dims = [1 if i in axes else d for i, d in enumerate(x.shape.dims)
            if keep or i not in axes]
    return [(dtypes.string, TensorShape(dims))]


@register_op("ReduceJoin", infer=_reduce_join_infer, attrs=("axes", "keep_dims", "separator"),
             lowering=None)
def _reduce_join(m, x, axes=None, keep_dims=False, separator=""):
    """The strings joined along `axes` (all of them when None), in row-major order."""
    a = _strings(x)
    ax = _axes(axes, a.ndim)
    rest = [i for i in range(a.ndim) if i not in ax]
    t = np.transpose(a, rest + list(ax))
    kept = [a.shape[i] for i in rest]
    n = int(np.prod([a.shape[i] for i in ax], dtype=np.int64))
    flat = t.reshape([int(np.prod(kept, dtype=np.int64)), n])
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    out = _objects(kept, [sep.join(row) for row in flat])
    if keep_dims:
        out = out.reshape([1 if i in ax else d for i, d in enumerate(a.shape)])
    return out


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """tf.reduce_join: the strings joined along `axis` (every axis when None) with
    `separator`; keep_dims keeps the reduced axes with size 1."""
    x = _string_in(inputs, "inputs")
    if axis is None:
        axis = reduction_indices
    if hasattr(axis, "op"):
        v = constant_value(axis)
        if v is None:
            raise InvalidArgumentError("reduce_join: axis must be known when the graph is built")
        axis = v
    axes = None if axis is None else tuple(int(a) for a in np.reshape(np.asarray(axis), [-1]))
    if axes is not None and x.shape.ndims is not None:
        _axes(axes, x.shape.ndims)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return make("ReduceJoin", [x], {"axes": axes, "keep_dims": keep, "separator": separator},
                name=name or "ReduceJoin")


# ---- Substr / StringLength -------------------------------------------------------------------

def _substr_infer(op):
    x, pos, ln = op.inputs
    _check_string(op, x)
    if not (pos.dtype in (dtypes.int32, dtypes.int64) and ln.dtype == pos.dtype):
        raise InvalidTypeError(f"Substr: pos and len must both be int32 or int64, got "
                               f"{pos.dtype.name} and {ln.dtype.name}")
    shape = broadcast_shape(broadcast_shape(x.shape, pos.shape), ln.shape)
    return [(dtypes.string, shape)]


def _chars(s: bytes, unit):
    return s if unit == "BYTE" else _text(s)


@register_op("Substr", infer=_substr_infer, attrs=("unit",), lowering=None)
def _substr(m, x, pos, length, unit="BYTE"):
    """The substring of `length` units from `pos` (negative: from the end) of each string;
    a length past the end stops at the end."""
    a = _strings(x)
    shape = np.broadcast_shapes(a.shape, np.shape(pos), np.shape(length))
    xs = np.broadcast_to(a, shape).reshape(-1)
    ps = np.broadcast_to(np.asarray(pos), shape).reshape(-1)
    ls = np.broadcast_to(np.asarray(length), shape).reshape(-1)
    out = []
    for i, (s, p, n) in enumerate(zip(xs, ps, ls)):
        c = _chars(s, unit)
        p, n = int(p), int(n)
        if abs(p) > len(c):
            raise InvalidArgumentError(f"pos {p} out of range for string b'{_text(s)}' at "
                                       f"index {i}")
        p = p + len(c) if p < 0 else p
        sub = c[p:] if n < 0 else c[p:p + n]
        out.append(sub if unit == "BYTE" else _bytes_of(sub))
    return _objects(shape, out)


def substr(input, pos, len, name=None, unit="BYTE"):
    """tf.substr / tf.strings.substr: substrings of `len` units (bytes, or characters with
    unit="UTF8_CHAR") from `pos`; pos and len broadcast against input."""
    x = _string_in(input)
    p = tensor(pos)
    n = tensor(len, dtype=p.dtype) if not hasattr(len, "op") else len
    return make("Substr", [x, p, n], {"unit": _unit(unit)}, name=name or "Substr")


def _length_infer(op):
    _check_string(op, op.inputs[0])
    return [(dtypes.int32, op.inputs[0].shape)]


@register_op("StringLength", infer=_length_infer, attrs=("unit",), lowering=None)
def _string_length(m, x, unit="BYTE"):
    a = _strings(x)
    return np.asarray([len(_chars(s, unit)) for s in a.reshape(-1)],
                      np.int32).reshape(a.shape)


def length(input, name=None, unit="BYTE"):
    """tf.strings.length: each string's length in bytes (unit="UTF8_CHAR": characters)."""
    return make("StringLength", [_string_in(input)], {"unit": _unit(unit)},
                name=name or "StringLength")


# ---- regular expressions -----------------------------------------------------------------------

def _regex(pattern: bytes):
    try:
        return re.compile(_text(_b(pattern)))
    except re.error as e:
        raise InvalidArgumentError(f"Invalid pattern: {_text(_b(pattern))}, error: {e}") \
            from None


def _rewrite(rewrite: bytes):
    """RE2's rewrite string as a function of a match: \\0 the whole match, \\1..\\9 the
    groups, \\\\ a backslash; anything else as it is."""
    parts = re.split(r"(\\[0-9\\])", _text(_b(rewrite)))

    def expand(mt):
        out = []
        for k, p in enumerate(parts):
            if k % 2:  # a captured escape
                out.append("\\" if p[1] == "\\" else (mt.group(int(p[1])) or ""))
            else:
                out.append(p)
        return "".join(out)
    return expand


def _regex_infer(op):
    _check_string(op, *op.inputs)
    for t in op.inputs[1:]:
        if t.shape.ndims not in (None, 0):
            raise InvalidArgumentError(f"{op.type}: pattern must be a scalar, got shape "
                                       f"{t.shape}")
    return [(dtypes.bool if op.type == "RegexFullMatch" else dtypes.string,
             op.inputs[0].shape)]


@register_op("RegexReplace", infer=_regex_infer, attrs=("replace_global",), lowering=None)
def _regex_replace(m, x, pattern, rewrite, replace_global=True):
    """Each match of `pattern` (the first, unless replace_global) replaced by `rewrite`."""
    a = _strings(x)
    rx, rw = _regex(pattern), _rewrite(rewrite)
    used = [int(d) for d in re.findall(r"(?<!\\)\\([0-9])", _text(_b(rewrite)))]
    if used and max(used) > rx.groups:
        raise InvalidArgumentError(f"Rewrite schema error: '\\{max(used)}' not allowed in "
                                   f"rewrite '{_text(_b(rewrite))}': the pattern has "
                                   f"{rx.groups} groups")
    count = 0 if replace_global else 1
    return _objects(a.shape, [_bytes_of(rx.sub(rw, _text(s), count=count))
                              for s in a.reshape(-1)])


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """tf.regex_replace / tf.strings.regex_replace (RE2 syntax, read by Python's re)."""
    return make("RegexReplace", [_string_in(input), _string_in(pattern, "pattern"),
                                 _string_in(rewrite, "rewrite")],
                {"replace_global": bool(replace_global)}, name=name or "RegexReplace")


@register_op("RegexFullMatch", infer=_regex_infer, lowering=None)
def _regex_full_match(m, x, pattern):
    a = _strings(x)
    rx = _regex(pattern)
    return np.asarray([rx.fullmatch(_text(s)) is not None for s in a.reshape(-1)],
                      bool).reshape(a.shape)


def regex_full_match(input, pattern, name=None):
    """tf.strings.regex_full_match: whether each whole string matches `pattern`."""
    return make("RegexFullMatch", [_string_in(input), _string_in(pattern, "pattern")],
                name=name or "RegexFullMatch")


# ---- strip / lower / upper -----------------------------------------------------------------------

def _same_string(op):
    _check_string(op, op.inputs[0])
    return [(dtypes.string, op.inputs[0].shape)]


_SPACE = b" \t\n\v\f\r"


@register_op("StringStrip", infer=_same_string, lowering=None)
def _string_strip(m, x):
    """Leading and trailing (ASCII) whitespace removed."""
    a = _strings(x)
    return _objects(a.shape, [s.strip(_SPACE) for s in a.reshape(-1)])


def strip(input, name=None):
    """tf.strings.strip: each string without its leading and trailing whitespace."""
    return make("StringStrip", [_string_in(input)], name=name or "StringStrip")


def _case(upper: bool):
    def kernel(m, x, encoding=""):
        a = _strings(x)
        if encoding:  # "utf-8": every cased character
            f = (lambda s: _bytes_of(_text(s).upper())) if upper else \
                (lambda s: _bytes_of(_text(s).lower()))
        else:         # "": ASCII letters only, as TF's default
            f = bytes.upper if upper else bytes.lower
        return _objects(a.shape, [f(s) for s in a.reshape(-1)])
    kernel.__doc__ = f"Each string in {'upper' if upper else 'lower'} case (encoding '': " \
                     "ASCII letters; 'utf-8': every cased character)."
    return kernel


register_op("StringLower", infer=_same_string, attrs=("encoding",), lowering=None)(_case(False))
register_op("StringUpper", infer=_same_string, attrs=("encoding",), lowering=None)(_case(True))


def _encoding(encoding):
    e = (encoding or "").lower().replace("_", "-")
    if e not in ("", "utf-8", "utf8"):
        raise InvalidArgumentError(f"encoding must be '' or 'utf-8', got {encoding!r}")
    return "utf-8" if e else ""


def lower(input, encoding="", name=None):
    """tf.strings.lower: ASCII letters lowered (encoding="utf-8": every character)."""
    return make("StringLower", [_string_in(input)], {"encoding": _encoding(encoding)},
                name=name or "StringLower")


def upper(input, encoding="", name=None):
    """tf.strings.upper: ASCII letters raised (encoding="utf-8": every character)."""
    return make("StringUpper", [_string_in(input)], {"encoding": _encoding(encoding)},
                name=name or "StringUpper")


# ---- to_number / to_hash_bucket_fast -----------------------------------------------------------

def to_number(input, out_type=dtypes.float32, name=None):
    """tf.strings.to_number: the numbers the strings hold (float32, float64, int32, int64)."""
    from xlapy.compat.v1.ops.parsing_ops import string_to_number
    return string_to_number(input, out_type=out_type, name=name)


def to_hash_bucket_fast(input, num_buckets, name=None):
    """tf.strings.to_hash_bucket_fast / tf.string_to_hash_bucket_fast: FarmHash
    Fingerprint64(s) % num_buckets of each string, int64 (TF's buckets)."""
    x = _string_in(input)
    if int(num_buckets) < 1:
        raise InvalidArgumentError(f"num_buckets must be >= 1, got {num_buckets}")
    return make("StringToHashBucketFast", [x], {"num_buckets": int(num_buckets),
                                                "keep_empty": True},
                name=name or "StringToHashBucketFast")


not_differentiable("StringJoin", "ReduceJoin", "Substr", "StringLength", "RegexReplace",
                   "RegexFullMatch", "StringStrip", "StringLower", "StringUpper")

join = string_join
string_to_hash_bucket_fast = to_hash_bucket_fast
