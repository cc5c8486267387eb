"""More TF 1.15 API: tf.strings.format, the Unicode string ops of tf.strings,
tf.io.decode_compressed, tf.load_op_library (and its kin), tf.saved_model.main_op,
tf.estimator.classifier_parse_example_spec / regressor_parse_example_spec and
tf.nn.ctc_loss_v2.

tf.strings.format prints each tensor as TF 1.15's StringFormat does (its "print_v2"
summary): nested brackets, `summarize` elements at each end of every dimension with "..."
between, floats in the shortest of %.6g / %.9g (%.15g / %.17g for float64) that reads
back exactly, bools as 1 / 0, strings in double quotes with C escapes.

Unicode ops. TF returns a RaggedTensor from unicode_decode / unicode_split (and their
_with_offsets forms) for an input of rank >= 1; xlapy has no RaggedTensor, so these
return the SparseTensor that TF's RaggedTensor.to_sparse() gives: dense_shape
input.shape + [longest string's characters], an entry per character. A scalar input gives
TF's dense 1-D tensor. unicode_encode takes a dense int32 tensor [..., n] (every element
encoded, as TF does for a dense input) or such a SparseTensor (each row's entries, in
order). Encodings are Python codecs: UTF-8, UTF-16-BE and UTF-32-BE (TF's output
encodings) and, for decoding, the other stateless ones Python knows. An invalid input
sequence is replaced by replacement_char (errors="replace", the maximal invalid subpart
per replacement, as ICU), dropped ("ignore") or an InvalidArgumentError ("strict").
tf.strings.unicode_script is not provided (it needs the Unicode script table of ICU,
which neither Python's unicodedata nor xlapy's dependencies carry).

All these ops work on strings, so they run in the executor (XLA has no string type).
"""

from __future__ import annotations

import codecs
import gzip
import os
import threading
import zlib

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (DataLossError, InvalidArgumentError, InvalidTypeError,
                                    NotFoundError)
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, make_op, tensor
from xlapy.compat.v1.ops.ctc_ops import ctc_loss
from xlapy.compat.v1.ops.text_ops import _objects, _string_in, _strings
from xlapy.compat.v1.tensor_shape import TensorShape

__all__ = ["decode_compressed", "load_file_system_library", "load_library",
           "load_op_library", "string_format", "unicode_decode",
           "unicode_decode_with_offsets", "unicode_encode", "unicode_split",
           "unicode_split_with_offsets", "unicode_transcode"]


def _tf():
    import xlapy.compat.v1 as tf  # (the package, for composing its ops at call time)
    return tf


# ---- tf.strings.format -----------------------------------------------------------------------

def _float_str(v, single: bool) -> str:
    v = float(v)
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    s = "%.*g" % (6 if single else 15, v)
    back = float(np.float32(float(s))) if single else float(s)
    if back != v:
        s = "%.*g" % (9 if single else 17, v)
    return s


def _cescape(b: bytes) -> str:
    special = {0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'",
               0x5c: "\\\\"}
    out = []
    for c in b:
        if c in special:
            out.append(special[c])
        elif c < 0x20 or c >= 0x7f:
            out.append("\\%03o" % c)
        else:
            out.append(chr(c))
    return "".join(out)


def _element_printer(dtype: np.dtype):
    if dtype.kind == "O":
        return lambda v: '"' + _cescape(v if isinstance(v, bytes) else str(v).encode()) + '"'
    if dtype.kind == "b":
        return lambda v: "1" if v else "0"
    if dtype.kind in "iu":
        return lambda v: str(int(v))
    if dtype.kind == "f":
        single = dtype.itemsize <= 4 or dtype.name == "bfloat16"
        return lambda v: _float_str(v, single)
    if dtype.kind == "V" and "bfloat16" in dtype.name:
        return lambda v: _float_str(np.float32(v), True)
    return None


def summarize_tensor(a: np.ndarray, summarize: int) -> str:
    """The text TF 1.15's StringFormat / tf.print make of one tensor value."""
    a = np.asarray(a)
    num = a.size
    limit = min(num if summarize < 0 else summarize, num)
    pr = _element_printer(a.dtype)
    flat = a.reshape(-1)
    if pr is None:  # types TF does not print (complex): one "?" per element
        body = " ".join("?" for _ in range(limit))
        return "[" + body + ("..." if limit < num else "") + "]"
    if a.ndim == 0:
        text = " ".join(pr(flat[i]) for i in range(limit))
        return text + ("..." if num > limit else "")
    shape, nd = a.shape, a.ndim

    def spacing(dim):
        if dim == nd - 1:
            return " "
        return "\n" * (nd - dim - 1) + " " * (dim + 1)

    def one_dim(dim, start):
        if dim == nd:
            return pr(flat[start])
        count = shape[dim]
        per = int(np.prod(shape[dim + 1:], dtype=np.int64))
        parts = ["["]
        for i in range(min(limit, count)):
            if i > 0:
                parts.append(spacing(dim))
            parts.append(one_dim(dim + 1, start + per * i))
        if count > 2 * limit:
            parts.append(spacing(dim))
            parts.append("...")
        for i in range(max(limit, count - limit), count):
            parts.append(spacing(dim))
            parts.append(one_dim(dim + 1, start + per * i))
        parts.append("]")
        return "".join(parts)
    return one_dim(0, 0)


@register_op("StringFormat", infer=lambda op: [(dtypes.string, TensorShape([]))],
             attrs=("template", "placeholder", "summarize"), lowering=None)
def _string_format(m, *inputs, template="%s", placeholder="%s", summarize=3):
    """The template with each placeholder replaced by the summary of one input."""
    pieces = template.split(placeholder)
    out = [pieces[0]]
    for x, piece in zip(inputs, pieces[1:]):
        out.append(summarize_tensor(x, summarize))
        out.append(piece)
    return _objects((), ["".join(out).encode("utf-8", "surrogateescape")])


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """tf.strings.format: a scalar string, `template` with each `placeholder` replaced by
    the printed value of one of `inputs` (a tensor, or a list of them), at most
    `summarize` elements at each end of each dimension (-1: all)."""
    if not isinstance(template, str):
        raise InvalidTypeError(f"template must be a Python string, got {template!r}")
    if not isinstance(placeholder, str) or not placeholder:
        raise InvalidArgumentError(f"placeholder must be a non-empty string, got "
                                   f"{placeholder!r}")
    if isinstance(inputs, Tensor) or hasattr(inputs, "op") or \
            not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    ts = [x if isinstance(x, Tensor) else tensor(x) for x in inputs]
    n = len(template.split(placeholder)) - 1
    if n != len(ts):
        raise InvalidArgumentError(f"num placeholders in template and num inputs must "
                                   f"match: {n} vs. {len(ts)}")
    return make("StringFormat", ts, {"template": template, "placeholder": placeholder,
                                     "summarize": int(summarize)},
                name=name or "StringFormat")


# ---- Unicode ---------------------------------------------------------------------------------

_OUTPUT_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_STATEFUL = {"utf-16", "utf-32", "utf-7", "utf-8-sig", "idna", "punycode", "mbcs"}
_ERRORS = ("strict", "replace", "ignore")
_MARK = "\udfff"   # stands for an invalid sequence (no valid input decodes to a surrogate)
_spans = threading.local()


def _record_error(e):
    _spans.found.append((e.start, e.end))
    return _MARK, e.end


codecs.register_error("xlapy.unicode_decode", _record_error)


def _input_codec(encoding) -> str:
    if not isinstance(encoding, str) or not encoding:
        raise InvalidArgumentError(f"input_encoding must be a non-empty string, got "
                                   f"{encoding!r}")
    if encoding.upper() in _OUTPUT_ENCODINGS:
        return _OUTPUT_ENCODINGS[encoding.upper()]
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise InvalidArgumentError(f"Could not create converter for input encoding: "
                                   f"{encoding}") from None
    if name in _STATEFUL:
        raise InvalidArgumentError(f"input encoding {encoding} is not supported (its byte "
                                   "offsets depend on state; use UTF-8, UTF-16-BE or "
                                   "UTF-32-BE)")
    return name


def _output_codec(encoding) -> str:
    codec = _OUTPUT_ENCODINGS.get(encoding) if isinstance(encoding, str) else None
    if codec is None:
        raise InvalidArgumentError(f"output_encoding must be one of UTF-8, UTF-16-BE, "
                                   f"UTF-32-BE, got {encoding!r}")
    return codec


def _check_errors(errors, replacement_char):
    if errors not in _ERRORS:
        raise InvalidArgumentError(f"errors must be one of 'strict', 'replace', 'ignore', "
                                   f"got {errors!r}")
    if not _valid_codepoint(int(replacement_char)):
        raise InvalidArgumentError(f"replacement_char {replacement_char} is not a valid "
                                   "Unicode code point")


def _valid_codepoint(cp: int) -> bool:
    return 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF


def _char_len(codec: str, ch: str) -> int:
    if codec == "utf-8":
        cp = ord(ch)
        return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    if codec == "utf-16-be" or codec == "utf-16-le":
        return 2 if ord(ch) < 0x10000 else 4
    if codec == "utf-32-be" or codec == "utf-32-le":
        return 4
    return len(ch.encode(codec))


def _decode_one(b: bytes, codec: str, encoding: str, errors: str, repl: int, ctrl: bool):
    """(code points, byte offsets of their starts) of one string."""
    _spans.found = []
    try:
        text = b.decode(codec, "strict" if errors == "strict" else "xlapy.unicode_decode")
    except UnicodeDecodeError as e:
        raise InvalidArgumentError(f"Invalid formatting on input string: bytes {e.start} to "
                                   f"{e.end} of {b!r} are not valid {encoding} (errors="
                                   "'strict')") from None
    spans = iter(_spans.found)
    cps, offs, pos = [], [], 0
    for ch in text:
        if ch == _MARK:
            start, pos = next(spans)
            if errors == "replace":
                cps.append(repl)
                offs.append(start)
            continue
        cp = ord(ch)
        cps.append(repl if ctrl and cp < 0x20 else cp)
        offs.append(pos)
        pos += _char_len(codec, ch)
    return cps, offs


def _encode_one(cps, codec: str, errors: str, repl: int) -> bytes:
    chars = []
    for cp in cps:
        cp = int(cp)
        if not _valid_codepoint(cp):
            if errors == "strict":
                raise InvalidArgumentError(f"Invalid Unicode code point {cp} "
                                           "(errors='strict')")
            if errors == "ignore":
                continue
            cp = repl
        chars.append(chr(cp))
    return "".join(chars).encode(codec)


def _decode_infer(op):
    x = op.inputs[0]
    if x.dtype != dtypes.string:
        raise InvalidTypeError(f"UnicodeDecodeWithOffsets: the input must be a string "
                               f"tensor, got {x.dtype.name}")
    n = x.shape.num_elements()
    return [(dtypes.int64, TensorShape([None if n is None else n + 1])),
            (dtypes.int32, TensorShape([None])), (dtypes.int64, TensorShape([None]))]


@register_op("UnicodeDecodeWithOffsets", infer=_decode_infer,
             attrs=("input_encoding", "errors", "replacement_char",
                    "replace_control_characters"), lowering=None)
def _unicode_decode(m, x, input_encoding="UTF-8", errors="replace", replacement_char=0xFFFD,
                    replace_control_characters=False):
    """(row_splits [n+1], code points, byte offsets) of the n strings of x, flattened."""
    codec = _input_codec(input_encoding)
    splits, cps, offs = [0], [], []
    for s in _strings(x).reshape(-1):
        c, o = _decode_one(s, codec, input_encoding, errors, int(replacement_char),
                           bool(replace_control_characters))
        cps += c
        offs += o
        splits.append(len(cps))
    return (np.asarray(splits, np.int64), np.asarray(cps, np.int32),
            np.asarray(offs, np.int64))


def _encode_infer(op):
    values, splits = op.inputs
    if values.dtype != dtypes.int32:
        raise InvalidTypeError(f"UnicodeEncode: the code points must be int32, got "
                               f"{values.dtype.name}")
    n = splits.shape.num_elements()
    return [(dtypes.string, TensorShape([None if n is None else max(n - 1, 0)]))]


@register_op("UnicodeEncode", infer=_encode_infer,
             attrs=("errors", "output_encoding", "replacement_char"), lowering=None)
def _unicode_encode(m, values, splits, errors="replace", output_encoding="UTF-8",
                    replacement_char=0xFFFD):
    """The strings of the rows values[splits[i]:splits[i+1]], encoded."""
    codec = _output_codec(output_encoding)
    splits = np.asarray(splits, np.int64)
    if splits.size == 0 or splits[0] != 0 or np.any(np.diff(splits) < 0) or \
            splits[-1] != values.size:
        raise InvalidArgumentError(f"UnicodeEncode: input_splits must start at 0, not "
                                   f"decrease and end at the number of code points "
                                   f"({values.size}), got {splits.tolist()}")
    out = [_encode_one(values[splits[i]:splits[i + 1]], codec, errors, int(replacement_char))
           for i in range(splits.size - 1)]
    return _objects((len(out),), out)


@register_op("UnicodeTranscode", infer=lambda op: [(dtypes.string, op.inputs[0].shape)],
             attrs=("input_encoding", "output_encoding", "errors", "replacement_char",
                    "replace_control_characters"), lowering=None)
def _unicode_transcode(m, x, input_encoding="UTF-8", output_encoding="UTF-8",
                       errors="replace", replacement_char=0xFFFD,
                       replace_control_characters=False):
    """Each string decoded from input_encoding and encoded in output_encoding."""
    src, dst = _input_codec(input_encoding), _output_codec(output_encoding)
    a = _strings(x)
    out = []
    for s in a.reshape(-1):
        cps, _ = _decode_one(s, src, input_encoding, errors, int(replacement_char),
                             bool(replace_control_characters))
        out.append(_encode_one(cps, dst, errors, int(replacement_char)))
    return _objects(a.shape, out)


def _splits_infer(op):
    splits, outer = op.inputs
    r = outer.shape.num_elements()
    return [(dtypes.int64, TensorShape([None, None if r is None else r + 1])),
            (dtypes.int64, TensorShape([None if r is None else r + 1]))]


@register_op("XlapyRowSplitsToSparse", infer=_splits_infer, lowering=None)
def _row_splits_to_sparse(m, splits, outer_shape):
    """The SparseTensor indices and dense_shape of the rows splits delimits, the rows laid
    out in outer_shape (a ragged tensor's to_sparse())."""
    splits = np.asarray(splits, np.int64)
    outer = tuple(int(d) for d in np.asarray(outer_shape).reshape(-1))
    lengths = np.diff(splits)
    rows = np.repeat(np.arange(lengths.size), lengths)
    pos = np.arange(splits[-1] if splits.size else 0) - np.repeat(splits[:-1], lengths)
    lead = np.stack(np.unravel_index(rows, outer), 1) if outer else np.zeros((rows.size, 0))
    indices = np.concatenate([lead.astype(np.int64), pos[:, None]], 1).astype(np.int64)
    width = int(lengths.max()) if lengths.size else 0
    return indices.reshape(-1, len(outer) + 1), np.asarray(outer + (width,), np.int64)


not_differentiable("StringFormat", "UnicodeDecodeWithOffsets", "UnicodeEncode",
                   "UnicodeTranscode", "XlapyRowSplitsToSparse")


def _as_ragged_result(x, splits, *values):
    """values of each string of x: dense for a scalar x, else SparseTensors (TF's ragged
    result, to_sparse())."""
    tf = _tf()
    if x.shape.ndims == 0:
        return values
    indices, dense_shape = make("XlapyRowSplitsToSparse",
                                [splits, tf.shape(x, out_type=tf.int64)])
    return tuple(tf.SparseTensor(indices, v, dense_shape) for v in values)


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters,
            name, default_name):
    x = _string_in(input)
    if x.shape.ndims is None:
        raise InvalidArgumentError("Rank of input must be statically known.")
    _input_codec(input_encoding)
    _check_errors(errors, replacement_char)
    with _tf().get_default_graph().name_scope(name or default_name):
        splits, cps, offs = make_op("UnicodeDecodeWithOffsets", [x], {
            "input_encoding": input_encoding, "errors": errors,
            "replacement_char": int(replacement_char),
            "replace_control_characters": bool(replace_control_characters)}).outputs
    return x, splits, cps, offs


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,
                   replace_control_characters=False, name=None):
    """The code points (int32) of each string of `input`: a 1-D tensor for a scalar input,
    else a SparseTensor [..., max characters] (TF: a RaggedTensor)."""
    x, splits, cps, _ = _decode(input, input_encoding, errors, replacement_char,
                                replace_control_characters, name, "UnicodeDecode")
    return _as_ragged_result(x, splits, cps)[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace",
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """(code points, byte offsets of each character's start in its string), shaped as
    unicode_decode's result."""
    x, splits, cps, offs = _decode(input, input_encoding, errors, replacement_char,
                                   replace_control_characters, name,
                                   "UnicodeDecodeWithOffsets")
    return _as_ragged_result(x, splits, cps, offs)


def _split(input, input_encoding, errors, replacement_char, name, default_name):
    tf = _tf()
    x, splits, cps, offs = _decode(input, input_encoding, errors, replacement_char, False,
                                   name, default_name)
    codec = input_encoding.upper() if input_encoding.upper() in _OUTPUT_ENCODINGS else None
    if codec is None:
        raise InvalidArgumentError(f"unicode_split: input encoding {input_encoding} must be "
                                   "one of UTF-8, UTF-16-BE, UTF-32-BE (the characters are "
                                   "encoded back in it)")
    each = tf.range(tf.size(cps, out_type=tf.int64) + 1)
    chars = make("UnicodeEncode", [cps, each], {"errors": errors, "output_encoding": codec,
                                               "replacement_char": int(replacement_char)})
    return x, splits, chars, offs


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,
                  name=None):
    """The characters of each string of `input` (strings of one character each), shaped
    as unicode_decode's result."""
    x, splits, chars, _ = _split(input, input_encoding, errors, replacement_char, name,
                                 "UnicodeSplit")
    return _as_ragged_result(x, splits, chars)[0]


def unicode_split_with_offsets(input, input_encoding, errors="replace",
                               replacement_char=65533, name=None):
    """(characters, byte offsets of their starts), shaped as unicode_decode's result."""
    x, splits, chars, offs = _split(input, input_encoding, errors, replacement_char, name,
                                    "UnicodeSplitWithOffsets")
    return _as_ragged_result(x, splits, chars, offs)


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,
                   name=None):
    """The strings encoding the code points of each innermost row of `input` (int32
    [..., n], or a SparseTensor of them): shape input.shape[:-1]."""
    tf = _tf()
    _output_codec(output_encoding)
    _check_errors(errors, replacement_char)
    attrs = {"errors": errors, "output_encoding": output_encoding,
             "replacement_char": int(replacement_char)}
    with tf.get_default_graph().name_scope(name or "UnicodeEncode"):
        if getattr(input, "_is_sparse_tensor", False):
            if input.values.dtype != dtypes.int32:
                raise InvalidTypeError(f"unicode_encode: the code points must be int32, got "
                                       f"{input.values.dtype.name}")
            shape = input.dense_shape
            outer = shape[:-1]
            strides = tf.cumprod(outer, exclusive=True, reverse=True)
            rows = tf.reduce_sum(input.indices[:, :-1] * strides[None, :], axis=1)
            n = tf.reduce_prod(outer)
            counts = tf.unsorted_segment_sum(tf.ones_like(rows), rows, n)
            splits = tf.concat([tf.zeros([1], tf.int64), tf.cumsum(counts)], 0)
            out = make("UnicodeEncode", [input.values, splits], attrs)
            return tf.reshape(out, outer)
        x = tensor(input)
        if x.dtype != dtypes.int32:
            raise InvalidTypeError(f"unicode_encode: the code points must be int32, got "
                                   f"{x.dtype.name}")
        if x.shape.ndims is None:
            raise InvalidArgumentError("Rank of input must be statically known.")
        if x.shape.ndims == 0:
            raise InvalidArgumentError("unicode_encode: input must have rank >= 1 (its last "
                                       "dimension holds each string's code points)")
        shape = tf.shape(x, out_type=tf.int64)
        outer, width = shape[:-1], shape[-1]
        splits = tf.range(tf.reduce_prod(outer) + 1) * width
        out = make("UnicodeEncode", [tf.reshape(x, [-1]), splits], attrs)
        out = tf.reshape(out, outer)
        out.set_shape(x.shape[:-1])
        return out


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string of `input` re-encoded from input_encoding to output_encoding."""
    x = _string_in(input)
    _input_codec(input_encoding)
    _output_codec(output_encoding)
    _check_errors(errors, replacement_char)
    return make("UnicodeTranscode", [x], {
        "input_encoding": input_encoding, "output_encoding": output_encoding,
        "errors": errors, "replacement_char": int(replacement_char),
        "replace_control_characters": bool(replace_control_characters)},
        name=name or "UnicodeTranscode")


# ---- tf.io.decode_compressed -----------------------------------------------------------------

_COMPRESSIONS = ("", "ZLIB", "GZIP")


def _inflate(b: bytes, kind: str) -> bytes:
    if kind == "":
        return b
    try:
        if kind == "GZIP":
            return gzip.decompress(b)
        d = zlib.decompressobj()
        out = d.decompress(b) + d.flush()
        if not d.eof:
            raise zlib.error("the stream ends before its end marker")
        return out
    except (zlib.error, OSError, EOFError) as e:
        raise DataLossError(f"decode_compressed: the {kind} data is corrupt or truncated "
                            f"({e})") from None


@register_op("DecodeCompressed", infer=lambda op: [(dtypes.string, op.inputs[0].shape)],
             attrs=("compression_type",), lowering=None)
def _decode_compressed(m, x, compression_type=""):
    """Each string decompressed (ZLIB, GZIP, or left as it is for "")."""
    a = _strings(x)
    return _objects(a.shape, [_inflate(s, compression_type) for s in a.reshape(-1)])


not_differentiable("DecodeCompressed")


def decode_compressed(bytes, compression_type="", name=None):
    """tf.io.decode_compressed: each string of `bytes` decompressed: compression_type
    "ZLIB", "GZIP" or "" (no compression)."""
    if compression_type not in _COMPRESSIONS:
        raise InvalidArgumentError(f"Only ZLIB, GZIP or NONE ('') are supported "
                                   f"compressions, got {compression_type!r}")
    return make("DecodeCompressed", [_string_in(bytes, "bytes")],
                {"compression_type": compression_type}, name=name or "DecodeCompressed")


# ---- custom op libraries ---------------------------------------------------------------------

def _no_custom_ops(path, what):
    exists = os.path.exists(path) if isinstance(path, (str, bytes, os.PathLike)) else False
    raise NotFoundError(
        f"{path}: {what} cannot load it{'' if exists else ' (and there is no such file)'}: "
        "custom C++ ops and kernels are not supported by xlapy, which runs TF graphs with "
        "its own kernels and has no TensorFlow C++ runtime to load them into. Write the op "
        "from existing ops, or as tf.py_func / tf.numpy_function.")


def load_op_library(library_filename):
    """Refused: xlapy cannot load custom C++ op libraries (raises NotFoundError, the class
    TF raises for a library that does not load, naming the file)."""
    _no_custom_ops(library_filename, "tf.load_op_library")


def load_library(library_location):
    """Refused as load_op_library is (a kernel library, or a directory of them)."""
    _no_custom_ops(library_location, "tf.load_library")


def load_file_system_library(library_filename):
    """Refused as load_op_library is (a file system plugin)."""
    _no_custom_ops(library_filename, "tf.load_file_system_library")


# ---- tf.saved_model.main_op --------------------------------------------------------------------

def main_op():
    """The op a SavedModel's loader runs after restoring the variables: initializes the
    global and local variables and the tables (TF 1.15's tf.saved_model.main_op.main_op)."""
    tf = _tf()
    return tf.group(tf.global_variables_initializer(), tf.local_variables_initializer(),
                    tf.tables_initializer())


def main_op_with_restore(restore_op_name):
    """main_op(), then the op named restore_op_name (a Saver's restore op, or its name)."""
    tf = _tf()
    restore = restore_op_name
    if isinstance(restore, (str, bytes)):
        name = restore.decode() if isinstance(restore, bytes) else restore
        restore = tf.get_default_graph().as_graph_element(name, allow_tensor=True,
                                                          allow_operation=True)
    with tf.control_dependencies([main_op()]):
        return tf.group(restore)


# ---- tf.estimator parse specs ------------------------------------------------------------------

def _column_spec(col, spec: dict) -> None:
    """Add the tf.Example features feature column `col` reads to spec."""
    tf = _tf()
    own = getattr(col, "_parse_example_spec", None)
    if isinstance(own, dict):
        spec.update(own)
        return
    kind = type(col).__name__
    if kind == "_NumericColumn":
        spec[col.key] = tf.FixedLenFeature(tuple(col.shape), col.dtype, col.default_value)
    elif kind == "_BucketizedColumn":
        _column_spec(col.source_column, spec)
    elif kind == "_IdentityCategoricalColumn":
        spec[col.key] = tf.VarLenFeature(tf.int64)
    elif kind in ("_VocabularyColumn", "_HashedCategoricalColumn"):
        dt = dtypes.as_dtype(col.dtype)
        spec[col.key] = tf.VarLenFeature(tf.int64 if dt.is_integer else tf.string)
    elif kind == "_CrossedColumn":
        for k in col.keys:
            if isinstance(k, str):
                spec[k] = tf.VarLenFeature(tf.string)
            else:
                _column_spec(k, spec)
    elif hasattr(col, "categorical_column"):  # indicator, embedding
        _column_spec(col.categorical_column, spec)
    else:
        raise InvalidArgumentError(f"feature_columns: cannot tell the features of {col!r} "
                                   "(not a tf.feature_column column)")


def _parse_spec(feature_columns, label_key, label_spec, weight_column):
    tf = _tf()
    if isinstance(feature_columns, dict) or not hasattr(feature_columns, "__iter__"):
        raise InvalidTypeError(f"feature_columns must be an iterable of feature columns, "
                               f"got {feature_columns!r}")
    spec: dict = {}
    for col in feature_columns:
        _column_spec(col, spec)
    if label_key in spec:
        raise InvalidArgumentError(f"label should not be used as feature. label_key: "
                                   f"{label_key}, features: {sorted(spec)}")
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if type(weight_column).__name__ != "_NumericColumn":
        raise InvalidArgumentError(f"weight_column should be an instance of "
                                   f"tf.feature_column.numeric_column. Given type: "
                                   f"{type(weight_column).__name__} value: {weight_column!r}")
    _column_spec(weight_column, spec)
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.int64,
                                  label_default=None, weight_column=None):
    """The tf.parse_example features dict of a classifier's input: the columns' features,
    the label (a FixedLenFeature of shape (1,)) and the weight column, if any."""
    dt = dtypes.as_dtype(label_dtype)
    if not (dt.is_integer or dt == dtypes.string):
        raise InvalidArgumentError(f"label_dtype must be an integer or string dtype, got "
                                   f"{dt.name}")
    return _parse_spec(feature_columns, label_key,
                       _tf().FixedLenFeature((1,), dt, label_default), weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=dtypes.float32,
                                 label_default=None, label_dimension=1, weight_column=None):
    """As classifier_parse_example_spec, for a regressor: the label a FixedLenFeature of
    shape (label_dimension,)."""
    if int(label_dimension) < 1:
        raise InvalidArgumentError(f"label_dimension must be positive, got {label_dimension}")
    return _parse_spec(feature_columns, label_key,
                       _tf().FixedLenFeature((int(label_dimension),),
                                             dtypes.as_dtype(label_dtype), label_default),
                       weight_column)


# ---- tf.nn.ctc_loss_v2 -----------------------------------------------------------------------

def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """The CTC loss (negative log-likelihood, [batch]) of labels under logits, TF 1.15's
    v2 form: labels a SparseTensor (blank_index then required) or dense [batch, max_len]
    with label_length [batch]; logit_length [batch]; blank_index any class (0 by default
    for dense labels; negative counts from the end). `unique` (a speed-up in TF) is not
    needed. Computed by tf.nn.ctc_loss, the blank class moved last."""
    tf = _tf()
    sparse = getattr(labels, "_is_sparse_tensor", False)
    if sparse and blank_index is None:
        raise InvalidArgumentError("blank_index must be given when using SparseTensor "
                                   "labels.")
    if logit_length is None:
        raise InvalidArgumentError("ctc_loss_v2 needs logit_length")
    with tf.get_default_graph().name_scope(name or "ctc_loss_dense"):
        x = tensor(logits)
        if x.shape.ndims not in (None, 3):
            raise InvalidArgumentError(f"logits must be 3-D, got shape {x.shape}")
        if not logits_time_major:
            x = tf.transpose(x, [1, 0, 2])
        classes = x.shape.dims[2] if x.shape.ndims == 3 else None
        if blank_index is None:
            blank_index = 0
        blank_index = int(blank_index)
        if blank_index < 0:
            if classes is None:
                raise InvalidArgumentError("a negative blank_index needs the number of "
                                           "classes (logits' last dimension) known")
            blank_index += classes
        if sparse:
            st = labels
        else:
            if label_length is None:
                raise InvalidArgumentError("label_length is required with dense labels")
            lab = tensor(labels)
            if lab.shape.ndims not in (None, 2):
                raise InvalidArgumentError(f"dense labels must be [batch, max_label_length], "
                                           f"got shape {lab.shape}")
            lens = tf.cast(tensor(label_length), tf.int64)
            lab = tf.cast(lab, tf.int64)
            pos = tf.range(tf.shape(lab, out_type=tf.int64)[1])
            idx = tf.where(tf.less(pos[None, :], lens[:, None]))
            st = tf.SparseTensor(idx, tf.gather_nd(lab, idx),
                                 tf.shape(lab, out_type=tf.int64))
        if classes is None or blank_index != classes - 1:
            x = tf.concat([x[:, :, :blank_index], x[:, :, blank_index + 1:],
                           x[:, :, blank_index:blank_index + 1]], 2)
            vals = st.values
            st = tf.SparseTensor(st.indices, tf.where(tf.less(vals, blank_index), vals,
                                                      vals - 1), st.dense_shape)
        return ctc_loss(st, x, sequence_length=logit_length, time_major=True)

