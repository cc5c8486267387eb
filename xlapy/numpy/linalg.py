"""xlapy.numpy.linalg: jax.numpy.linalg's functions, built on the LAPACK primitives of
xlapy.lax.lapack (which lower to the custom-calls JAX emits, so a module does what JAX's
does: the same routines, the same NaN masking of failed factorizations) and on
xlapy.lax.linalg.cholesky.

Batches of matrices in the leading dims; f32/f64 (integer inputs are promoted to the default
float type; complex matrices raise an XlapyError naming the function, except in solve, inv,
det and slogdet (LAPACK's complex getrf and trsm), cholesky (cpotrf/zpotrf, through the
cholesky opcode), eigh and eigvalsh (cheevd/zheevd: real eigenvalues), qr (cgeqrf and
cungqr), svd (cgesdd/zgesdd: real singular values) and what is built on it (pinv, lstsq,
matrix_rank, the 2 / -2 / nuc norms, cond), eig and eigvals, and in the other norms, where
only |x| matters). Eager, under jit and under vmap.
Differentiable in forward and reverse mode, as JAX defines the derivatives
(xlapy/lax/lapack_ad.py, and qr's custom_jvp in xlapy/numpy/_qr.py): solve, inv, det,
slogdet, cholesky, eigh (distinct eigenvalues), svd (full_matrices=True only for square
matrices, as in JAX), qr, and what is built from them (pinv, lstsq, norm).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.lax import lapack as L
from xlapy.lax.linalg import cholesky as _lax_cholesky
from xlapy.numpy._complex import conjugate, real
from xlapy.numpy._core import asarray, cast, float_dtype_for, shape
from xlapy.numpy._creation import eye, full_like, zeros_like
from xlapy.numpy._eig import eig, eigvals
from xlapy.numpy._linalg import matmul
from xlapy.numpy._reductions import amax, sum
from xlapy.numpy._shape_ops import diagonal, expand_dims, swapaxes
from xlapy.numpy._ufuncs import abs, log, sign, sqrt, where

__all__ = ["cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd",
           "cond", "cross", "matrix_norm", "outer", "tensorinv", "tensorsolve", "vector_norm"]


def _float(a, name: str = "linalg", complex_ok: bool = False):
    """a as f32 or f64 (LAPACK's real routines); integers and bools are promoted. Complex
    matrices are kept with complex_ok (the functions on LAPACK's complex getrf and trsm),
    else refused by name: the LAPACK calls there are the real ones, and casting would drop
    the imaginary parts."""
    a = asarray(a)
    dt = np.dtype(a.dtype)
    if dt.kind == "c" and complex_ok:
        return a
    if dt.kind == "c":
        raise XlapyError(f"{name}: complex matrices are not supported (xlapy runs LAPACK's "
                         f"real routines here; linalg.solve, inv, det, slogdet, cholesky, "
                         f"eigh, eigvalsh, qr, svd, pinv, lstsq, matrix_rank, norm, cond, "
                         f"eig and eigvals take complex input), got {dt.name}")
    if dt not in (np.float32, np.float64):   # LAPACK works in f32/f64
        wide = dt.itemsize > 2 and np.dtype(float_dtype_for(dt)).itemsize == 8
        return cast(a, np.float64 if wide else np.float32)
    return a


def _square(name, a):
    s = shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise XlapyError(f"linalg.{name}: expects square matrices in the last two "
                         f"dimensions, got shape {list(s)}")


def _mT(a):
    return swapaxes(a, -1, -2)


def _mH(a):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return conjugate(_mT(a)) if np.dtype(a.dtype).kind == "c" else _mT(a)


def _ok(info, x, nd):
    """x where info == 0, NaN elsewhere (info has x's leading batch dims)."""
    good = info == 0
    for _ in range(nd):
        good = expand_dims(good, -1)
    return where(good, x, full_like(x, np.nan))


# ---- LU and what is built on it ---------------------------------------------------------------

def lu_factor_raw(a):
    """(lu, pivots 0-based, permutation, info) of a[..., m, n] (jax.lax.linalg.lu + info)."""
    lu, piv, info = L.lu_p.bind(a)
    piv = piv - 1
    m = shape(a)[-2]
    from xlapy.numpy._advanced import take_along_axis
    from xlapy.numpy._creation import arange
    from xlapy.numpy._core import broadcast_to
    ids = arange(m, dtype=np.int32)
    perm = broadcast_to(ids, shape(piv)[:-1] + (m,))
    for i in range(shape(piv)[-1]):        # LAPACK's row swaps, in order
        j = piv[..., i:i + 1]
        pi = perm[..., i:i + 1]
        pj = take_along_axis(perm, j, -1)
        perm = where(ids == i, pj, where(ids == j, pi, perm))
    return lu, piv, perm, info


def _lu_solve(lu, perm, b, trans=0):
    """Solve with the factorization (b[..., n, k], batch dims equal to lu's)."""
    from xlapy.numpy._advanced import take_along_axis

    def ts(a, x, lower, unit, transpose):
        return L.triangular_solve_p.bind(a, x, left_side=True, lower=lower,
                                         transpose_a=transpose, unit_diagonal=unit)
    if trans == 0:
        x = take_along_axis(b, expand_dims(perm, -1) + zeros_like(b, np.int32), -2)
        x = ts(lu, x, True, True, False)
        return ts(lu, x, False, False, False)
    x = ts(lu, b, False, False, True)
    x = ts(lu, x, True, True, True)
    from xlapy.numpy._sorting import argsort
    inv_perm = argsort(perm, axis=-1).astype(np.int32)
    return take_along_axis(x, expand_dims(inv_perm, -1) + zeros_like(x, np.int32), -2)


def _broadcast_batch(a, b):
    from xlapy.numpy._core import broadcast_to
    batch = tuple(np.broadcast_shapes(shape(a)[:-2], shape(b)[:-2]))
    return broadcast_to(a, batch + shape(a)[-2:]), broadcast_to(b, batch + shape(b)[-2:])


def solve(a, b):
    a, b = _float(a, "linalg.solve", True), _float(b, "linalg.solve", True)
    _square("solve", a)
    if np.dtype(b.dtype).kind == "c" and np.dtype(a.dtype).kind != "c":
        a = a.astype(np.result_type(a.dtype, b.dtype))
    vector = len(shape(b)) == 1
    if vector:
        b = expand_dims(b, -1)
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    a, b = _broadcast_batch(a, b)
    lu, _, perm, _ = lu_factor_raw(a)
    x = _lu_solve(lu, perm, b)
    return x[..., 0] if vector else x


def inv(a):
    a = _float(a, "linalg.inv", True)
    _square("inv", a)
    n = shape(a)[-1]
    from xlapy.numpy._core import broadcast_to
    return solve(a, broadcast_to(eye(n, dtype=a.dtype), shape(a)))


def _parity(piv):
    from xlapy.numpy._creation import arange
    swaps = sum((piv != arange(shape(piv)[-1], dtype=np.int32)).astype(np.int32), axis=-1)
    return swaps % 2


def slogdet(a):
    a = _float(a, "linalg.slogdet", True)
    _square("slogdet", a)
    lu, piv, _, _ = lu_factor_raw(a)
    d = diagonal(lu, 0, -2, -1)
    s = sign(d)    # d / |d| for complex d (0 for 0), as numpy's sign
    from xlapy.numpy._reductions import prod
    sgn = prod(s, axis=-1) * where(_parity(piv) == 1, -1.0, 1.0).astype(a.dtype)
    logdet = sum(log(abs(d)), axis=-1)
    zero = sgn == 0
    return where(zero, zeros_like(sgn), sgn), where(zero, full_like(logdet, -np.inf), logdet)


def det(a):
    a = _float(a, "linalg.det", True)
    _square("det", a)
    lu, piv, _, _ = lu_factor_raw(a)
    from xlapy.numpy._reductions import prod
    d = prod(diagonal(lu, 0, -2, -1), axis=-1)
    return where(_parity(piv) == 1, -d, d)


# ---- Cholesky, eigh, SVD, QR ---------------------------------------------------------------

def cholesky(a, *, upper=False):
    """The lower factor L of a = L L^H (of a's Hermitian part, as JAX), or U = L^H."""
    a = _float(a, "linalg.cholesky", True)
    _square("cholesky", a)
    c = _lax_cholesky(a)
    return _mH(c) if upper else c


def eigh(a, UPLO="L", symmetrize_input=True):
    """(w, v) of the symmetric (Hermitian: complex a) part of a: w real and ascending, v's
    columns orthonormal (as JAX, the input is first symmetrized; without symmetrize_input
    only the UPLO triangle is read)."""
    if UPLO not in ("L", "U"):
        raise XlapyError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    a = _float(a, "linalg.eigh", True)
    _square("eigh", a)
    if symmetrize_input:
        a = (a + _mH(a)) / 2
    v, w, info = L.eigh_p.bind(a, lower=UPLO == "L", compute_v=True)
    return _ok(info, w, 1), _ok(info, v, 2)


def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """(u, s, vh) with a = u diag(s) vh (vh = V^H for complex a; s real, descending), or
    s alone."""
    a = _float(a, "linalg.svd", True)
    if len(shape(a)) < 2:
        raise XlapyError(f"linalg.svd: expects matrices, got shape {list(shape(a))}")
    s, u, vt, info = L.svd_p.bind(a, full_matrices=bool(full_matrices),
                                  compute_uv=bool(compute_uv))
    if not compute_uv:
        return _ok(info, s, 1)
    return _ok(info, u, 2), _ok(info, s, 1), _ok(info, vt, 2)


def qr(a, mode="reduced"):
    a = _float(a, "linalg.qr", True)
    if mode not in ("reduced", "complete", "r"):
        raise XlapyError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    from xlapy.numpy._qr import qr_factors   # a custom_jvp: JAX's derivative of QR
    q, r = qr_factors(a, mode == "complete")
    return r if mode == "r" else (q, r)


# ---- built from the above ---------------------------------------------------------------------

def _rcond_default(a, s):
    m, n = shape(a)[-2:]
    return max(m, n) * np.finfo(np.dtype(s.dtype)).eps


def pinv(a, rtol=None, hermitian=False):
    a = _float(a, "linalg.pinv", True)
    u, s, vt = svd(a, full_matrices=False)
    rtol = _rcond_default(a, s) if rtol is None else rtol
    cutoff = expand_dims(amax(s, axis=-1), -1) * rtol
    s_inv = where(s > cutoff, 1 / where(s > cutoff, s, full_like(s, 1)), zeros_like(s))
    return matmul(_mH(vt) * expand_dims(s_inv, -2).astype(a.dtype), _mH(u))


def lstsq(a, b, rcond=None):
    """(x, residuals, rank, s): x minimizes |a x - b| (through pinv); residuals are the
    squared 2-norms of the columns of a x - b (real, for every rank and shape, as JAX's
    default; NumPy returns an empty array for a rank-deficient or wide a), s a's singular
    values."""
    a, b = _float(a, "linalg.lstsq", True), _float(b, "linalg.lstsq", True)
    cplx = np.dtype(a.dtype).kind == "c" or np.dtype(b.dtype).kind == "c"
    if cplx:   # one complex type for both (a real matrix or right side promoted)
        dt = np.result_type(a.dtype, b.dtype)
        a, b = a.astype(dt), b.astype(dt)
    vector = len(shape(b)) == 1
    bb = expand_dims(b, -1) if vector else b
    x = matmul(pinv(a, rtol=rcond), bb)
    resid = a @ x - bb
    s = svd(a, compute_uv=False)
    rtol = _rcond_default(a, s) if rcond is None else rcond
    rank = sum((s > amax(s, axis=-1) * rtol).astype(np.int32), axis=-1)
    residuals = sum(real(conjugate(resid) * resid) if cplx else resid * resid, axis=-2)
    if vector:
        x, residuals = x[..., 0], residuals[..., 0]
    return x, residuals, rank, s


def matrix_rank(a, rtol=None, tol=None):
    a = _float(a, "linalg.matrix_rank", True)
    s = svd(a, compute_uv=False)
    if tol is None:
        rtol = _rcond_default(a, s) if rtol is None else rtol
        tol = expand_dims(amax(s, axis=-1), -1) * rtol
    return sum((s > tol).astype(np.int32), axis=-1)


def matrix_power(a, n: int):
    a = asarray(a)
    _square("matrix_power", a)
    n = int(n)
    if n < 0:
        a, n = inv(a), -n
    from xlapy.numpy._core import broadcast_to
    result = broadcast_to(eye(shape(a)[-1], dtype=a.dtype), shape(a))
    base = a
    while n:
        if n & 1:
            result = matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(arrays):
    arrays = list(arrays)
    if len(arrays) < 2:
        raise XlapyError("linalg.multi_dot: needs at least two arrays")
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x)
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    x = asarray(x)
    nd = len(shape(x))
    matrix = (axis is None and nd >= 2 and ord is not None) or (
        axis is not None and not isinstance(axis, int) and len(tuple(axis)) == 2)
    if np.dtype(x.dtype).kind == "c" and not (matrix and ord in (2, -2, "nuc")):
        x = abs(x)   # every norm but the singular-value ones depends on |x| alone
    x = _float(x, "linalg.norm", True)   # (complex x here: a singular-value norm)
    if axis is None and (ord is None or (nd == 1 and ord == 2)):
        r = sqrt(sum(x * x))
        if keepdims:
            from xlapy.numpy._shape_ops import reshape
            r = reshape(r, (1,) * nd)
        return r
    if axis is None:
        axis = (nd - 2, nd - 1) if nd >= 2 else (0,)
    axis = (axis,) if isinstance(axis, int) else tuple(a % nd for a in axis)
    if len(axis) == 1:
        if ord is None or ord == 2:
            return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
        if ord == np.inf:
            return amax(abs(x), axis=axis, keepdims=keepdims)
        if ord == -np.inf:
            from xlapy.numpy._reductions import amin
            return amin(abs(x), axis=axis, keepdims=keepdims)
        if ord == 0:
            return sum((x != 0).astype(x.dtype), axis=axis, keepdims=keepdims)
        return sum(abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)
    r0, c0 = axis
    if ord in (None, "fro"):
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        from xlapy.numpy._reductions import amin
        red = amax if ord in (1, np.inf) else amin
        inner, outer = (r0, c0) if ord in (1, -1) else (c0, r0)
        s = sum(abs(x), axis=inner, keepdims=True)
        r = red(s, axis=outer, keepdims=True)
        if not keepdims:
            from xlapy.numpy._shape_ops import squeeze
            r = squeeze(r, axis=axis)
        return r
    if ord in (2, -2, "nuc"):
        from xlapy.numpy._shape_ops import moveaxis
        y = moveaxis(x, axis, (-2, -1))
        s = svd(y, compute_uv=False)
        if ord == "nuc":
            r = sum(s, axis=-1)
        else:
            from xlapy.numpy._reductions import amin
            r = amax(s, axis=-1) if ord == 2 else amin(s, axis=-1)
        if keepdims:
            r = expand_dims(expand_dims(r, min(axis)), max(axis))
        return r
    raise XlapyError(f"linalg.norm: invalid norm order {ord!r} for matrices")


# the array API's additions and tensor solves (xlapy/numpy/_linalg_more.py)
from xlapy.numpy._linalg_more import (cond, cross, matrix_norm, outer, tensorinv,  # noqa: E402
                                      tensorsolve, vector_norm)


# the array API's names for functions of xlapy.numpy (jax.numpy.linalg has them too)
from xlapy.numpy._einsum import tensordot as _tensordot  # noqa: E402
from xlapy.numpy._linalg import trace as _trace  # noqa: E402
from xlapy.numpy._more_functions import vecdot  # noqa: E402,F401
from xlapy.numpy._shape_ops import matrix_transpose  # noqa: E402,F401


def svdvals(x, /):
    """The singular values of the matrices in x's last two axes, in descending order."""
    return svd(x, compute_uv=False)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return _tensordot(x1, x2, axes, precision=precision,
                      preferred_element_type=preferred_element_type)


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the matrices in x's last two axes."""
    return _trace(x, offset, -2, -1, dtype)
