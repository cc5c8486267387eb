"""SparseTensors as strings: tf.io.serialize_sparse, serialize_many_sparse and
deserialize_many_sparse (each component a serialized TensorProto, as TF writes them), and
the feature crosses tf.sparse.cross / cross_hashed. Strings and data-dependent entry
counts: every op here runs in the executor, and none has a gradient.

SparseCross crosses, for each example (row), every combination of one feature of each
input: the SparseTensor inputs first, then the dense ones (the order TF's op takes them),
the last input varying fastest. cross joins the features with "_X_" (integers as decimal
text); cross_hashed chains TF's FingerprintCat64 from hash_key over the features'
fingerprints (strings: Fingerprint64; integers: their value), modulo num_buckets (or
2**63 - 1 when num_buckets is 0).
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.graph_def import TensorProto
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, make_op, tensor
from xlapy.compat.v1.ops.lookup_ops import DEFAULT_HASH_KEY, fingerprint64, fingerprint_cat64
from xlapy.compat.v1.ops.math_ops import cast
from xlapy.compat.v1.ops.misc_io_ops import _DTYPE, _proto_value, _serialize_tensor
from xlapy.compat.v1.ops.sparse_ops import _sparse, check_indices
from xlapy.compat.v1.protowire import DecodeError
from xlapy.compat.v1.sparse_tensor import SparseTensor, SparseTensorValue
from xlapy.compat.v1.tensor_shape import TensorShape

_I64 = dtypes.int64
_M = (1 << 64) - 1


def _parts(idx, vals, shape_, what):
    s = np.asarray(shape_, np.int64).reshape(-1)
    ix = np.asarray(idx, np.int64)
    v = np.asarray(vals)
    if ix.ndim != 2 or ix.shape[1] != s.size or v.shape != (len(ix),):
        raise InvalidArgumentError(f"{what}: indices of shape {list(ix.shape)}, values of shape "
                                   f"{list(v.shape)} and a dense shape of {s.size} entries do "
                                   "not make a SparseTensor")
    return ix, v, s


def _serialized(*arrays) -> list:
    return [_serialize_tensor(np, a)[()] for a in arrays]


def _out_type(out_type, what):
    dt = dtypes.as_dtype(out_type)
    if dt != dtypes.string:
        raise InvalidTypeError(f"{what}: out_type must be tf.string, got {dt.name} (xlapy has "
                               "no variant type)")
    return dt


# ---- SerializeSparse, SerializeManySparse ------------------------------------------------------

@register_op("SerializeSparse", lowering=None,
             infer=lambda op: [(dtypes.string, TensorShape([3]))])
def _serialize_sparse(m, idx, vals, shape_):
    """[indices, values, dense_shape], each a serialized TensorProto."""
    ix, v, s = _parts(idx, vals, shape_, "serialize_sparse")
    out = np.empty(3, object)
    out[:] = _serialized(ix, v, s)
    return out


def _many_infer(op):
    v = constant_value(op.inputs[2])
    n = int(np.reshape(v, [-1])[0]) if v is not None and np.size(v) else None
    return [(dtypes.string, TensorShape([n, 3]))]


@register_op("SerializeManySparse", lowering=None, infer=_many_infer)
def _serialize_many_sparse(m, idx, vals, shape_):
    """One serialized SparseTensor per row of the first dimension (the minibatch), each
    without that dimension. The entries must be in row-major order."""
    ix, v, s = _parts(idx, vals, shape_, "serialize_many_sparse")
    if s.size < 2:
        raise InvalidArgumentError(f"serialize_many_sparse: the SparseTensor must have rank "
                                   f"at least 2 (the first dimension is the minibatch), got "
                                   f"shape {s.tolist()}")
    check_indices(ix, s)
    n = int(s[0])
    out = np.empty((n, 3), object)
    rows = ix[:, 0]
    for b in range(n):
        keep = rows == b
        out[b] = _serialized(ix[keep, 1:], v[keep], s[1:])
    return out


not_differentiable("SerializeSparse", "SerializeManySparse")


def _serialize(op_type, sp_input, name, out_type):
    sp = _sparse(sp_input)
    _out_type(out_type, op_type)
    return make(op_type, [sp.indices, sp.values, sp.dense_shape], name=name or op_type)


def serialize_sparse(sp_input, name=None, out_type=dtypes.string) -> Tensor:
    """tf.io.serialize_sparse: a string vector of 3, the SparseTensor's components."""
    return _serialize("SerializeSparse", sp_input, name, out_type)


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string) -> Tensor:
    """tf.io.serialize_many_sparse: an [N, 3] string matrix, one serialized SparseTensor
    per minibatch row (N the first dimension)."""
    return _serialize("SerializeManySparse", sp_input, name, out_type)


# ---- DeserializeManySparse ---------------------------------------------------------------------

def _deserialize_infer(op):
    s = op.inputs[0]
    if s.dtype != dtypes.string:
        raise InvalidTypeError(f"deserialize_many_sparse: serialized_sparse must be strings, "
                               f"got {s.dtype.name}")
    dims = s.shape.dims
    if dims is not None and (len(dims) != 2 or dims[1] not in (None, 3)):
        raise InvalidArgumentError(f"deserialize_many_sparse: serialized_sparse must be an "
                                   f"[N, 3] matrix, got shape {s.shape}")
    r = op.get_attr("rank")
    r = None if r < 0 else r
    return [(_I64, TensorShape([None, r])), (op.get_attr("dtype"), TensorShape([None])),
            (_I64, TensorShape([r]))]


def _parse(b, want, what):
    p = TensorProto()
    try:
        p.ParseFromString(bytes(b))
    except (DecodeError, ValueError, TypeError):
        raise InvalidArgumentError(f"Could not parse {what} as a serialized TensorProto") \
            from None
    got = _DTYPE.get(p.dtype)
    if got != want:
        raise InvalidArgumentError(f"Requested {what} of type {want.name} but it has type "
                                   f"{'unknown' if got is None else got.name}")
    return _proto_value(p, got)


@register_op("DeserializeManySparse", lowering=None, attrs=("dtype", "rank"),
             infer=_deserialize_infer)
def _deserialize_many_sparse(m, serialized, dtype=dtypes.float32, rank=-1):
    """The minibatch of serialized SparseTensors as one, its first dimension the row of
    `serialized`; every other dimension the largest of the inputs'."""
    s = np.asarray(serialized, object)
    if s.ndim != 2 or s.shape[1] != 3:
        raise InvalidArgumentError(f"deserialize_many_sparse: serialized_sparse must be an "
                                   f"[N, 3] matrix, got shape {list(s.shape)}")
    if s.shape[0] == 0:
        raise InvalidArgumentError("deserialize_many_sparse: must have at least 1 serialized "
                                   "SparseTensor, but the input matrix has 0 rows")
    idx, vals, shapes = [], [], []
    for i, row in enumerate(s):
        what = f"SparseTensor[{i}]"
        ix = _parse(row[0], _I64, f"{what}.indices")
        v = _parse(row[1], dtype, f"{what}.values")
        sh = _parse(row[2], _I64, f"{what}.dense_shape")
        ix, v, sh = _parts(ix, v, sh, f"deserialize_many_sparse: {what}")
        if shapes and sh.size != shapes[0].size:
            raise InvalidArgumentError(f"Inconsistent rank across SparseTensors: rank prior to "
                                       f"{what} was: {shapes[0].size} but rank of {what} is: "
                                       f"{sh.size}")
        idx.append(np.concatenate([np.full((len(ix), 1), i, np.int64), ix], 1))
        vals.append(v)
        shapes.append(sh)
    r = shapes[0].size + 1
    if rank >= 0 and rank != r:
        raise InvalidArgumentError(f"deserialize_many_sparse: the SparseTensors have rank {r} "
                                   f"with the minibatch dimension, not the rank {rank} given")
    out_shape = np.concatenate([[len(s)], np.max(np.stack(shapes), 0)]).astype(np.int64)
    return np.concatenate(idx, 0), np.concatenate(vals, 0).astype(dtype.np, copy=False), \
        out_shape


not_differentiable("DeserializeManySparse")


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None) -> SparseTensor:
    """tf.io.deserialize_many_sparse: the [N, 3] strings of serialize_many_sparse as one
    SparseTensor with a leading minibatch dimension of N (rank: its rank, if known)."""
    s = serialized_sparse if isinstance(serialized_sparse, Tensor) else \
        tensor(serialized_sparse, dtype=dtypes.string)
    with get_default_graph().name_scope(name or "DeserializeManySparse"):
        op = make_op("DeserializeManySparse", [s], {"dtype": dtypes.as_dtype(dtype),
                                                   "rank": -1 if rank is None else int(rank)})
        return SparseTensor(*op.outputs)


# ---- SparseCross -------------------------------------------------------------------------------

def _cross_infer(op):
    out = _I64 if op.get_attr("hashed_output") else dtypes.string
    return [(_I64, TensorShape([None, 2])), (out, TensorShape([None])),
            (_I64, TensorShape([2]))]


def _feature(v, hashed):
    is_str = isinstance(v, (bytes, str))
    if hashed:
        return fingerprint64(v) if is_str else int(v) & _M
    return (v.encode("utf-8") if isinstance(v, str) else v) if is_str else str(int(v)).encode()


@register_op("SparseCross", lowering=None, infer=_cross_infer,
             attrs=("num_sparse", "hashed_output", "num_buckets", "hash_key"))
def _sparse_cross(m, *inputs, num_sparse=0, hashed_output=False, num_buckets=0,
                  hash_key=DEFAULT_HASH_KEY):
    """For each row, the cross of one feature from each input (see the module doc)."""
    k = num_sparse
    columns, batch = [], None

    def agree(b):
        nonlocal batch
        if batch is not None and b != batch:
            raise InvalidArgumentError(f"Expected batch size {batch} got {b}")
        batch = b

    for i in range(k):
        ix, v, s = _parts(inputs[i], inputs[k + i], inputs[2 * k + i], f"cross: input {i}")
        if s.size != 2:
            raise InvalidArgumentError(f"cross: SparseTensor input {i} must have rank 2, got "
                                       f"dense shape {s.tolist()}")
        agree(int(s[0]))
        rows = ix[:, 0]
        if ((rows < 0) | (rows >= batch)).any():
            raise InvalidArgumentError(f"cross: SparseTensor input {i} has a row index out of "
                                       f"[0, {batch})")
        order = np.argsort(rows, kind="stable")
        per_row = [[] for _ in range(batch)]
        for j in order:
            per_row[rows[j]].append(_feature(v[j], hashed_output))
        columns.append(per_row)
    for a in inputs[3 * k:]:
        a = np.asarray(a)
        if a.ndim != 2:
            raise InvalidArgumentError(f"cross: a dense input must be a matrix, got shape "
                                       f"{list(a.shape)}")
        agree(a.shape[0])
        columns.append([[_feature(x, hashed_output) for x in row] for row in a])
    mod = num_buckets if num_buckets > 0 else (1 << 63) - 1
    idx, vals, width = [], [], 0
    for b in range(batch):
        combos = list(itertools.product(*(c[b] for c in columns)))
        width = max(width, len(combos))
        for j, combo in enumerate(combos):
            idx.append((b, j))
            if hashed_output:
                h = hash_key & _M
                for f in combo:
                    h = fingerprint_cat64(h, f)
                vals.append(h % mod)
            else:
                vals.append(b"_X_".join(combo))
    out_vals = np.asarray(vals, np.int64) if hashed_output else np.empty(len(vals), object)
    if not hashed_output:
        out_vals[:] = vals
    return np.asarray(idx, np.int64).reshape(-1, 2), out_vals, \
        np.asarray([batch, width], np.int64)


not_differentiable("SparseCross")


def _feature_tensor(t: Tensor) -> Tensor:
    if t.dtype == dtypes.int32:
        return cast(t, _I64)
    if t.dtype not in (_I64, dtypes.string):
        raise InvalidTypeError(f"cross: inputs must be int64, int32 or string, got "
                               f"{t.dtype.name}")
    return t


def _cross(inputs, hashed, num_buckets, hash_key, name):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    if not inputs:
        raise InvalidArgumentError("cross: inputs must not be empty")
    sparse, dense = [], []
    for x in inputs:
        if isinstance(x, (SparseTensor, SparseTensorValue)):
            sparse.append(_sparse(x, "inputs"))
        elif isinstance(x, Tensor):
            dense.append(x)
        else:
            raise TypeError(f"All inputs must be SparseTensors or Tensors, got "
                            f"{type(x).__name__}")
    with get_default_graph().name_scope(name or ("SparseCrossHashed" if hashed else
                                                 "SparseCross")):
        vals = [_feature_tensor(s.values) for s in sparse]
        dense = [_feature_tensor(t) for t in dense]
        for t in dense:
            if t.shape.ndims not in (None, 2):
                raise InvalidArgumentError(f"cross: a dense input must be a matrix, got shape "
                                           f"{t.shape}")
        op = make_op("SparseCross", [s.indices for s in sparse] + vals +
                     [s.dense_shape for s in sparse] + dense,
                     {"num_sparse": len(sparse), "hashed_output": hashed,
                      "num_buckets": int(num_buckets),
                      "hash_key": int(DEFAULT_HASH_KEY if hash_key is None else hash_key)})
        return SparseTensor(*op.outputs)


def sparse_cross(inputs, name=None) -> SparseTensor:
    """tf.sparse.cross: the string crosses of each row's features, a [batch, n] SparseTensor."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    return _cross(inputs, False, 0, None, name)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None) -> SparseTensor:
    """tf.sparse.cross_hashed: the crosses as int64 hashes (in [0, num_buckets) if
    num_buckets > 0)."""
    if int(num_buckets) < 0:
        raise InvalidArgumentError(f"cross_hashed: num_buckets must not be negative, got "
                                   f"{num_buckets}")
    return _cross(inputs, True, num_buckets, hash_key, name)
