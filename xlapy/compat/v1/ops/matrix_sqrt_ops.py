"""tf.matrix_square_root / tf.linalg.sqrtm: TF's MatrixSquareRoot, the principal square
root S of each square matrix A in the innermost two dimensions (S @ S = A).

In the executor the kernel is SciPy's Schur method (scipy.linalg.sqrtm), matrix by
matrix. As TF's, a real matrix with a negative real eigenvalue has no real principal
root: its result is NaN. Compiled, the root is the scaled Denman-Beavers iteration
(Y <- (Y + Z^-1) / 2, Z <- (Z + Y^-1) / 2 from Y = A, Z = I, both scaled by
|det Y det Z|^(-1/2n) each step), a fixed 20 steps in an XLA loop, NaN where it did not
converge (|S @ S - A| above 1e4 eps, at least sqrt(eps), relative to |A|); it needs an
invertible matrix (a singular one gives NaN compiled). Complex matrices (complex64 /
complex128) run in the executor only: xlapy's compiled determinant and inverse are real.

Gradient (as TF's): dA = S dS + dS S, so the gradient G_A of the input solves the
Sylvester equation S^H G_A + G_A S^H = G, solved as one linear system with Kronecker
products (n^2 unknowns per matrix; n must be known when the graph is built), for complex
matrices as the equivalent real system of twice the size.
"""

from __future__ import annotations

import warnings

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import get_op_def, register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.ops.array_ops import concat, expand_dims, reshape, shape
from xlapy.compat.v1.ops.diag_ops import eye, matrix_transpose
from xlapy.compat.v1.ops.linalg_ops import matrix_solve
from xlapy.compat.v1.ops.math_ops import add, multiply, negative
from xlapy.compat.v1.ops.spectral_ops import complex as complex_
from xlapy.compat.v1.ops.spectral_ops import conj, imag, real

_DB_STEPS = 20


def _infer(op):
    x = op.inputs[0]
    if x.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise InvalidTypeError(f"Value passed to parameter 'input' of 'MatrixSquareRoot' Op "
                               f"has DataType {x.dtype.name} not in list of allowed values: "
                               "float64, float32, complex64, complex128")
    s = x.shape
    if s.ndims is not None:
        if s.ndims < 2:
            raise InvalidArgumentError(f"Shape must be at least rank 2 but is rank {s.ndims} "
                                       f"for '{op.name}' (op: 'MatrixSquareRoot')")
        a, b = s.dims[-2:]
        if a is not None and b is not None and a != b:
            raise InvalidArgumentError(f"Dimensions must be equal, but are {a} and {b} for "
                                       f"'{op.name}' (op: 'MatrixSquareRoot'): it needs "
                                       f"square matrices, got shape {s.tf_str()}")
    return [(x.dtype, s)]


def _sqrtm_lower(m, x):
    """The scaled Denman-Beavers iteration, 20 steps in an XLA while loop."""
    import xlapy.lax  # the compiled loop, reached when a cluster is traced
    n = x.shape[-1]
    if n == 0 or 0 in x.shape:
        return x
    dt = np.dtype(x.dtype)
    eye_ = m.broadcast_to(m.eye(n, dtype=dt), x.shape)
    power = np.asarray(-0.5 / n, np.finfo(dt).dtype)

    def step(_, yz):
        y, z = yz
        d = m.abs(m.linalg.det(y) * m.linalg.det(z))
        mu = m.astype(m.power(d, power), dt)[..., None, None]
        y, z = y * mu, z * mu
        half = np.asarray(0.5, dt)
        return (m.astype((y + m.linalg.inv(z)) * half, dt),
                m.astype((z + m.linalg.inv(y)) * half, dt))

    y, _ = xlapy.lax.fori_loop(0, _DB_STEPS, step, (x, eye_))
    # no convergence (no principal root, e.g. a negative real eigenvalue): NaN
    eps = np.finfo(dt).eps
    tol = np.asarray(max(1e4 * eps, np.sqrt(eps)), np.finfo(dt).dtype)
    resid = m.max(m.abs(m.matmul(y, y) - x), axis=(-2, -1))
    size = m.maximum(m.max(m.abs(x), axis=(-2, -1)), np.finfo(dt).tiny)
    bad = m.logical_not(resid <= tol * size)[..., None, None]
    return m.where(bad, np.asarray(np.nan, dt), y)


@register_op("MatrixSquareRoot", infer=_infer, lowering=_sqrtm_lower)
def _sqrtm(m, x):
    import scipy.linalg  # the executor's kernel; SciPy is loaded only when it runs
    x = np.asarray(x)
    out = np.empty_like(x)
    if x.shape[-1] == 0:
        return out
    real = x.dtype.kind == "f"
    for idx in np.ndindex(x.shape[:-2]):
        with warnings.catch_warnings():  # singular matrices: a root may still exist
            warnings.simplefilter("ignore")
            r = np.asarray(scipy.linalg.sqrtm(x[idx]))
        if real and np.iscomplexobj(r):
            tol = 1e3 * np.finfo(x.dtype).eps * max(1.0, float(np.abs(r).max()))
            r = r.real if float(np.abs(r.imag).max()) <= tol else np.full(r.shape, np.nan)
        out[idx] = r
    return out


# complex matrices stay in the executor (xlapy's compiled determinant and inverse are real)
get_op_def("MatrixSquareRoot").extra["can_lower"] = lambda op: not op.inputs[0].dtype.is_complex


def _kron(p, q, n, batch):
    """kron(p, q) of [..., n, n] matrices: [..., n*n, n*n], row-major."""
    a = expand_dims(expand_dims(p, -1), -3)          # [..., n, 1, n, 1]
    b = expand_dims(expand_dims(q, -3), -2)          # [..., 1, n, 1, n]
    return reshape(multiply(a, b), concat([batch, [n * n, n * n]], 0))


@register_gradient("MatrixSquareRoot")
def _sqrtm_grad(op, g):
    s = op.outputs[0]
    n = s.shape.dims[-1] if s.shape.ndims is not None else None
    if n is None:
        raise InvalidArgumentError("the gradient of matrix_square_root needs the matrix size "
                                   "known when the graph is built")
    batch = shape(s)[:-2]
    ident = eye(n, dtype=s.dtype)
    rhs = reshape(g, concat([batch, [n * n, 1]], 0))
    if not s.dtype.is_complex:
        k = add(_kron(matrix_transpose(s), ident, n, batch), _kron(ident, s, n, batch))
        return [reshape(matrix_solve(k, rhs), shape(s))]
    # complex: the system K v = rhs as the real one [[Kr, -Ki], [Ki, Kr]] [vr; vi] = [rr; ri]
    k = add(_kron(conj(matrix_transpose(s)), ident, n, batch), _kron(ident, conj(s), n, batch))
    kr, ki = real(k), imag(k)
    big = concat([concat([kr, negative(ki)], -1), concat([ki, kr], -1)], -2)
    sol = matrix_solve(big, concat([real(rhs), imag(rhs)], -2))
    v = complex_(sol[..., :n * n, :], sol[..., n * n:, :])
    return [reshape(v, shape(s))]


def matrix_square_root(input, name=None):
    """The principal square root of each square matrix in the innermost two dimensions."""
    return make("MatrixSquareRoot", [tensor(input)], name=name or "MatrixSquareRoot")


sqrtm = matrix_square_root
