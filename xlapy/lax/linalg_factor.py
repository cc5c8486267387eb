"""jax.lax.linalg's factorizations over xlapy's LAPACK primitives (xlapy/lax/lapack.py):
qr, svd, eigh, triangular_solve, lu, with JAX's signatures and return orders.

  qr(x, full_matrices=True)            -> (q, r)     (pivoting=True is not supported)
  svd(x, full_matrices=True, compute_uv=True) -> (u, s, vh), or s
  eigh(x, lower=True, symmetrize_input=True, sort_eigenvalues=True) -> (v, w): eigenvectors
                                          first, eigenvalues ascending (JAX's order)
  triangular_solve(a, b, left_side=False, lower=False, transpose_a=False,
                   conjugate_a=False, unit_diagonal=False)
                                       -> x with op(a) x = b (left_side) or x op(a) = b
  lu(x)                                -> (lu, pivots, permutation), int32, 0-based

They are the functions xlapy.numpy.linalg runs, so they jit, vmap and differentiate as
those do (QR and eigh and svd by JAX's rules). Real float32/float64 matrices (LAPACK), and
complex64/complex128 ones for qr, svd and eigh (Hermitian); the others refuse complex
matrices with an XlapyError naming the function. A failed factorization gives NaNs, as JAX's.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, UnsupportedError

__all__ = ["eigh", "lu", "qr", "svd", "triangular_solve"]


def _matrix(name: str, x, square: bool = False, complex_ok: bool = False):
    import xlapy.numpy as xnp
    from xlapy.numpy import linalg as la
    x = la._float(xnp.asarray(x), f"lax.linalg.{name}", complex_ok)
    shape = tuple(x.shape)
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        what = "square matrices" if square else "matrices"
        raise ShapeError(f"lax.linalg.{name}: expects {what} in the two minor dimensions, "
                         f"got shape {list(shape)}")
    return x


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """(q, r) with x = q r (jax.lax.linalg.qr)."""
    from xlapy.numpy import linalg as la
    if pivoting:
        raise UnsupportedError("lax.linalg.qr: pivoting=True (column-pivoted QR) is not "
                               "supported by xlapy")
    x = _matrix("qr", x, complex_ok=True)
    return la.qr(x, mode="complete" if full_matrices else "reduced")


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) with x = u diag(s) vh, s descending; s alone without compute_uv."""
    from xlapy.numpy import linalg as la
    if subset_by_index is not None:
        raise UnsupportedError("lax.linalg.svd: subset_by_index is not supported by xlapy")
    x = _matrix("svd", x, complex_ok=True)
    return la.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of each symmetric matrix."""
    from xlapy.numpy import linalg as la
    if subset_by_index is not None:
        raise UnsupportedError("lax.linalg.eigh: subset_by_index is not supported by xlapy")
    x = _matrix("eigh", x, square=True, complex_ok=True)
    w, v = la.eigh(x, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    return v, w  # (LAPACK's eigenvalues come sorted ascending: sort_eigenvalues holds)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """x with op(a) x = b (left_side) or x op(a) = b, op = transpose when transpose_a."""
    import xlapy.numpy as xnp
    from xlapy.lax import lapack as L
    a = _matrix("triangular_solve", a, square=True)
    b = xnp.asarray(b)
    if b.ndim != a.ndim:
        raise ShapeError(f"lax.linalg.triangular_solve: a and b must have the same rank, got "
                         f"shapes {list(a.shape)} and {list(b.shape)}")
    k = a.shape[-1]
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != k:
        raise ShapeError(f"lax.linalg.triangular_solve: b's {'rows' if left_side else 'columns'}"
                         f" ({side}) must match a's size ({k}); shapes {list(a.shape)} and "
                         f"{list(b.shape)}")
    if tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise ShapeError(f"lax.linalg.triangular_solve: batch dimensions differ: "
                         f"{list(a.shape)} and {list(b.shape)}")
    del conjugate_a  # (real matrices only: conjugation changes nothing)
    return L.triangular_solve_p.bind(a, b.astype(a.dtype), left_side=bool(left_side),
                                     lower=bool(lower), transpose_a=bool(transpose_a),
                                     unit_diagonal=bool(unit_diagonal))


def lu(x):
    """(lu, pivots, permutation): x[permutation] = l u with l unit lower (in lu's strict
    lower triangle) and u upper; pivots are LAPACK's row swaps, 0-based."""
    from xlapy.numpy import linalg as la
    x = _matrix("lu", x)
    lu_, piv, perm, _ = la.lu_factor_raw(x)
    return lu_, piv.astype(np.int32), perm.astype(np.int32)


