"""eig and eigvals of general square matrices (jax.numpy.linalg's), through LAPACK's geev
(xlapy.lax.lapack.eig_p, the custom-call JAX emits on the cpu).

Real (f32/f64) and complex (c64/c128) matrices, batched in the leading dims; integer and
other float inputs are promoted to the default float type. Results are always complex
(complex64 for 32-bit input, complex128 for 64-bit), as JAX's: eigenvalues in LAPACK's
order (a conjugate pair of a real matrix adjacent, positive imaginary part first), right
eigenvectors as columns with unit 2-norm and the largest component real. A matrix for
which geev fails (info != 0) gets NaN results, as in JAX. Not differentiable (JAX has no
derivative of the eigenvectors by default; that of the eigenvalues is not implemented).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import complex as C
from xlapy.lax import lapack as L
from xlapy.numpy._core import asarray, canonicalize_dtype, cast, shape
from xlapy.numpy._creation import full_like
from xlapy.numpy._shape_ops import expand_dims
from xlapy.numpy._ufuncs import where

_LAPACK_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                             np.complex128))


def _operand(name, a):
    a = asarray(a)
    s = shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise XlapyError(f"linalg.{name}: expects square matrices in the last two "
                         f"dimensions, got shape {list(s)}")
    dt = np.dtype(a.dtype)
    if dt not in _LAPACK_TYPES:
        a = cast(a, canonicalize_dtype(np.complex128 if dt.kind == "c" else np.float64))
    return a


def _nan_unless(info, x, nd):
    good = info == 0
    for _ in range(nd):
        good = expand_dims(good, -1)
    nan = complex(np.nan, np.nan) if np.dtype(x.dtype).kind == "c" else np.nan  # as JAX
    return where(good, x, full_like(x, nan))


def _geev(a, vectors: bool):
    outs = L.eig_p.bind(a, compute_left=False, compute_right=vectors)
    if np.dtype(a.dtype).kind == "f":
        wr, wi, _, vr, info = outs
        w = C.complex_(wr, wi)
    else:
        w, _, vr, info = outs
    return _nan_unless(info, w, 1), _nan_unless(info, vr, 2)


def eig(a):
    """(w, v): the eigenvalues w[..., i] and right eigenvectors v[..., :, i] of a, with
    a v[..., :, i] = w[..., i] v[..., :, i]."""
    return _geev(_operand("eig", a), True)


def eigvals(a):
    """The eigenvalues of a (complex), as eig's w."""
    return _geev(_operand("eigvals", a), False)[0]
