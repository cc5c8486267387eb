"""tf.fingerprint: TF's Fingerprint op with its one method, 'farmhash64'.

The first dimension of `data` is the batch: row i of the uint8 [batch, 8] output is the
FarmHash Fingerprint64 (lookup_ops.fingerprint64, the hash of StringToHashBucketFast) of
the raw bytes of data[i, ...], written little-endian. Numbers are hashed as their
little-endian bytes, so the result does not change under a reshape that keeps the batch
dimension. A row of strings holding one string is the fingerprint of that string; a row of
several strings the fingerprint of the concatenated 8-byte fingerprints of its strings.

The hashing runs in the executor (FarmHash on 64-bit integers in Python: no XLA lowering).
Not differentiable (TF registers no gradient; the output is bytes).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.lookup_ops import fingerprint64
from xlapy.compat.v1.tensor_shape import TensorShape

_METHOD = b"farmhash64"


def _as_bytes(v) -> bytes:
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _check_method(v):
    v = v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v
    if isinstance(v, np.ndarray):
        raise InvalidArgumentError(f"`method` should be a scalar string: {list(v.shape)}")
    if _as_bytes(v) != _METHOD:
        raise InvalidArgumentError(f"Unsupported fingerprint method: {_as_bytes(v).decode()}")


def _fingerprint_infer(op):
    data, method = op.inputs
    if method.dtype != dtypes.string:
        raise InvalidTypeError(f"'{op.name}' (Fingerprint): method must be a string, got "
                               f"{method.dtype.name}")
    if method.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"`method` should be a scalar string: "
                                   f"{method.shape.tf_str()}")
    v = constant_value(method)
    if v is not None:
        _check_method(v)
    if data.shape.ndims == 0:
        raise InvalidArgumentError("`data` should have at least one dimension: []")
    batch = data.shape.dims[0] if data.shape.ndims is not None else None
    return [(dtypes.uint8, TensorShape([batch, 8]))]


def _le_bytes(fp: int) -> np.ndarray:
    return np.frombuffer(fp.to_bytes(8, "little"), np.uint8)


@register_op("Fingerprint", infer=_fingerprint_infer, lowering=None)
def _fingerprint(m, data, method):
    _check_method(method)
    data = np.asarray(data)
    if data.ndim == 0:
        raise InvalidArgumentError("`data` should have at least one dimension: []")
    n = data.shape[0]
    rows = data.reshape(n, -1)
    out = np.empty((n, 8), np.uint8)
    for i, row in enumerate(rows):
        if data.dtype == object:
            fps = [fingerprint64(_as_bytes(s)) for s in row]
            fp = fps[0] if len(fps) == 1 else \
                fingerprint64(b"".join(f.to_bytes(8, "little") for f in fps))
        else:
            fp = fingerprint64(row.astype(row.dtype.newbyteorder("<")).tobytes())
        out[i] = _le_bytes(fp)
    return out


not_differentiable("Fingerprint")


def fingerprint(data, method="farmhash64", name=None):
    """uint8 [batch, 8]: the little-endian FarmHash Fingerprint64 of each data[i, ...]."""
    return make("Fingerprint", [tensor(data), tensor(method, dtypes.string)],
                name=name or "Fingerprint")
