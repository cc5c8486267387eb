"""tf.assign / assign_add / assign_sub on variables (or their reference tensors) and the
row updates tf.scatter_update / scatter_add / scatter_sub.

The Scatter* ops update the variable in place (a ref input, like Assign): out-of-range
indices raise in the executor (TF's CPU kernel) and are dropped when compiled (XLA's
scatter). Duplicate indices accumulate for add/sub; for update the last one wins.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor


def _ref(ref) -> Tensor:
    r = ref._ref() if hasattr(ref, "_ref") else ref
    if not isinstance(r, Tensor) or r.op.type != "VariableV2":
        raise InvalidTypeError(f"the first argument must be a tf.Variable (or its reference), "
                               f"got {ref!r}")
    return r


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    r = _ref(ref)
    return make("Assign", [r, tensor(value, dtype=r.dtype)],
                {"validate_shape": True if validate_shape is None else bool(validate_shape),
                 "use_locking": bool(use_locking)}, name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    r = _ref(ref)
    return make("AssignAdd", [r, tensor(value, dtype=r.dtype)], name=name or "AssignAdd")


def assign_sub(ref, value, use_locking=None, name=None):
    r = _ref(ref)
    return make("AssignSub", [r, tensor(value, dtype=r.dtype)], name=name or "AssignSub")


def _scatter_infer(op):
    ref, idx, upd = op.inputs
    if idx.dtype.name not in ("int32", "int64"):
        raise InvalidTypeError(f"indices must be int32 or int64, got {idx.dtype.name}")
    if ref.op.type != "VariableV2":
        raise InvalidTypeError(f"'{op.name}' ({op.type}) needs a variable as its first input")
    if upd.dtype != ref.dtype:
        raise InvalidTypeError(f"'{op.name}' ({op.type}): updates have dtype "
                               f"{upd.dtype.name}, the variable has {ref.dtype.name}")
    return [(ref.dtype, ref.shape)]


def _check_rows(idx, n):
    idx = np.asarray(idx)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)].flat[0]
        raise InvalidArgumentError(f"indices[{int(np.argwhere(idx.reshape(-1) == bad)[0][0])}]"
                                   f" = {bad} is not in [0, {n})")


def _scatter(kind):
    def kernel(m, ref, indices, updates):
        if m is np:
            _check_rows(indices, ref.shape[0])
            out = np.array(ref)
            if kind == "update":
                out[indices] = updates
            else:
                np.add.at(out, indices, updates if kind == "add" else -updates)
            return (out,)
        at = m.at(ref)[indices]
        if kind == "update":
            return (at.set(updates),)
        return (at.add(updates if kind == "add" else m.negative(updates)),)
    return kernel


for _t, _k in (("ScatterUpdate", "update"), ("ScatterAdd", "add"), ("ScatterSub", "sub")):
    register_op(_t, infer=_scatter_infer, ref_inputs=(0,))(_scatter(_k))
not_differentiable("ScatterUpdate", "ScatterAdd", "ScatterSub")


def _scatter_fn(op_type):
    def fn(ref, indices, updates, use_locking=True, name=None):
        r = _ref(ref)
        return make(op_type, [r, tensor(indices), tensor(updates, dtype=r.dtype)],
                    name=name or op_type)
    fn.__name__ = op_type
    return fn


scatter_update = _scatter_fn("ScatterUpdate")
scatter_add = _scatter_fn("ScatterAdd")
scatter_sub = _scatter_fn("ScatterSub")
