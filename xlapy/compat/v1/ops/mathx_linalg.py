"""tf.linalg.cholesky_solve, pinv, lstsq (tf.matrix_solve_ls) and expm, composed of the
linear algebra ops (Cholesky, MatrixTriangularSolve, MatrixSolve, Svd, BatchMatMul), so
they compile and differentiate through their parts.

lstsq with fast=True is TF's: the normal equations (A^H A + l2 I) X = A^H B solved through
a Cholesky factorization when A has at least as many rows as columns, else
X = A^H (A A^H + l2 I)^-1 B. fast=False solves through the SVD instead (robust for
rank-deficient A): X = V diag(s / (s^2 + l2)) U^H B, the minimum-norm least-squares solution
(singular values below max(m, n) eps s_max treated as 0) when l2 is 0.

expm is TF's documented method (Higham 2005): a Pade approximant of degree 3, 5, 7, 9 or
13 (float64; 3, 5 or 7 for float32 and float16) chosen by the matrix's 1-norm, of the
matrix scaled by 2^-s, then squared s times (a while loop, each matrix of a batch stopping
at its own s).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_extra_ops import matrix_triangular_solve
from xlapy.compat.v1.ops.array_ops import broadcast_to, expand_dims, shape, zeros_like
from xlapy.compat.v1.ops.control_flow_ops import while_loop
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.linalg_ops import cholesky, matrix_solve, svd
from xlapy.compat.v1.ops.math_ops import (abs, add, cast, floor, greater, less, log,
                                          matmul, maximum, multiply, pow, realdiv, reduce_max,
                                          reduce_sum, square, subtract)


def _mat_dims(x, what):
    s = x.shape
    if s.ndims is not None and s.ndims < 2:
        raise InvalidArgumentError(f"{what}: input must have rank >= 2, got shape "
                                   f"{s.tf_str()}")
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"{what}: input must be floating point, got "
                                   f"{x.dtype.name}")
    return (None, None) if s.ndims is None else tuple(s.dims[-2:])


def _eye_like(x, n):
    """The identity of size n, broadcast against x's batch."""
    return tensor(np.eye(n, dtype=x.dtype.np))


def cholesky_solve(chol, rhs, name=None):
    """X with A X = rhs, given chol, the lower Cholesky factor of A."""
    chol, rhs = tensor(chol), tensor(rhs)
    with get_default_graph().name_scope(name or "cholesky_solve"):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse from the SVD: singular values at most
    rcond * max(s) count as 0 (rcond default 10 * max(rows, cols) * eps)."""
    a = tensor(a)
    m, n = _mat_dims(a, "pinv")
    with get_default_graph().name_scope(name or "pinv"):
        if rcond is None:
            eps = np.finfo(a.dtype.np).eps
            if m is not None and n is not None:
                rc = tensor(np.asarray(10.0 * max(m, n) * eps, a.dtype.np))
            else:
                s_ = shape(a)
                rc = multiply(cast(maximum(s_[-2], s_[-1]), a.dtype),
                              tensor(np.asarray(10.0 * eps, a.dtype.np)))
        else:
            rc = tensor(rcond, a.dtype)
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = multiply(rc, reduce_max(s, [-1], keepdims=True))
        inf = add(zeros_like(s), tensor(np.asarray(np.inf, a.dtype.np)))
        s = where(greater(s, cutoff), s, inf)  # 1/inf = 0: dropped directions
        return matmul(realdiv(v, expand_dims(s, -2)), u, transpose_b=True)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution X of matrix X = rhs (per batch matrix), with Tikhonov
    regularization l2_regularizer."""
    a, b = tensor(matrix), tensor(rhs)
    m, n = _mat_dims(a, "matrix_solve_ls")
    if b.dtype != a.dtype:
        raise InvalidArgumentError(f"matrix_solve_ls: matrix is {a.dtype.name}, rhs "
                                   f"{b.dtype.name}")
    if b.shape.ndims is not None and b.shape.ndims < 2:
        raise InvalidArgumentError(f"matrix_solve_ls: rhs must have rank >= 2, got shape "
                                   f"{b.shape.tf_str()}")
    if m is not None and b.shape.ndims is not None and b.shape.dims[-2] is not None \
            and b.shape.dims[-2] != m:
        raise InvalidArgumentError(f"matrix_solve_ls: matrix has {m} rows, rhs "
                                   f"{b.shape.dims[-2]}")
    with get_default_graph().name_scope(name or "matrix_solve_ls"):
        l2 = tensor(l2_regularizer, a.dtype)
        if not fast:
            s, u, v = svd(a, full_matrices=False, compute_uv=True)
            eps = np.finfo(a.dtype.np).eps
            tol = multiply(reduce_max(s, [-1], keepdims=True),
                           tensor(np.asarray(max(m or 1, n or 1) * eps, a.dtype.np)))
            denom = add(square(s), l2)
            one = add(zeros_like(s), tensor(np.ones((), a.dtype.np)))
            f = where(greater(s, tol), realdiv(s, where(greater(denom, zeros_like(s)), denom,
                                                        one)), zeros_like(s))
            utb = matmul(u, b, transpose_a=True)
            return matmul(v, multiply(expand_dims(f, -1), utb))
        if m is None or n is None:
            raise InvalidArgumentError("matrix_solve_ls(fast=True) needs the matrix's "
                                       "row and column counts to be known")

        def reg(g, k):
            return add(g, multiply(l2, _eye_like(a, k)))

        if m >= n:
            gram = reg(matmul(a, a, transpose_a=True), n)
            return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True))
        gram = reg(matmul(a, a, transpose_b=True), m)
        return matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True)


matrix_solve_ls = lstsq


# ---- expm -----------------------------------------------------------------------------------

_B = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# the largest 1-norm for which each degree is accurate to the unit roundoff (Higham 2005)
_THETA64 = {3: 1.495585217958292e-002, 5: 2.539398330063230e-001, 7: 9.504178996162932e-001,
            9: 2.097847961257068e+000, 13: 5.371920351148152e+000}
_THETA32 = {3: 4.258730016922831e-001, 5: 1.880152677804762e+000, 7: 3.925724783138660e+000}


def _sum(ts):
    """The sum of ts, broadcasting (AddN does not)."""
    out = ts[0]
    for t in ts[1:]:
        out = add(out, t)
    return out


def _pade(x, powers, deg, eye):
    """(U, V) of the degree-`deg` Pade approximant: exp(x) ~ (V - U)^-1 (V + U)."""
    b = _B[deg]

    def c(k):
        return tensor(np.asarray(b[k], x.dtype.np))

    if deg < 13:
        odd = [multiply(c(1), eye)] + [multiply(c(k), powers[k - 1]) for k in range(3, deg + 1, 2)]
        even = [multiply(c(0), eye)] + [multiply(c(k), powers[k]) for k in range(2, deg + 1, 2)]
        return matmul(x, _sum(odd)), _sum(even)
    a2, a4, a6 = powers[2], powers[4], powers[6]
    inner_u = _sum([multiply(c(13), a6), multiply(c(11), a4), multiply(c(9), a2)])
    u = _sum([matmul(a6, inner_u), multiply(c(7), a6), multiply(c(5), a4),
               multiply(c(3), a2), multiply(c(1), eye)])
    inner_v = _sum([multiply(c(12), a6), multiply(c(10), a4), multiply(c(8), a2)])
    v = _sum([matmul(a6, inner_v), multiply(c(6), a6), multiply(c(4), a4),
               multiply(c(2), a2), multiply(c(0), eye)])
    return matmul(x, u), v


def _powers(x, upto):
    p = {}
    x2 = matmul(x, x)
    p[2] = x2
    for k in range(4, upto + 1, 2):
        p[k] = matmul(p[k - 2], x2)
    return p


def expm(input, name=None):
    """The matrix exponential of each square matrix (Pade approximation with scaling and
    squaring)."""
    x = tensor(input)
    m, n = _mat_dims(x, "expm")
    if x.shape.ndims is None or n is None:
        raise InvalidArgumentError("expm needs the rank and the matrix size to be known")
    if m is not None and m != n:
        raise InvalidArgumentError(f"expm: input must be square matrices, got shape "
                                   f"{x.shape.tf_str()}")
    with get_default_graph().name_scope(name or "matrix_exponential"):
        theta = _THETA64 if x.dtype == dtypes.float64 else _THETA32
        degs = sorted(theta)
        top = degs[-1]
        eye = _eye_like(x, n)
        norm = reduce_max(reduce_sum(abs(x), [-2]), [-1])  # the 1-norm, per matrix
        lg = realdiv(log(realdiv(norm, tensor(np.asarray(theta[top], x.dtype.np)))),
                     tensor(np.asarray(np.log(2.0), x.dtype.np)))
        s = maximum(floor(lg), zeros_like(norm))  # the squarings: max(floor(log2(.)), 0)
        scale = pow(tensor(np.asarray(2.0, x.dtype.np)), s)
        scaled = realdiv(x, expand_dims(expand_dims(scale, -1), -1))
        pw = _powers(x, max(degs[:-1]) - 1 if len(degs) > 1 else 2)
        u, v = _pade(scaled, _powers(scaled, 6 if top == 13 else top - 1), top, eye)
        bshape = x.shape.as_list() if x.shape.is_fully_defined() else shape(x)
        for d in reversed(degs[:-1]):  # the smallest degree accurate for this norm wins
            ud, vd = _pade(x, pw, d, eye)
            small = broadcast_to(expand_dims(expand_dims(
                less(norm, tensor(np.asarray(theta[d], x.dtype.np))), -1), -1), bshape)
            u, v = where(small, ud, u), where(small, vd, v)
        r = matrix_solve(subtract(v, u), add(v, u))
        steps = cast(s, dtypes.int32)
        total = reduce_max(steps) if steps.shape.ndims else steps

        def body(i, r_):
            more = broadcast_to(expand_dims(expand_dims(less(i, steps), -1), -1), bshape)
            return i + 1, where(more, matmul(r_, r_), r_)

        # at most log2(largest finite / theta) squarings: a compile-time bound for XLA
        bound = int(np.ceil(np.log2(np.finfo(x.dtype.np).max))) + 1
        _, r = while_loop(lambda i, r_: less(i, total), body,
                          [tensor(np.zeros((), np.int32)), r], maximum_iterations=bound)
        return r
