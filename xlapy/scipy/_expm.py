"""The matrix exponential, expm: scaling and squaring with a diagonal Pade approximant
(Higham 2005): degree 7 for 32-bit and narrower floats (theta_7 = 3.926), degree 13 for
float64 (theta_13 = 5.372). A is scaled by 2^-s with s = max(0, ceil(log2(|A|_1 / theta)))
per matrix, r(A/2^s) = (V - U)^-1 (V + U), and the result squared s times (max_squarings
steps of a fori_loop, each matrix squared only while its own count lasts)."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.lax.control import fori_loop
from xlapy.numpy import linalg as la

_PADE7 = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA7, _THETA13 = 3.925724783138660, 5.371920351148152


def _pade(a, b):
    eye = xnp.broadcast_to(xnp.eye(xnp.shape(a)[-1], dtype=a.dtype), xnp.shape(a))
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    if len(b) == 8:
        u = a @ (b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    else:
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 +
                 b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + \
            b[2] * a2 + b[0] * eye
    return la.solve(v - u, v + u)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """e^A of a square matrix (or a batch of them)."""
    a = xnp.asarray(A)
    if xnp.ndim(a) < 2 or xnp.shape(a)[-1] != xnp.shape(a)[-2]:
        raise XlapyError(f"expm: a square matrix is needed, got shape {xnp.shape(a)}")
    if np.dtype(a.dtype).kind not in "fc":
        a = a.astype(np.float32)
    wide = np.dtype(a.dtype) in (np.float64, np.complex128)
    coeffs, theta = (_PADE13, _THETA13) if wide else (_PADE7, _THETA7)
    norm = xnp.max(xnp.sum(xnp.abs(a), axis=-2), axis=-1)
    s = xnp.ceil(xnp.log2(xnp.maximum(norm, 1e-30) / theta))
    s = xnp.clip(xnp.where(xnp.isfinite(s), s, 0.0), 0, max_squarings).astype(np.int32)
    scale = xnp.exp2(-s.astype(norm.dtype)).astype(a.dtype)
    r = _pade(a * scale[..., None, None], coeffs)

    def body(i, m):
        return xnp.where((i < s)[..., None, None], m @ m, m)

    # a static count (max_squarings, as JAX): a scan, so expm is reverse-differentiable
    return fori_loop(0, int(max_squarings), body, r)
