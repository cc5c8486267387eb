"""poly, roots and polydiv (coefficients highest degree first), as jax.numpy has them.

poly builds the coefficients from roots (or from a square matrix's eigenvalues: then the
result is complex, as in JAX); roots takes the eigenvalues of the companion matrix and
always returns a complex array. roots strips leading zero coefficients by default, which
needs concrete coefficients; with strip_zeros=False it traces (under jit) and the roots a
leading zero removes are NaN, placed last. polydiv is NumPy's long division; its remainder
keeps the dividend's length unless trim_leading_zeros=True (concrete values only).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import default_float
from xlapy.numpy._core import asarray, dtype_of, kind, result_type, shape


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


def _inexact(*xs) -> np.dtype:
    dt = np.dtype(result_type(*xs))
    return dt if kind(dt) in "fc" else np.dtype(default_float())


def _complex(dt) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex128 if dt == np.float64 else np.complex64)


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (a square matrix: its
    characteristic polynomial)."""
    xnp = _xnp()
    a = asarray(seq_of_zeros)
    nd = len(shape(a))
    if nd == 2 and shape(a)[0] == shape(a)[1] and shape(a)[0] > 0:
        a = xnp.linalg.eigvals(a)
    elif nd == 0:
        a = xnp.reshape(a, (1,))
    elif nd != 1 and not (nd == 2 and shape(a) == (0, 0)):
        raise XlapyError(f"poly: input must be a 1-d array of roots or a non-empty square "
                         f"matrix, got shape {shape(a)}")
    dt = _inexact(a)
    a = xnp.ravel(a).astype(dt)
    if shape(a)[0] == 0:
        return xnp.ones((), dt)
    coeffs = xnp.ones((1,), dt)
    zero = xnp.zeros((1,), dt)
    for k in range(shape(a)[0]):  # multiply by (x - a[k])
        coeffs = xnp.concatenate([coeffs, zero]) - a[k] * xnp.concatenate([zero, coeffs])
    return coeffs


def _companion_roots(p):
    """The eigenvalues of p's companion matrix (p[0] != 0, len(p) >= 2)."""
    xnp = _xnp()
    n = shape(p)[0] - 1
    top = xnp.reshape(-p[1:] / p[0], (1, n))
    below = xnp.eye(n - 1, n, dtype=dtype_of(p))
    return xnp.linalg.eigvals(xnp.concatenate([top, below], axis=0))


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients p, as a complex array."""
    xnp = _xnp()
    p = asarray(p)
    if len(shape(p)) == 0:
        p = xnp.reshape(p, (1,))
    if len(shape(p)) != 1:
        raise XlapyError(f"roots: the coefficients must be a 1-d array, got shape {shape(p)}")
    dt = _inexact(p)
    p = p.astype(dt)
    cdt = _complex(dt)
    n = shape(p)[0]
    if n < 2:
        return xnp.zeros((0,), cdt)
    is_zero = p == 0
    leading = xnp.where(xnp.all(is_zero), n, xnp.argmin(is_zero))
    if strip_zeros:
        if isinstance(leading, Tracer):
            raise leading._concrete_error(
                "roots strips leading zero coefficients, so it needs concrete coefficients; "
                "under jit pass strip_zeros=False (the roots a leading zero removes are "
                "then NaN, as in JAX)")
        k = int(np.asarray(leading))
        if n - k < 2:
            return xnp.zeros((0,), cdt)
        return _companion_roots(p[k:]).astype(cdt)
    # leading zeros rotated to the end (all zeros: a stand-in polynomial), the zero roots
    # they make moved last and replaced by NaN
    q = xnp.where(leading == n, xnp.ones_like(p), p)
    idx = (xnp.arange(n) + leading) % n
    r = _companion_roots(q[idx]).astype(cdt)
    order = xnp.argsort((r == 0).astype(np.int32), stable=True)
    r = r[order]
    keep = xnp.arange(n - 1) < (n - 1) - leading
    return xnp.where(keep, r, xnp.asarray(complex(np.nan, np.nan), cdt))


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of the polynomial division u / v."""
    xnp = _xnp()
    u, v = xnp.atleast_1d(asarray(u)), xnp.atleast_1d(asarray(v))
    if len(shape(u)) != 1 or len(shape(v)) != 1:
        raise XlapyError(f"polydiv: the coefficients must be 1-d arrays, got shapes "
                         f"{shape(u)} and {shape(v)}")
    dt = _inexact(u, v)
    u, v = u.astype(dt), v.astype(dt)
    m, n = shape(u)[0] - 1, shape(v)[0] - 1
    if n < 0:
        raise XlapyError("polydiv: the divisor has no coefficients")
    scale = 1 / v[0]
    q = xnp.zeros((max(m - n + 1, 1),), dt)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = xnp.at(q)[k].set(d)
        r = xnp.at(r)[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        from xlapy.numpy._numpy_more2 import trim_zeros  # the concrete trimming
        r = trim_zeros(r, "f")
    return q, r


__all__ = ["poly", "roots", "polydiv"]
