"""xlapy.scipy.linalg: jax.scipy.linalg's basics, on xlapy.numpy.linalg and the LAPACK
primitives of xlapy.lax.lapack (the custom-calls JAX emits, so modules match JAX's).
lu_factor, lu_solve and solve_triangular (and solve, inv, det), cholesky, cho_factor,
cho_solve, eigh (Hermitian), qr, svd and lu take complex matrices too: trans 1 / 'T' is the
plain transpose, 2 / 'C' the conjugate transpose, as in scipy. cholesky
factors a's Hermitian part ((a + a^H) / 2, as numpy.linalg.cholesky here), where scipy and
jax.scipy read one triangle: the same factor for a Hermitian a."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.lax import lapack as L
from xlapy.numpy import linalg as _la
from xlapy.numpy._complex import conjugate
from xlapy.numpy._core import shape
from xlapy.numpy._shape_ops import expand_dims, swapaxes, tril, triu
from xlapy.scipy._expm import expm
from xlapy.scipy._structured import block_diag, toeplitz

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv",
           "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "svd", "toeplitz"]

inv, det = _la.inv, _la.det


def _mT(a):
    return swapaxes(a, -1, -2)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """L (a = L L^H) or U = L^H (a = U^H U) of a's Hermitian part (as JAX)."""
    c = _la.cholesky(a)
    return c if lower else _la._mH(c)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky(a, lower=lower), lower


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise XlapyError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                         f"{trans!r}")
    name = "scipy.linalg.solve_triangular"
    a, b = _la._float(a, name, True), _la._float(b, name, True)
    a = a.astype(np.result_type(a.dtype, b.dtype))
    if trans in (2, "C") and np.dtype(a.dtype).kind == "c":
        a = conjugate(a)    # a^H: the transpose of conj(a)
    vector = len(shape(b)) == len(shape(a)) - 1
    bb = expand_dims(b, -1) if vector else b
    x = L.triangular_solve_p.bind(a, bb.astype(a.dtype), left_side=True, lower=bool(lower),
                                  transpose_a=trans not in (0, "N"),
                                  unit_diagonal=bool(unit_diagonal))
    return x[..., 0] if vector else x


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """a x = b with a = L L^H (lower) or U^H U: two triangular solves, one with the
    conjugate transpose ('C', the transpose of a real factor)."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else "C", lower=lower)
    return solve_triangular(c, y, trans="C" if lower else 0, lower=lower)


def lu_factor(a, overwrite_a=False, check_finite=True):
    a = _la._float(a, "scipy.linalg.lu_factor", True)
    lu_, piv, _, _ = _la.lu_factor_raw(a)
    return lu_, piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u (or (p @ l, u) with permute_l); p is real for a
    complex a, as in scipy."""
    from xlapy.numpy._creation import eye
    a = _la._float(a, "scipy.linalg.lu", True)
    m, n = shape(a)[-2:]
    k = min(m, n)
    lu_, _, perm, _ = _la.lu_factor_raw(a)
    from xlapy.numpy._creation import arange
    pt = np.float32 if np.dtype(a.dtype) in (np.float32, np.complex64) else np.float64
    ident = eye(m, dtype=pt)
    p = _mT(ident[perm]) if len(shape(perm)) == 1 else \
        _mT((expand_dims(perm, -1) == arange(m)).astype(pt))
    low = tril(lu_[..., :, :k], -1) + eye(m, k, dtype=a.dtype)
    up = triu(lu_[..., :k, :])
    return (p @ low, up) if permute_l else (p, low, up)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu_, piv = lu_and_piv
    m = shape(lu_)[-1]
    from xlapy.numpy._advanced import take_along_axis
    from xlapy.numpy._core import broadcast_to
    from xlapy.numpy._creation import arange
    from xlapy.numpy._ufuncs import where
    ids = arange(m, dtype=piv.dtype)
    perm = broadcast_to(ids, shape(piv)[:-1] + (m,))
    for i in range(shape(piv)[-1]):
        j = piv[..., i:i + 1]
        pi, pj = perm[..., i:i + 1], take_along_axis(perm, j, -1)
        perm = where(ids == i, pj, where(ids == j, pi, perm))
    b = _la._float(b, "scipy.linalg.lu_solve", True)
    lu_ = lu_.astype(np.result_type(lu_.dtype, b.dtype))
    if trans in (2, "C") and np.dtype(lu_.dtype).kind == "c":
        lu_ = conjugate(lu_)    # a^H = (P^T L U)^H: the transposes of conj(L), conj(U)
    vector = len(shape(b)) == 1
    bb = expand_dims(b, -1) if vector else b
    x = _la._lu_solve(lu_, perm, bb.astype(lu_.dtype), trans=0 if trans in (0, "N") else 1)
    return x[..., 0] if vector else x


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    if pivoting:
        raise XlapyError("scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "r", "economic"):
        raise XlapyError(f"scipy.linalg.qr: mode must be 'full', 'r' or 'economic', got "
                         f"{mode!r}")
    if mode == "r":
        return (_la.qr(a, "complete")[1],)
    return _la.qr(a, "complete" if mode == "full" else "reduced")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """a x = b. assume_a "pos" solves through the Cholesky factor of a's `lower` triangle;
    "gen", "sym" and "her" through the LU factorization (as jax.scipy.linalg.solve)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise XlapyError(f"scipy.linalg.solve: assume_a must be 'gen', 'sym', 'her' or 'pos', "
                         f"got {assume_a!r}")
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return _la.solve(a, b)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    return _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    if b is not None:
        raise XlapyError("scipy.linalg.eigh: the generalized problem (b) is not supported")
    w, v = _la.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)
