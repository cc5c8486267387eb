"""Diagonals and transposes: tf.diag / diag_part (rank 2k <-> rank k), tf.linalg.diag /
diag_part (batched main diagonals, MatrixDiag / MatrixDiagPart), tf.trace,
tf.matrix_transpose and tf.eye. Kernels are written once against the array module `m`
(NumPy in the executor, xlapy.numpy compiled); gradients are TF's (each op's adjoint is
the other; a non-square diagonal part's through MatrixDiagPartGrad)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _diag_infer(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims == 0:
        raise InvalidArgumentError(f"Diag '{op.name}': input must be at least rank 1, got a "
                                   "scalar")
    return [(x.dtype, x.shape.concatenate(x.shape))]


def _diag(m, x):
    n = int(np.prod(x.shape))
    return m.reshape(m.diag(m.reshape(x, (n,))), tuple(x.shape) * 2)


def _diag_part_infer(op):
    x = op.inputs[0]
    s = x.shape
    if s.ndims is None:
        return [(x.dtype, unknown_shape())]
    if s.ndims == 0 or s.ndims % 2:
        raise InvalidArgumentError(f"DiagPart '{op.name}': input must have an even, nonzero "
                                   f"rank, got {s.tf_str()}")
    k = s.ndims // 2
    dims = []
    for a, b in zip(s.dims[:k], s.dims[k:]):
        if a is not None and b is not None and a != b:
            raise InvalidArgumentError(f"DiagPart '{op.name}': invalid shape {s.tf_str()}: "
                                       "the first half of the dimensions must equal the "
                                       "second half")
        dims.append(a if a is not None else b)
    return [(x.dtype, TensorShape(dims))]


def _diag_part(m, x):
    k = x.ndim // 2
    half = tuple(x.shape[:k])
    n = int(np.prod(half))
    return m.reshape(m.diagonal(m.reshape(x, (n, n))), half)


def _matrix_diag_infer(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims < 1:
        raise InvalidArgumentError(f"MatrixDiag '{op.name}': input must be at least rank 1")
    return [(x.dtype, x.shape.concatenate([x.shape.dims[-1]]))]


def _matrix_diag(m, x):
    n = x.shape[-1]
    eye = np.eye(n, dtype=x.dtype)
    return m.multiply(m.expand_dims(x, -1), eye)


def _matrix_diag_part_infer(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims < 2:
        raise InvalidArgumentError(f"MatrixDiagPart '{op.name}': input must be at least rank 2")
    a, b = x.shape.dims[-2:]
    p = None if a is None or b is None else min(a, b)
    return [(x.dtype, TensorShape(list(x.shape.dims[:-2]) + [p]))]


def _matrix_diag_part(m, x):
    return m.diagonal(x, axis1=-2, axis2=-1)


register_op("Diag", infer=_diag_infer)(_diag)
register_op("DiagPart", infer=_diag_part_infer)(_diag_part)
register_op("MatrixDiag", infer=_matrix_diag_infer)(_matrix_diag)
register_op("MatrixDiagPart", infer=_matrix_diag_part_infer)(_matrix_diag_part)


@register_gradient("Diag")
def _diag_grad(op, g):
    return [make("DiagPart", [g])]


@register_gradient("DiagPart")
def _diag_part_grad(op, g):
    return [make("Diag", [g])]


@register_gradient("MatrixDiag")
def _matrix_diag_grad(op, g):
    return [make("MatrixDiagPart", [g])]


@register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    from xlapy.compat.v1.ops.math_ops import add
    x = op.inputs[0]
    dims = x.shape.dims
    if dims is not None and dims[-1] is not None and dims[-1] == dims[-2]:
        return [make("MatrixDiag", [g])]
    # non-square: place g on the main diagonal of zeros shaped like x (a vjp op)
    return [add(zeros_like(x), make("MatrixDiagPartGrad", [x, g]))]


@register_op("MatrixDiagPartGrad", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _matrix_diag_part_grad_kernel(m, x, g):
    r, c = x.shape[-2:]
    g_rows = m.pad(g, [(0, 0)] * (g.ndim - 1) + [(0, r - min(r, c))])  # [..., r]
    return m.multiply(m.expand_dims(g_rows, -1), np.eye(r, c, dtype=x.dtype))


def diag(diagonal, name=None):
    """tf.diag: a tensor of rank 2k with `diagonal` (rank k) on its diagonal."""
    return make("Diag", [tensor(diagonal)], name=name)


def diag_part(input, name=None):
    return make("DiagPart", [tensor(input)], name=name)


def matrix_diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0):
    if k != 0 or num_rows != -1 or num_cols != -1 or padding_value != 0:
        raise InvalidArgumentError("matrix_diag: only the main diagonal (k=0, default "
                                   "num_rows, num_cols and padding_value) is supported")
    return make("MatrixDiag", [tensor(diagonal)], name=name)


def matrix_diag_part(input, name=None, k=0, padding_value=0):
    if k != 0 or padding_value != 0:
        raise InvalidArgumentError("matrix_diag_part: only the main diagonal (k=0) is "
                                   "supported")
    return make("MatrixDiagPart", [tensor(input)], name=name)


def trace(x, name=None):
    """The sum of the main diagonal of each innermost matrix."""
    from xlapy.compat.v1.ops.math_ops import reduce_sum
    x = tensor(x)
    with get_default_graph().name_scope(name or "Trace"):
        return reduce_sum(matrix_diag_part(x), [-1])


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    from xlapy.compat.v1.ops.array_ops import transpose
    a = tensor(a)
    r = a.shape.ndims
    if r is None:
        raise InvalidArgumentError("matrix_transpose needs the rank of its input to be known")
    if r < 2:
        raise InvalidArgumentError(f"matrix_transpose: input must have rank >= 2, got "
                                   f"shape {a.shape.tf_str()}")
    if conjugate and a.dtype.is_complex:  # (tf.linalg.adjoint)
        from xlapy.compat.v1.ops.spectral_ops import conj  # (complex inputs only)
        with get_default_graph().name_scope(name):
            return conj(transpose(a, list(range(r - 2)) + [r - 1, r - 2]))
    return transpose(a, list(range(r - 2)) + [r - 1, r - 2], name=name)


def eye(num_rows, num_columns=None, batch_shape=None, dtype="float32", name=None):
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.framework import constant_op
    from xlapy.compat.v1.ops._common import constant_value

    def static(v, what):
        if hasattr(v, "op"):
            c = constant_value(v)
            if c is None:
                raise InvalidArgumentError(f"eye: {what} must be known when the graph is "
                                           "built (a Python int or a constant)")
            v = c
        return int(np.asarray(v))
    n = static(num_rows, "num_rows")
    cols = n if num_columns is None else static(num_columns, "num_columns")
    if n < 0 or cols < 0:
        raise InvalidArgumentError(f"eye: num_rows and num_columns must be non-negative, got "
                                   f"{n} and {cols}")
    batch = [] if batch_shape is None else [static(b, "batch_shape") for b in
                                            (batch_shape if not hasattr(batch_shape, "op")
                                             else list(constant_value(batch_shape)))]
    dt = dtypes.as_dtype(dtype)
    value = np.broadcast_to(np.eye(n, cols, dtype=dt.np), batch + [n, cols]).copy()
    return constant_op(value, dt, name=name or "eye")


