"""QR factors with JAX's derivative (jax._src.lax.linalg's qr_jvp_rule), for
xlapy.numpy.linalg.qr and xlapy.scipy.linalg.qr.

The factorization runs on the LAPACK primitives (geqrf, then householder_product for Q),
which have no derivative of their own: `qr_factors` is a custom_jvp with JAX's rule, and
reverse mode transposes it (custom_jvp's VJP).

  m >= n, reduced:  with Y = dA R^-1 and C = Q^H Y, O = tril(C, -1) - tril(C, -1)^H
                    (plus i Im diag(C) for complex A):
                    dQ = Q (O - C) + Y, dR = (C - O) R (Walter/Lehmann; Townsend's note)
  m < n:            A = Q [R1 R2]: (dQ, dR1) from the square block A1 = Q R1, and
                    dR2 = dQ^H A2 + Q^H dA2
  m > n, complete:  the extra columns of dQ by Eq. 32-33 of arXiv:2409.13374 (a solve
                    with (Q_nn - I)^H), dR's extra rows zero.
(^H is the transpose for real matrices: these are JAX's rules for both.)
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.frontend.custom_derivatives import custom_jvp
from xlapy.lax import lapack as L
from xlapy.numpy._complex import conjugate, real
from xlapy.numpy._core import shape
from xlapy.numpy._creation import eye, zeros
from xlapy.numpy._shape_ops import concatenate, swapaxes, tril, triu


def _mT(a):
    return swapaxes(a, -1, -2)


def _complex(a) -> bool:
    return np.dtype(a.dtype).kind == "c"


def _mH(a):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return conjugate(_mT(a)) if _complex(a) else _mT(a)


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def qr_factors(a, complete: bool):
    """(q, r) of a[..., m, n] (f32/f64, c64/c128: geqrf and orgqr / ungqr): reduced
    (q m x k, r k x n) or complete (q m x m, r m x n), k = min(m, n)."""
    m, n = shape(a)[-2:]
    r, tau = L.geqrf_p.bind(a)
    k = min(m, n)
    r_out = triu(r if complete else r[..., :k, :])
    if complete and m > n:
        from xlapy.numpy._padding import pad
        widths = [(0, 0)] * (len(shape(a)) - 1) + [(0, m - n)]
        q = L.householder_product_p.bind(pad(r, widths), tau)
    else:
        q = L.householder_product_p.bind(r[..., :, :k], tau)
    return q, r_out


def _thin_jvp(q, r, dx):
    """dQ, dR of a = Q R with m >= n (R square, upper triangular)."""
    y = L.triangular_solve_p.bind(r, dx, left_side=False, lower=False, transpose_a=False,
                                  unit_diagonal=False)           # dx R^-1
    c = _mH(q) @ y
    low = tril(c, -1)
    o = low - _mH(low)
    if _complex(c):   # the diagonal's imaginary part (JAX's correction for complex inputs)
        n = shape(r)[-1]
        o = o + eye(n, dtype=c.dtype) * (c - real(c).astype(c.dtype))
    return q @ (o - c) + y, (c - o) @ r


@qr_factors.defjvp
def _qr_factors_jvp(complete, primals, tangents):
    (x,), (dx,) = primals, tangents
    q, r = qr_factors(x, complete)
    m, n = shape(x)[-2:]
    if m < n:
        dq, dr1 = _thin_jvp(q, r[..., :, :m], dx[..., :, :m])
        dr2 = _mH(dq) @ x[..., :, m:] + _mH(q) @ dx[..., :, m:]
        return (q, r), (dq, concatenate([dr1, dr2], axis=-1))
    q_mn = q[..., :, :n] if complete else q
    r_nn = r[..., :n, :n] if complete else r
    dq_mn, dr_nn = _thin_jvp(q_mn, r_nn, dx)
    if not complete or m == n:
        return (q, r), (dq_mn, dr_nn)
    from xlapy.numpy.linalg import solve
    q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., :, n:]
    dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
    z_pn_t = solve(_mH(q_nn - eye(n, dtype=q.dtype)), _mH(q_pn))      # Z_pn^H
    z_pn = _mH(z_pn_t)
    dq_mp = dq_mn @ z_pn_t - (q_mn + q_mp @ z_pn) @ _mH(dq_pn - z_pn @ dq_nn)
    dr = concatenate([dr_nn, zeros(shape(dr_nn)[:-2] + (m - n, n), dtype=dr_nn.dtype)],
                     axis=-2)
    return (q, r), (concatenate([dq_mn, dq_mp], axis=-1), dr)


__all__ = ["qr_factors"]
