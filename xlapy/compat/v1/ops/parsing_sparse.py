"""The sparse features of tf.parse_single_example / tf.parse_example (parsing_ops.py):
VarLenFeature and SparseFeature, parsed into tf.SparseTensors.

A VarLenFeature gives all of an example's values: indices [N, 1] (their positions) and
dense_shape [N] for one example; for a batch, indices [N, 2] (example, position) and
dense_shape [batch, longest]. A SparseFeature(index_key, value_key, dtype, size) places the
values of value_key at the positions of index_key (int64) in a vector of `size`: indices
[N, 1] / [N, 2] sorted by position (unless already_sorted), dense_shape [size] / [batch,
size]. Each sparse feature is three outputs of the parse op, after the dense ones.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.tensor_shape import TensorShape


def sparse_specs(features, feature_dtype) -> list:
    """(key, kind, dtype, index_key, value_key, size, already_sorted) of each sparse feature,
    sorted by key."""
    from xlapy.compat.v1.ops.parsing_ops import SparseFeature, VarLenFeature
    out = []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            out.append((key, "var", feature_dtype(f.dtype, key), None, None, None, True))
        elif isinstance(f, SparseFeature):
            if not isinstance(f.index_key, str):
                raise UnimplementedError(f"Feature {key}: SparseFeature with several index "
                                         "keys (a multi-dimensional index) is not supported")
            if f.size is None or int(np.reshape(f.size, [-1])[0]) < 0:
                raise InvalidArgumentError(f"Feature {key}: SparseFeature needs a size >= 0")
            out.append((key, "sparse", feature_dtype(f.dtype, key), f.index_key, f.value_key,
                        int(np.reshape(f.size, [-1])[0]), bool(f.already_sorted)))
    return out


def sparse_infer(specs, batched: bool) -> list:
    rank = 2 if batched else 1
    out = []
    for _key, _kind, dt, *_ in specs:
        out += [(dtypes.int64, TensorShape([None, rank])), (dt, TensorShape([None])),
                (dtypes.int64, TensorShape([rank]))]
    return out


def _empty(dt):
    return np.zeros([0], object if dt == dtypes.string else dt.np)


def _cat(parts, dt):
    if not parts:
        return _empty(dt)
    out = np.concatenate(parts)
    return out.astype(object, copy=False) if dt == dtypes.string else out


def sparse_values(examples, specs, names, batched: bool, values_fn) -> list:
    """The (indices, values, dense_shape) arrays of each sparse feature of the examples
    (a list of {key: tf.train.Feature}); values_fn(feature, key, dtype, name, index) reads
    one feature's values (checking its type)."""
    out = []
    for key, kind, dt, index_key, value_key, size, already_sorted in specs:
        idx, vals = [], []
        longest = 0
        for i, feats in enumerate(examples):
            name = names[i] if names is not None else "<unknown>"
            if kind == "var":
                f = feats.get(key)
                v = values_fn(f, key, dt, name, i) if f is not None else _empty(dt)
                pos = np.arange(len(v), dtype=np.int64)
                longest = max(longest, len(v))
            else:
                fi, fv = feats.get(index_key), feats.get(value_key)
                pos = values_fn(fi, index_key, dtypes.int64, name, i) if fi is not None \
                    else np.zeros([0], np.int64)
                v = values_fn(fv, value_key, dt, name, i) if fv is not None else _empty(dt)
                if len(pos) != len(v):
                    raise InvalidArgumentError(
                        f"Name: {name}, Key: {key}, Index: {i}.  SparseFeature has "
                        f"{len(pos)} indices ({index_key}) but {len(v)} values ({value_key})")
                if len(pos) and (pos.min() < 0 or pos.max() >= size):
                    bad = int(pos[(pos < 0) | (pos >= size)][0])
                    raise InvalidArgumentError(
                        f"Name: {name}, Key: {key}, Index: {i}.  SparseFeature index {bad} "
                        f"is out of bounds for size {size}")
                if not already_sorted:
                    order = np.argsort(pos, kind="stable")
                    pos, v = pos[order], v[order]
            rows = [np.full(len(pos), i, np.int64), pos] if batched else [pos]
            idx.append(np.stack(rows, axis=1).reshape(-1, len(rows)))
            vals.append(v)
        width = longest if kind == "var" else size
        shape = [len(examples), width] if batched else [width]
        out += [np.concatenate(idx).astype(np.int64, copy=False) if idx else
                np.zeros([0, 2 if batched else 1], np.int64), _cat(vals, dt),
                np.asarray(shape, np.int64)]
    return out


def sparse_outputs(specs, outs) -> dict:
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    return {s[0]: SparseTensor(*outs[3 * k:3 * k + 3]) for k, s in enumerate(specs)}
