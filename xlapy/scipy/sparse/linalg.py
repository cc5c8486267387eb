"""xlapy.scipy.sparse.linalg (jax.scipy.sparse.linalg): Krylov solvers for A x = b.

    x, info = cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None)
    x, info = bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None)
    x, info = gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
                    solve_method="batched")

A is a matrix (x -> A @ x) or a function applying the operator to a pytree shaped like b;
M, the preconditioner, likewise (an approximation of A's inverse). b and x0 are arrays or
pytrees of arrays. The stopping test is JAX's (SciPy's non-legacy one): |r| <= max(tol |b|,
atol); maxiter defaults to 10 times b's size. cg needs a symmetric positive-definite A
(conjugate gradients, preconditioned); bicgstab and gmres take any invertible A. gmres
restarts after `restart` Krylov vectors and solves each small least-squares problem
directly (JAX's "batched" method; "incremental" is accepted and computes the same
solution this way). info is None for cg and bicgstab, and for gmres 0, or -1 when the
result holds NaNs (as JAX's).

The solves are while loops, so they jit; their gradients are implicit (lax.custom_linear_solve:
another solve with the transposed operator, not a differentiation through the
iterations): with respect to b, x0 (none), and what A closes over (a matrix A too).
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend import pytree

__all__ = ["bicgstab", "cg", "gmres"]


# ---- pytree vector arithmetic --------------------------------------------------------------

def _map(fn, *trees):
    return pytree.tree_map(fn, *trees)


def _add(x, y):
    return _map(lambda a, b: a + b, x, y)


def _sub(x, y):
    return _map(lambda a, b: a - b, x, y)


def _scale(s, x):
    return _map(lambda a: (s * a).astype(a.dtype), x)


def _vdot(x, y):
    """sum of conj(x) y over the leaves."""
    leaves = [xnp.vdot(a, b) for a, b in zip(pytree.flatten(x)[0], pytree.flatten(y)[0])]
    return sum(leaves[1:], leaves[0])


def _vdot_real(x, y):
    return xnp.real(_vdot(x, y))


def _norm(x):
    return xnp.sqrt(_vdot_real(x, x))


def _as_operator(A, name: str, what: str, b):
    if callable(A):
        return A
    a = xnp.asarray(A)
    leaves = pytree.flatten(b)[0]
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ShapeError(f"{name}: {what} must be a square matrix or a function, got shape "
                         f"{list(a.shape)}")
    if len(leaves) != 1 or xnp.asarray(leaves[0]).shape[:1] != (a.shape[1],):
        raise ShapeError(f"{name}: a {list(a.shape)} matrix {what} needs b to be one array "
                         f"with {a.shape[1]} rows, got shapes "
                         f"{[list(xnp.asarray(v).shape) for v in leaves]}")
    return lambda x: _map(lambda v: xnp.dot(a, v), x)


def _setup(name, A, b, x0, tol, atol, maxiter, M):
    b = _map(xnp.asarray, b)
    leaves = pytree.flatten(b)[0]
    if not leaves:
        raise XlapyError(f"{name}: b has no arrays")
    for v in leaves:
        if not (xnp.issubdtype(v.dtype, np.floating)
                or xnp.issubdtype(v.dtype, np.complexfloating)):
            raise XlapyError(f"{name}: b must hold floating-point arrays, got dtype {v.dtype}")
    x0 = _map(xnp.zeros_like, b) if x0 is None else _map(xnp.asarray, x0)
    if pytree.flatten(x0)[1] != pytree.flatten(b)[1]:
        raise XlapyError(f"{name}: x0 and b must have one tree structure, got "
                         f"{pytree.flatten(x0)[1]} and {pytree.flatten(b)[1]}")
    shapes = [tuple(v.shape) for v in pytree.flatten(x0)[0]]
    if shapes != [tuple(v.shape) for v in leaves]:
        raise ShapeError(f"{name}: x0's arrays must have b's shapes, got {shapes} and "
                         f"{[tuple(v.shape) for v in leaves]}")
    for what, v in (("tol", tol), ("atol", atol)):
        if isinstance(v, (int, float)) and v < 0:
            raise XlapyError(f"{name}: {what} must be >= 0, got {v}")
    size = sum(int(np.prod(v.shape, dtype=np.int64)) for v in leaves)
    if maxiter is None:
        maxiter = 10 * size
    elif not isinstance(maxiter, (int, np.integer)) or maxiter < 0:
        raise XlapyError(f"{name}: maxiter must be a non-negative integer, got {maxiter!r}")
    A = _as_operator(A, name, "A", b)
    M = (lambda x: x) if M is None else _as_operator(M, name, "M", b)
    return A, b, x0, int(maxiter), M, size


def _tol2(b, tol, atol):
    return xnp.maximum(tol * tol * _vdot_real(b, b), atol * atol)


# ---- conjugate gradients --------------------------------------------------------------------

def _cg(A, b, x0, tol, atol, maxiter, M):
    tol2 = _tol2(b, tol, atol)
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    gamma0 = _vdot_real(r0, z0)

    def cond(s):
        _, r, gamma, _, k = s
        rs = _vdot_real(r, r)
        return (rs > tol2) & (k < maxiter)

    def body(s):
        x, r, gamma, p, k = s
        Ap = A(p)
        alpha = gamma / _vdot_real(p, Ap)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, Ap))
        z = M(r)
        gamma_new = _vdot_real(r, z)
        p = _add(z, _scale(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return lax.while_loop(cond, body, (x0, r0, gamma0, z0, xnp.asarray(0, np.int32)))[0]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Conjugate gradients for a symmetric positive-definite A: (x, None)."""
    A, b, x0, maxiter, M, _ = _setup("cg", A, b, x0, tol, atol, maxiter, M)

    def solve(op, rhs):
        return _cg(op, rhs, x0, tol, atol, maxiter, M)

    return lax.custom_linear_solve(A, b, solve, symmetric=True), None


# ---- BiCGSTAB -------------------------------------------------------------------------------

def _bicgstab(A, b, x0, tol, atol, maxiter, M):
    tol2 = _tol2(b, tol, atol)
    r0 = _sub(b, A(x0))
    one = xnp.ones((), pytree.flatten(b)[0][0].dtype)

    def cond(s):
        r, k = s[1], s[-1]
        return (_vdot_real(r, r) > tol2) & (k < maxiter) & (k >= 0)  # k < 0: breakdown

    def body(s):
        x, r, rhat, alpha, omega, rho, p, q, k = s
        rho_new = _vdot(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot(rhat, q)
        s_ = _sub(r, _scale(alpha, q))
        done = _vdot_real(s_, s_) < tol2
        shat = M(s_)
        t = A(shat)
        omega = _vdot(t, s_) / _vdot(t, t)
        x_half = _add(x, _scale(alpha, phat))
        x = _map(lambda h, w: xnp.where(done, h, w), x_half, _add(x_half, _scale(omega, shat)))
        r = _map(lambda a, c: xnp.where(done, a, c), s_, _sub(s_, _scale(omega, t)))
        k = xnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = xnp.where(rho_new == 0, -10, k).astype(np.int32)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    init = (x0, r0, r0, one, one, one, r0, r0, xnp.asarray(0, np.int32))
    return lax.while_loop(cond, body, init)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """BiCGSTAB for a general A: (x, None)."""
    A, b, x0, maxiter, M, _ = _setup("bicgstab", A, b, x0, tol, atol, maxiter, M)

    def solve(op, rhs):
        return _bicgstab(op, rhs, x0, tol, atol, maxiter, M)

    return lax.custom_linear_solve(A, b, solve, transpose_solve=solve), None


# ---- GMRES ----------------------------------------------------------------------------------

def _gmres(A, b, x0, tol, atol, restart, maxiter, M):
    """Restarted GMRES (left-preconditioned) on flat vectors."""
    b_norm = _norm(b)
    tol_abs = xnp.maximum(tol * b_norm, atol)
    n = b.shape[0]
    dtype = b.dtype

    def residual(x):
        r = M(b - A(x))
        rn = _norm(r)
        return r / xnp.where(rn > 0, rn, 1).astype(dtype), rn

    def cycle(x, unit_r, r_norm):
        V = xnp.zeros((restart + 1, n), dtype).at[0].set(unit_r)
        H = xnp.zeros((restart + 1, restart), dtype)

        def arnoldi(k, vh):
            V, H = vh
            w = M(A(V[k]))
            # Gram-Schmidt against the basis so far, twice (classical, re-orthogonalized)
            mask = (xnp.arange(restart + 1) <= k).astype(dtype)
            h = (xnp.conj(V) @ w) * mask
            w = w - h @ V
            h2 = (xnp.conj(V) @ w) * mask
            w = w - h2 @ V
            h = h + h2
            wn = _norm(w)
            safe = xnp.where(wn > 0, wn, 1).astype(dtype)
            V = V.at[k + 1].set(xnp.where(wn > 0, w / safe, xnp.zeros_like(w)))
            H = H.at[:, k].set(h.at[k + 1].set(wn.astype(dtype)))
            return V, H

        V, H = lax.fori_loop(0, restart, arnoldi, (V, H))
        rhs = xnp.zeros((restart + 1,), dtype).at[0].set(r_norm.astype(dtype))
        y = xnp.linalg.lstsq(H, rhs)[0]
        x = x + y @ V[:restart]
        unit_r, r_norm = residual(x)
        return x, unit_r, r_norm

    unit_r, r_norm = residual(x0)

    def cond(s):
        _, _, r_norm, k = s
        return (k < maxiter) & (r_norm > tol_abs)

    def body(s):
        x, unit_r, r_norm, k = s
        x, unit_r, r_norm = cycle(x, unit_r, r_norm)
        return x, unit_r, r_norm, k + 1

    return lax.while_loop(cond, body, (x0, unit_r, r_norm, xnp.asarray(0, np.int32)))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Restarted GMRES for a general A: (x, info), info -1 if x holds NaNs else 0."""
    if solve_method not in ("batched", "incremental"):
        raise XlapyError(f"gmres: solve_method must be 'batched' or 'incremental', got "
                         f"{solve_method!r}")
    if not isinstance(restart, (int, np.integer)) or restart < 1:
        raise XlapyError(f"gmres: restart must be a positive integer, got {restart!r}")
    A, b, x0, maxiter, M, size = _setup("gmres", A, b, x0, tol, atol, maxiter, M)
    restart = min(int(restart), size)
    from xlapy.flatten_util import ravel_pytree
    _, unravel = ravel_pytree(b)

    def flat(op):
        return lambda v: ravel_pytree(op(unravel(v)))[0]

    def solve(op, rhs):
        rhs_flat = ravel_pytree(rhs)[0]
        x = _gmres(flat(op), rhs_flat, ravel_pytree(x0)[0], tol, atol, restart, maxiter,
                   flat(M))
        return unravel(x)

    x = lax.custom_linear_solve(A, b, solve, transpose_solve=solve)
    info = xnp.where(xnp.isnan(_norm(x)), -1, 0)
    return x, info
