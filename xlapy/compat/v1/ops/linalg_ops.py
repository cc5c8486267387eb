"""Linear algebra: tf.matrix_inverse, matrix_determinant, log_matrix_determinant,
matrix_solve, cholesky, qr, svd, self_adjoint_eig(vals), tf.linalg.logdet / matvec
(diagonals, trace, transposes and eye are in diag_ops.py).

The kernels are numpy.linalg in the executor and xlapy.numpy.linalg when compiled (both
batched over leading dimensions, as TF's). TF's outputs and conventions: Svd returns
(s, u, v) with a = u diag(s) v^T and full_matrices=False by default; Qr (q, r), reduced by
default; SelfAdjointEigV2 and Cholesky read the lower triangle only.

Gradients: one "<Op>Grad" op per decomposition whose kernel and lowering take the
vector-Jacobian product of the forward rule with xlapy's autodiff (xlapy.frontend's vjp,
traced into the cluster when compiled, evaluated eagerly with 64-bit types kept in the
executor). The results are TF's gradients: the eigen-decomposition's is lower-triangular
(its forward reads only that triangle), Cholesky's symmetric.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops import _common
from xlapy.compat.v1.ops._common import make, make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _mT(m, x):
    return m.swapaxes(x, -1, -2)


def _square_infer(op):
    x = op.inputs[0]
    s = x.shape
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"{op.type} '{op.name}' needs a floating-point input, got "
                                   f"{x.dtype.name}")
    if s.ndims is not None:
        if s.ndims < 2:
            raise InvalidArgumentError(f"Shape must be at least rank 2 but is rank {s.ndims} "
                                       f"for '{op.name}' (op: '{op.type}')")
        a, b = s.dims[-2:]
        if a is not None and b is not None and a != b:
            raise InvalidArgumentError(f"Dimensions must be equal, but are {a} and {b} for "
                                       f"'{op.name}' (op: '{op.type}'): {op.type} needs "
                                       f"square matrices, got shape {s.tf_str()}")
    return x


def _batch(s: TensorShape, drop: int):
    return None if s.ndims is None else list(s.dims[:-drop])


# ---- forward rules: f(m, *inputs, **attrs) ------------------------------------------------

def _c(v, x):
    return np.asarray(v, dtype=x.dtype)


def _checked(m, what):
    """Run a NumPy factorization, turning its LinAlgError into TF's InvalidArgumentError
    (compiled, XLA's factorizations give NaN or Inf instead, as TF's XLA does)."""
    import contextlib
    if m is not np:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def guard():
        try:
            yield
        except np.linalg.LinAlgError as e:
            raise InvalidArgumentError(f"{what} ({e})") from None
    return guard()


def _inverse(m, x, adjoint=False):
    with _checked(m, "Input is not invertible."):
        y = m.linalg.inv(x)
    return _mT(m, y) if adjoint else y


def _det(m, x):
    return m.linalg.det(x)


def _slogdet(m, x):
    sign, logdet = m.linalg.slogdet(x)
    return sign, logdet


def _solve(m, a, b, adjoint=False):
    with _checked(m, "Input matrix is not invertible."):
        return m.linalg.solve(_mT(m, a) if adjoint else a, b)


def _cholesky(m, x):
    with _checked(m, "Cholesky decomposition was not successful. The input might not be "
                     "valid."):
        return m.linalg.cholesky(_lower_symmetric(m, x))  # TF reads the lower triangle


def _lower_symmetric(m, x):
    lower = m.tril(x)
    return m.add(lower, _mT(m, m.tril(x, -1)))


def _eigh(m, x, compute_v=True):
    sym = _lower_symmetric(m, x)
    e, v = m.linalg.eigh(sym)
    return (e, v) if compute_v else (e, m.zeros((0,), x.dtype))


def _svd(m, x, compute_uv=True, full_matrices=False):
    if not compute_uv:
        s = m.linalg.svd(x, compute_uv=False)
        z = m.zeros((0,), x.dtype)
        return s, z, z
    u, s, vh = m.linalg.svd(x, full_matrices=full_matrices)
    return s, u, _mT(m, vh)


def _qr(m, x, full_matrices=False):
    q, r = m.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return q, r


# ---- shape rules --------------------------------------------------------------------------

def _same_square(op):
    x = _square_infer(op)
    return [(x.dtype, x.shape)]


def _batch_scalar(op):
    x = _square_infer(op)
    b = _batch(x.shape, 2)
    return [(x.dtype, unknown_shape() if b is None else TensorShape(b))]


def _slogdet_infer(op):
    (d, s), = _batch_scalar(op)
    return [(d, s), (d, s)]


def _solve_infer(op):
    a, b = op.inputs
    _square_infer(op)
    if a.dtype != b.dtype:
        raise InvalidArgumentError(f"MatrixSolve '{op.name}': matrix has type {a.dtype.name}, "
                                   f"rhs {b.dtype.name}")
    if a.shape.ndims is not None and b.shape.ndims is not None:
        if a.shape.ndims != b.shape.ndims:
            raise InvalidArgumentError(f"MatrixSolve '{op.name}': matrix {a.shape.tf_str()} "
                                       f"and rhs {b.shape.tf_str()} must have the same rank")
        n, k = a.shape.dims[-1], b.shape.dims[-2]
        if n is not None and k is not None and n != k:
            raise InvalidArgumentError(f"MatrixSolve '{op.name}': the matrix has {n} rows, "
                                       f"the rhs {k}")
    return [(b.dtype, b.shape)]


def _eigh_infer(op):
    x = _square_infer(op)
    b = _batch(x.shape, 1)
    e = unknown_shape() if b is None else TensorShape(b)
    v = x.shape if op.get_attr("compute_v") else TensorShape([0])
    return [(x.dtype, e), (x.dtype, v)]


def _mn(op):
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"{op.type} '{op.name}' needs a floating-point input")
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise InvalidArgumentError(f"Shape must be at least rank 2 but is rank "
                                   f"{x.shape.ndims} for '{op.name}' (op: '{op.type}')")
    if x.shape.ndims is None:
        return x, None, None, None
    b = list(x.shape.dims[:-2])
    mm, nn = x.shape.dims[-2:]
    return x, b, mm, nn


def _svd_infer(op):
    x, b, mm, nn = _mn(op)
    if b is None:
        return [(x.dtype, unknown_shape())] * 3
    p = None if mm is None or nn is None else min(mm, nn)
    if not op.get_attr("compute_uv"):
        return [(x.dtype, TensorShape(b + [p])), (x.dtype, TensorShape([0])),
                (x.dtype, TensorShape([0]))]
    full = op.get_attr("full_matrices")
    return [(x.dtype, TensorShape(b + [p])),
            (x.dtype, TensorShape(b + [mm, mm if full else p])),
            (x.dtype, TensorShape(b + [nn, nn if full else p]))]


def _qr_infer(op):
    x, b, mm, nn = _mn(op)
    if b is None:
        return [(x.dtype, unknown_shape())] * 2
    p = None if mm is None or nn is None else min(mm, nn)
    full = op.get_attr("full_matrices")
    return [(x.dtype, TensorShape(b + [mm, mm if full else p])),
            (x.dtype, TensorShape(b + [mm if full else p, nn]))]


# ---- registration, with vjp gradient ops ---------------------------------------------------

def _vjp_kernel(fwd, n_in, n_out, at=None):
    def kernel(m, *args, **attrs):
        import xlapy.numpy as xnp
        from xlapy.config import enable_x64
        from xlapy.frontend.autodiff import vjp
        xs, cts = args[:n_in], args[n_in:]
        with enable_x64(True):
            if at is not None:
                xs = at(m, *xs)
            _, back = vjp(lambda *v: fwd(xnp, *v, **attrs), *xs)
            res = back(tuple(cts) if n_out > 1 else cts[0])
        if m is np:
            res = [np.asarray(r, dtype=np.asarray(x).dtype) for r, x in zip(res, xs)]
        return tuple(res) if n_in > 1 else res[0]
    return kernel


def _register(op_type, fwd, infer, attrs=(), n_in=1, n_out=1, grad_outputs=None,
              grad_fwd=None, grad_at=None):
    """Register op_type (kernel and lowering: fwd) and op_type+"Grad" (the vjp), and the
    gradient function. grad_outputs: which outputs carry a gradient (others are integer or
    empty placeholders). grad_fwd / grad_at: the function differentiated instead of fwd,
    at the point grad_at(m, *inputs) (Cholesky: TF's symmetric gradient)."""
    register_op(op_type, infer=infer, attrs=attrs)(fwd)
    gtype = op_type + "Grad"
    register_op(gtype, infer=lambda op: [(t.dtype, t.shape) for t in op.inputs[:n_in]],
                attrs=attrs)(_vjp_kernel(grad_fwd or fwd, n_in, n_out, grad_at))
    wanted = tuple(range(n_out)) if grad_outputs is None else grad_outputs

    @register_gradient(op_type)
    def _grad(op, *grads):
        from xlapy.compat.v1.ops.array_ops import zeros_like
        if all(grads[i] is None for i in wanted):
            return [None] * n_in
        cts = [grads[i] if grads[i] is not None else zeros_like(op.outputs[i])
               for i in range(n_out)]
        g = make_op(gtype, list(op.inputs[:n_in]) + cts,
                    {k: op.get_attr(k) for k in attrs})
        return list(g.outputs)


_register("MatrixInverse", _inverse, _same_square, ("adjoint",))
_register("MatrixDeterminant", _det, _batch_scalar)
_register("LogMatrixDeterminant", _slogdet, _slogdet_infer, n_out=2, grad_outputs=(1,))
_register("MatrixSolve", _solve, _solve_infer, ("adjoint",), n_in=2)
_register("Cholesky", _cholesky, _same_square,
          grad_fwd=lambda m, x: m.linalg.cholesky(m.multiply(m.add(x, _mT(m, x)), _c(0.5, x))),
          grad_at=lambda m, x: (_lower_symmetric(m, x),))
_register("SelfAdjointEigV2", _eigh, _eigh_infer, ("compute_v",), n_out=2)
_register("Svd", _svd, _svd_infer, ("compute_uv", "full_matrices"), n_out=3)
_register("Qr", _qr, _qr_infer, ("full_matrices",), n_out=2)

# ---- user-facing functions --------------------------------------------------------------------

def matrix_inverse(input, adjoint=False, name=None):
    return make("MatrixInverse", [tensor(input)], {"adjoint": bool(adjoint)}, name=name)


def matrix_determinant(input, name=None):
    return make("MatrixDeterminant", [tensor(input)], name=name)


def log_matrix_determinant(input, name=None):
    """(sign, log|det|) of each matrix."""
    return make("LogMatrixDeterminant", [tensor(input)], name=name)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    return make("MatrixSolve", [tensor(matrix), tensor(rhs)], {"adjoint": bool(adjoint)},
                name=name)


def cholesky(input, name=None):
    return make("Cholesky", [tensor(input)], name=name)


def self_adjoint_eig(tensor, name=None):
    """(e, v): eigenvalues ascending and eigenvectors (columns) of each self-adjoint matrix,
    from its lower triangle."""
    return make("SelfAdjointEigV2", [_common.tensor(tensor)], {"compute_v": True}, name=name)


def self_adjoint_eigvals(tensor, name=None):
    return make("SelfAdjointEigV2", [_common.tensor(tensor)], {"compute_v": False},
                name=name)[0]


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, u, v) with tensor = u diag(s) v^T, as TF's (v, not its transpose); s alone when
    compute_uv=False."""
    out = make("Svd", [_common.tensor(tensor)], {"compute_uv": bool(compute_uv),
                                                 "full_matrices": bool(full_matrices)},
               name=name)
    return out if compute_uv else out[0]


def qr(input, full_matrices=False, name=None):
    return make("Qr", [tensor(input)], {"full_matrices": bool(full_matrices)}, name=name)

def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive-definite matrices, through Cholesky."""
    from xlapy.compat.v1.ops.math_ops import log, multiply, reduce_sum
    matrix = tensor(matrix)
    with get_default_graph().name_scope(name or "logdet"):
        chol = cholesky(matrix)
        from xlapy.compat.v1.ops.diag_ops import matrix_diag_part
        return multiply(tensor(np.asarray(2.0, matrix.dtype.np)),
                        reduce_sum(log(matrix_diag_part(chol)), [-1]))


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """a @ b for a matrix a and a vector b (rank 2 and 1, as tf.matmul here)."""
    from xlapy.compat.v1.ops.array_ops import expand_dims, squeeze
    from xlapy.compat.v1.ops.math_ops import matmul
    with get_default_graph().name_scope(name or "MatVec"):
        return squeeze(matmul(a, expand_dims(tensor(b), -1), transpose_a=transpose_a,
                              adjoint_a=adjoint_a), [-1])
