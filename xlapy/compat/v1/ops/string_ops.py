"""String splitting into SparseTensors: tf.string_split (TF 1.x's StringSplit: every
character of the delimiter splits, an empty delimiter splits into bytes) and
tf.strings.split (StringSplitV2: the separator is a string, None splits on whitespace,
maxsplit). Strings are object arrays of bytes and the number of tokens is data: both run in
the executor."""

from __future__ import annotations

import re

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.sparse_tensor import SparseTensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _split_infer(op):
    x, sep = op.inputs
    if x.dtype != dtypes.string or sep.dtype != dtypes.string:
        raise InvalidTypeError(f"{op.type} takes string tensors, got {x.dtype.name} and "
                               f"{sep.dtype.name}")
    if x.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"input must be a vector, got shape: {x.shape}")
    if sep.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"delimiter must be a scalar, got shape: {sep.shape}")
    return [(dtypes.int64, TensorShape([None, 2])), (dtypes.string, TensorShape([None])),
            (dtypes.int64, TensorShape([2]))]


def _as_sparse(rows) -> tuple:
    idx = [(i, j) for i, toks in enumerate(rows) for j in range(len(toks))]
    vals = np.empty(len(idx), object)
    vals[:] = [t for toks in rows for t in toks]
    width = max((len(t) for t in rows), default=0)
    return (np.asarray(idx, np.int64).reshape(-1, 2), vals,
            np.asarray([len(rows), width], np.int64))


def _check_vector(x):
    if np.ndim(x) != 1:
        raise InvalidArgumentError(f"input must be a vector, got shape: {list(np.shape(x))}")


@register_op("StringSplit", infer=_split_infer, attrs=("skip_empty",), lowering=None)
def _string_split(m, x, delimiter, skip_empty=True):
    """Each string split at every character of the delimiter (into bytes if it is empty)."""
    _check_vector(x)
    d = np.asarray(delimiter, object).item()
    rows = []
    for s in x:
        if not d:
            toks = [s[i:i + 1] for i in range(len(s))]
        else:
            toks = re.split(b"[" + re.escape(d) + b"]", s)
        rows.append([t for t in toks if t or not skip_empty])
    return _as_sparse(rows)


@register_op("StringSplitV2", infer=_split_infer, attrs=("maxsplit",), lowering=None)
def _string_split_v2(m, x, sep, maxsplit=-1):
    """Python's bytes.split(sep, maxsplit); an empty sep splits on runs of whitespace."""
    _check_vector(x)
    sep = np.asarray(sep, object).item()
    return _as_sparse([s.split(sep or None, maxsplit) for s in x])


not_differentiable("StringSplit", "StringSplitV2")


def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None) -> SparseTensor:
    """tf.string_split: a SparseTensor [batch, max tokens] of the tokens."""
    if result_type != "SparseTensor":
        raise InvalidArgumentError("string_split: only result_type='SparseTensor' is supported")
    if sep is None:
        sep = " " if delimiter is None else delimiter
    op = make_op("StringSplit", [tensor(source, dtype=dtypes.string),
                                 tensor(sep, dtype=dtypes.string)],
                 {"skip_empty": bool(skip_empty)}, name=name or "StringSplit")
    return SparseTensor(*op.outputs)


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None,
          name=None) -> SparseTensor:
    """tf.strings.split (TF 1.15): split at the separator string (whitespace when None)."""
    if result_type != "SparseTensor":
        raise InvalidArgumentError("strings.split: only result_type='SparseTensor' is "
                                   "supported")
    x = input if input is not None else source
    op = make_op("StringSplitV2", [tensor(x, dtype=dtypes.string),
                                   tensor("" if sep is None else sep, dtype=dtypes.string)],
                 {"maxsplit": int(maxsplit)}, name=name or "StringSplit")
    return SparseTensor(*op.outputs)
