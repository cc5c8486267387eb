"""More array ops of TF 1.x: tf.roll, tf.matrix_set_diag, tf.matrix_triangular_solve,
tf.tensor_scatter_nd_update / add / sub, tf.batch_gather, tf.setdiff1d, tf.unravel_index.

Roll, MatrixSetDiag, MatrixTriangularSolve and the TensorScatter ops have kernels,
lowerings and TF's gradients (the triangular solve's through the vjp gradient op of
linalg_ops, which keeps it to the triangle the op reads); ListDiff (setdiff1d) has a
data-dependent output shape and runs in the executor.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, make_op, tensor
from xlapy.compat.v1.ops.linalg_ops import _mT, _register
from xlapy.compat.v1.tensor_shape import TensorShape


def _same_as_first(op):
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


# ---- roll ----------------------------------------------------------------------------------

@register_op("Roll", infer=_same_as_first, const_inputs=(1, 2))
def _roll(m, x, shift, axis):
    shifts, axes = ints(shift), ints(axis)
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"roll: shift {shifts} and axis {axes} must have the same "
                                   "length")
    return m.roll(x, shifts if len(shifts) > 1 else shifts[0],
                  axes if len(axes) > 1 else axes[0])


@register_gradient("Roll")
def _roll_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import negative
    return [roll(g, negative(op.inputs[1]), op.inputs[2]), None, None]


def roll(input, shift, axis, name=None):
    def as_t(v):
        return v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int32))
    return make("Roll", [tensor(input), as_t(shift), as_t(axis)], name=name or "Roll")


# ---- matrix_set_diag ------------------------------------------------------------------------

def _set_diag_infer(op):
    x, d = op.inputs
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise InvalidArgumentError(f"matrix_set_diag: input must be at least rank 2, got "
                                   f"{x.shape.tf_str()}")
    return [(x.dtype, x.shape)]


@register_op("MatrixSetDiag", infer=_set_diag_infer)
def _set_diag(m, x, d):
    r, c = x.shape[-2:]
    eye = np.eye(r, c, dtype=x.dtype)
    d_rows = m.pad(d, [(0, 0)] * (d.ndim - 1) + [(0, r - min(r, c))])
    return m.add(m.multiply(x, np.asarray(1, x.dtype) - eye),
                 m.multiply(m.expand_dims(d_rows, -1), eye))


@register_gradient("MatrixSetDiag")
def _set_diag_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    from xlapy.compat.v1.ops.diag_ops import matrix_diag_part
    diag = matrix_diag_part(g)
    return [matrix_set_diag(g, zeros_like(diag)), diag]


def matrix_set_diag(input, diagonal, name=None, k=0):
    if k != 0:
        raise InvalidArgumentError("matrix_set_diag: only the main diagonal (k=0) is "
                                   "supported")
    return make("MatrixSetDiag", [tensor(input), tensor(diagonal)], name=name)


# ---- matrix_triangular_solve ------------------------------------------------------------------

def _tri_solve(m, a, b, lower=True, adjoint=False):
    tri = m.tril(a) if lower else m.triu(a)
    if adjoint:
        tri = _mT(m, tri)
    if m is np:
        try:
            return np.linalg.solve(tri, b)
        except np.linalg.LinAlgError as e:
            raise InvalidArgumentError(f"Input matrix is not invertible. ({e})") from None
    return m.linalg.solve(tri, b)


def _tri_infer(op):
    a, b = op.inputs
    if a.dtype != b.dtype:
        raise InvalidArgumentError(f"matrix_triangular_solve: matrix is {a.dtype.name}, rhs "
                                   f"{b.dtype.name}")
    return [(b.dtype, b.shape)]


_register("MatrixTriangularSolve", _tri_solve, _tri_infer, ("lower", "adjoint"), n_in=2)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves matrix @ x = rhs for x, reading only the lower (or upper) triangle."""
    return make("MatrixTriangularSolve", [tensor(matrix), tensor(rhs)],
                {"lower": bool(lower), "adjoint": bool(adjoint)}, name=name)


# ---- tensor_scatter_nd_* ---------------------------------------------------------------------

def _scatter_infer(op):
    x, idx, upd = op.inputs
    if idx.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"indices must be int32 or int64, got {idx.dtype.name}")
    if upd.dtype != x.dtype:
        raise InvalidArgumentError(f"updates ({upd.dtype.name}) must have the tensor's dtype "
                                   f"({x.dtype.name})")
    return [(x.dtype, x.shape)]


def _scatter(kind):
    def kernel(m, x, idx, upd):
        k = idx.shape[-1]
        flat_idx = tuple(m.moveaxis(m.reshape(idx, (-1, k)), -1, 0)) if m is not np else \
            tuple(np.reshape(idx, (-1, k)).T)
        rows = m.reshape(upd, (-1,) + tuple(x.shape[k:]))
        if m is np:
            for j, n in enumerate(x.shape[:k]):
                bad = (flat_idx[j] < 0) | (flat_idx[j] >= n)
                if bad.any():
                    raise InvalidArgumentError(f"indices[{int(np.argmax(bad))}] = "
                                               f"{np.reshape(idx, (-1, k))[np.argmax(bad)]} "
                                               f"does not index into shape {list(x.shape)}")
            out = np.array(x, copy=True)
            if kind == "set":
                out[flat_idx] = rows
            else:
                np.add.at(out, flat_idx, rows if kind == "add" else -rows)
            return out
        ref = m.at(x)[flat_idx]
        return ref.set(rows) if kind == "set" else ref.add(rows if kind == "add"
                                                           else m.negative(rows))
    return kernel


register_op("TensorScatterUpdate", infer=_scatter_infer)(_scatter("set"))
register_op("TensorScatterAdd", infer=_scatter_infer)(_scatter("add"))
register_op("TensorScatterSub", infer=_scatter_infer)(_scatter("sub"))


@register_gradient("TensorScatterUpdate")
def _scatter_update_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    _, idx, upd = op.inputs
    return [make("TensorScatterUpdate", [g, idx, zeros_like(upd)]), None, gather_nd(g, idx)]


@register_gradient("TensorScatterAdd")
def _scatter_add_grad(op, g):
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    return [g, None, gather_nd(g, op.inputs[1])]


@register_gradient("TensorScatterSub")
def _scatter_sub_grad(op, g):
    from xlapy.compat.v1.ops.gather_ops import gather_nd
    from xlapy.compat.v1.ops.math_ops import negative
    return [g, None, negative(gather_nd(g, op.inputs[1]))]


def _scatter_fn(op_type):
    def f(tensor_, indices, updates, name=None):
        x = tensor(tensor_)
        return make(op_type, [x, tensor(indices), tensor(updates, dtype=x.dtype)], name=name)
    return f


tensor_scatter_nd_update = tensor_scatter_update = _scatter_fn("TensorScatterUpdate")
tensor_scatter_nd_add = tensor_scatter_add = _scatter_fn("TensorScatterAdd")
tensor_scatter_nd_sub = tensor_scatter_sub = _scatter_fn("TensorScatterSub")


# ---- batch_gather, unravel_index, setdiff1d ------------------------------------------------------

def batch_gather(params, indices, name=None):
    """params[b..., indices[b..., j], ...]: a gather in each batch (the leading
    indices.rank - 1 dimensions)."""
    from xlapy.compat.v1.ops.array_ops import broadcast_to, reshape, shape, stack
    from xlapy.compat.v1.ops.gather_ops import gather, gather_nd
    from xlapy.compat.v1.ops.manip_ops import range_
    p, idx = tensor(params), tensor(indices)
    r = idx.shape.ndims
    if r is None:
        raise InvalidArgumentError("batch_gather needs the rank of indices")
    with get_default_graph().name_scope(name or "batch_gather"):
        if r == 1:
            return gather(p, idx)
        s = shape(idx)
        coords = []
        for i in range(r - 1):
            dims = [1] * r
            dims[i] = -1
            coords.append(broadcast_to(reshape(range_(s[i], dtype=idx.dtype), dims), s))
        return gather_nd(p, stack(coords + [idx], axis=-1))


def unravel_index(indices, dims, name=None):
    """The coordinates of flat `indices` in an array of shape `dims`: [len(dims), ...]."""
    from xlapy.compat.v1.ops.array_ops import stack
    from xlapy.compat.v1.ops.math_ops import floordiv, mod
    idx = tensor(indices)
    dv = constant_value(dims) if isinstance(dims, Tensor) else np.asarray(dims)
    if dv is None:
        raise InvalidArgumentError("unravel_index needs dims known when the graph is built")
    dv = [int(d) for d in np.reshape(dv, [-1])]
    with get_default_graph().name_scope(name or "UnravelIndex"):
        out, rest = [], idx
        for d in reversed(dv):
            dt = tensor(np.asarray(d, idx.dtype.np))
            out.append(mod(rest, dt))
            rest = floordiv(rest, dt)
        return stack(out[::-1], axis=0)


@register_op("ListDiff", lowering=None, attrs=("out_idx",),
             infer=lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                               (op.get_attr("out_idx"), TensorShape([None]))])
def _list_diff(m, x, y, out_idx=dtypes.int32):
    if x.ndim != 1 or y.ndim != 1:
        raise InvalidArgumentError("setdiff1d: x and y must be 1-D")
    keep = ~np.isin(x, y)
    return x[keep], np.nonzero(keep)[0].astype(out_idx.np)


not_differentiable("ListDiff")
_ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The values of x not in y (in x's order, duplicates kept) and their positions."""
    x = tensor(x)
    op = make_op("ListDiff", [x, tensor(y, dtype=x.dtype)],
                 {"out_idx": dtypes.as_dtype(index_dtype)}, name=name)
    return _ListDiff(*op.outputs)


