"""tf.linalg.LinearOperatorFullMatrix, LinearOperatorDiag and LinearOperatorIdentity: the
common subset of TF 1.15's LinearOperator interface (shape, dtype, hints, to_dense, matmul,
matvec, solve, solvevec, determinant, log_abs_determinant, diag_part, trace, adjoint / H),
built from ordinary ops so that they compile and differentiate as those do.

An operator stands for a batch of [M, N] matrices (batch_shape + [M, N]); matmul(x) is
A @ x for x of shape batch_shape + [N, R] (batch dimensions broadcast as tf.matmul's),
matvec(x) is A @ x for x of shape batch_shape + [N]. Not included: operators as matmul
arguments (composition), the other operator classes, cond / inverse / eigvals,
add_to_tensor and the assert_* methods.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.framework import convert_to_tensor, name_scope
from xlapy.compat.v1.ops.array_ops import expand_dims, ones, squeeze, unstack, zeros
from xlapy.compat.v1.ops.diag_ops import (eye, matrix_diag, matrix_diag_part,
                                          matrix_transpose)
from xlapy.compat.v1.ops.linalg_ops import (cholesky, log_matrix_determinant,
                                            matrix_determinant, matrix_solve)
from xlapy.compat.v1.ops.math_ops import (abs as _abs, log, matmul, multiply, reduce_prod,
                                          reduce_sum, truediv)
from xlapy.compat.v1.ops.spectral_ops import conj, real
from xlapy.compat.v1.tensor_shape import TensorShape

_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64,
             dtypes.complex128)


def _adj(x):
    """The conjugate transpose of the last two dimensions."""
    return matrix_transpose(x, conjugate=True)


class LinearOperator:
    """The interface the operators share; subclasses supply _shape, _to_dense and the
    methods they compute without densifying."""

    def __init__(self, dtype, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular and is_square is False:
            raise ValueError("A non-singular matrix is always square.")
        if is_non_singular:
            is_square = True
        if is_self_adjoint and is_square is False:
            raise ValueError("A self-adjoint matrix is always square.")
        if is_self_adjoint:
            is_square = True
        self._dtype = dtypes.as_dtype(dtype)
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_hint = is_square
        self._name = name or type(self).__name__

    # ---- static properties -----------------------------------------------------------------
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    is_non_singular = property(lambda self: self._is_non_singular)
    is_self_adjoint = property(lambda self: self._is_self_adjoint)
    is_positive_definite = property(lambda self: self._is_positive_definite)

    @property
    def shape(self) -> TensorShape:
        return self._shape()

    @property
    def batch_shape(self) -> TensorShape:
        return self.shape[:-2]

    @property
    def tensor_rank(self):
        return self.shape.ndims

    @property
    def domain_dimension(self):
        return self.shape[-1]

    @property
    def range_dimension(self):
        return self.shape[-2]

    @property
    def is_square(self):
        """The is_square hint, else whether the static shape is square (None: unknown)."""
        return self._square()

    def _square(self):
        m, n = self.shape.as_list()[-2:]
        auto = None if m is None or n is None else m == n
        if self._is_square_hint is not None and auto is not None \
                and self._is_square_hint != auto:
            raise ValueError(f"{self.name}: is_square={self._is_square_hint} but the shape "
                             f"{self.shape} says otherwise")
        return auto if self._is_square_hint is None else self._is_square_hint

    @contextlib.contextmanager
    def _scope(self, name):
        with name_scope(self.name), name_scope(name) as scope:
            yield scope

    # ---- checks ----------------------------------------------------------------------------
    def _input(self, x, what):
        x = convert_to_tensor(x, dtype=self.dtype if not hasattr(x, "dtype") else None,
                              name=what)
        if x.dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype.name}. Found: "
                            f"{x.dtype.name} in tensor {x.name}")
        return x

    def _check_dims(self, x, self_dim, arg_dim, op):
        a, b = self.shape[self_dim], (x.shape[arg_dim] if x.shape.ndims else None)
        a = a.value if hasattr(a, "value") else a
        b = b.value if hasattr(b, "value") else b
        if a is not None and b is not None and a != b:
            raise ValueError(f"{self.name}.{op}: dimension {self_dim} of the operator "
                             f"({a}) and dimension {arg_dim} of the argument ({b}) are not "
                             f"compatible (operator shape {self.shape}, argument shape "
                             f"{x.shape})")

    def _need_square(self, what):
        if self.is_square is False:
            raise NotImplementedError(f"{what} not implemented for an operator that is "
                                      f"expected to not be square.")

    # ---- the operator's methods ------------------------------------------------------------
    def to_dense(self, name="to_dense"):
        with self._scope(name):
            return self._to_dense()

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """A @ x (adjoint: A^H @ x; adjoint_arg: A @ x^H)."""
        if isinstance(x, LinearOperator):
            raise TypeError(f"{self.name}.matmul: a LinearOperator argument (operator "
                            f"composition) is not supported; pass x.to_dense()")
        with self._scope(name):
            x = self._input(x, "x")
            if x.shape.ndims is not None and x.shape.ndims < 2:
                raise ValueError(f"{self.name}.matmul: x must have rank >= 2 (use matvec "
                                 f"for vectors), got shape {x.shape}")
            self._check_dims(x, -2 if adjoint else -1, -1 if adjoint_arg else -2, "matmul")
            return self._matmul(x, adjoint, adjoint_arg)

    def matvec(self, x, adjoint=False, name="matvec"):
        """A @ x for vectors x (batch_shape + [N])."""
        with self._scope(name):
            x = self._input(x, "x")
            if x.shape.ndims is not None and x.shape.ndims < 1:
                raise ValueError(f"{self.name}.matvec: x must have rank >= 1, got a scalar")
            self._check_dims(x, -2 if adjoint else -1, -1, "matvec")
            return squeeze(self._matmul(expand_dims(x, -1), adjoint, False), axis=[-1])

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """X with A @ X = rhs (adjoint: A^H @ X = rhs; adjoint_arg: rhs^H)."""
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        self._need_square("Exact solve")
        with self._scope(name):
            rhs = self._input(rhs, "rhs")
            if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
                raise ValueError(f"{self.name}.solve: rhs must have rank >= 2 (use solvevec "
                                 f"for vectors), got shape {rhs.shape}")
            self._check_dims(rhs, -1 if adjoint else -2, -1 if adjoint_arg else -2, "solve")
            return self._solve(rhs, adjoint, adjoint_arg)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        with self._scope(name):
            rhs = self._input(rhs, "rhs")
            return squeeze(self.solve(expand_dims(rhs, -1), adjoint=adjoint), axis=[-1])

    def determinant(self, name="det"):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._scope(name):
            return self._determinant()

    def log_abs_determinant(self, name="log_abs_det"):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._scope(name):
            return self._log_abs_determinant()

    def diag_part(self, name="diag_part"):
        with self._scope(name):
            return self._diag_part()

    def trace(self, name="trace"):
        with self._scope(name):
            return reduce_sum(self._diag_part(), axis=-1)

    def adjoint(self, name="adjoint"):
        """The operator A^H (self where A is self-adjoint)."""
        if self.is_self_adjoint:
            return self
        return self._adjoint(name)

    H = property(lambda self: self.adjoint())

    # ---- defaults through the dense matrix -------------------------------------------------
    def _matmul(self, x, adjoint, adjoint_arg):
        a = self._to_dense()
        return matmul(_adj(a) if adjoint else a, _adj(x) if adjoint_arg else x)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = _adj(rhs) if adjoint_arg else rhs
        return matrix_solve(self._to_dense(), rhs, adjoint=adjoint)

    def _determinant(self):
        return matrix_determinant(self._to_dense())

    def _log_abs_determinant(self):
        return log_matrix_determinant(self._to_dense())[1]

    def _diag_part(self):
        return matrix_diag_part(self._to_dense())


class LinearOperatorFullMatrix(LinearOperator):
    """The operator of a dense matrix (batch_shape + [M, N])."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorFullMatrix"):
        with name_scope(name):
            matrix = convert_to_tensor(matrix, name="matrix")
        if matrix.dtype not in _FLOATING:
            raise TypeError(f"Argument matrix must have dtype in "
                            f"{[d.name for d in _FLOATING]}. Found: {matrix.dtype.name}")
        if matrix.shape.ndims is not None and matrix.shape.ndims < 2:
            raise ValueError(f"Argument matrix must have at least 2 dimensions. Found: "
                             f"{matrix.shape}")
        self._matrix = matrix
        super().__init__(matrix.dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)
        self._square()   # (raises on a hint the static shape contradicts)

    def _shape(self):
        return self._matrix.shape

    def _to_dense(self):
        return self._matrix

    def _log_abs_determinant(self):
        if self.is_positive_definite:   # through the Cholesky factor, as TF's
            d = matrix_diag_part(cholesky(self._matrix))
            return 2.0 * reduce_sum(log(real(d) if d.dtype.is_complex else d), axis=-1)
        return log_matrix_determinant(self._matrix)[1]

    def _adjoint(self, name):
        with self._scope(name):
            m = _adj(self._matrix)
        return LinearOperatorFullMatrix(
            m, is_non_singular=self.is_non_singular, is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite, is_square=self._is_square_hint,
            name=self.name + "_adjoint")


class LinearOperatorDiag(LinearOperator):
    """The square operator of a diagonal matrix, given its diagonal (batch_shape + [N])."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorDiag"):
        with name_scope(name):
            diag = convert_to_tensor(diag, name="diag")
        if diag.dtype not in _FLOATING:
            raise TypeError(f"Argument diag must have dtype in "
                            f"{[d.name for d in _FLOATING]}. Found: {diag.dtype.name}")
        if diag.shape.ndims is not None and diag.shape.ndims < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension. Found: "
                             f"{diag.shape}")
        if not diag.dtype.is_complex and is_self_adjoint is False:
            raise ValueError("A real diagonal operator is always self adjoint.")
        if not diag.dtype.is_complex:
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        self._diag = diag
        super().__init__(diag.dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name)

    def _shape(self):
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _to_dense(self):
        return matrix_diag(self._diag)

    def _d(self, adjoint):
        return conj(self._diag) if adjoint else self._diag

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adj(x) if adjoint_arg else x
        return multiply(expand_dims(self._d(adjoint), -1), x)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = _adj(rhs) if adjoint_arg else rhs
        return truediv(rhs, expand_dims(self._d(adjoint), -1))

    def _determinant(self):
        n = self._diag.shape[-1]
        n = n.value if hasattr(n, "value") else n
        if n is not None and 0 < n <= 64:
            # a product of the unstacked entries: differentiable (Prod here is not)
            return functools.reduce(multiply, unstack(self._diag, axis=-1))
        return reduce_prod(self._diag, axis=[-1])

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(self._diag)), axis=[-1])

    def _diag_part(self):
        return self._diag

    def _adjoint(self, name):
        with self._scope(name):
            d = conj(self._diag)
        return LinearOperatorDiag(d, is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite,
                                  name=self.name + "_adjoint")


class LinearOperatorIdentity(LinearOperator):
    """The [N, N] identity (batch_shape + [N, N] with batch_shape), held as its size only."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        self._num_rows = self._static_size(num_rows, "num_rows")
        self._batch = ()
        if batch_shape is not None:
            b = np.asarray(batch_shape)
            if b.ndim != 1 or b.dtype.kind not in "iu" or (b < 0).any():
                raise ValueError(f"Argument batch_shape must be a 1-D vector of non-negative "
                                 f"integers. Found: {batch_shape!r}")
            self._batch = tuple(int(v) for v in b)
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)

    @staticmethod
    def _static_size(v, what):
        a = np.asarray(v)
        if a.ndim != 0 or a.dtype.kind not in "iu":
            raise ValueError(f"Argument {what} must be a 0-D Tensor of integer dtype (a "
                             f"Python int here). Found: {v!r}")
        if int(a) < 0:
            raise ValueError(f"Argument {what} must be non-negative. Found: {int(a)}")
        return int(a)

    def _shape(self):
        return TensorShape(list(self._batch) + [self._num_rows, self._num_rows])

    def _to_dense(self):
        return eye(self._num_rows, batch_shape=list(self._batch) or None, dtype=self.dtype)

    def _broadcast(self, x):
        # x with the operator's batch dimensions broadcast in (as TF's identity matmul)
        if not self._batch:
            return x
        return x + zeros(list(self._batch) + [1, 1], dtype=self.dtype)

    def _matmul(self, x, adjoint, adjoint_arg):
        return self._broadcast(_adj(x) if adjoint_arg else x)

    def _solve(self, rhs, adjoint, adjoint_arg):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self):
        return ones(list(self._batch), dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(list(self._batch), dtype=self.dtype)

    def _diag_part(self):
        return ones(list(self._batch) + [self._num_rows], dtype=self.dtype)

    def _adjoint(self, name):   # (never reached: the identity is self-adjoint)
        return self
