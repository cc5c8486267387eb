"""xlapy.lax.linalg: linear-algebra primitives, named and shaped like jax.lax.linalg.

cholesky(x, symmetrize_input=True): the lower Cholesky factor L of each matrix of the two
minor dimensions of x (x = L L^T), NaN for a matrix that is not positive definite. It is
the `cholesky` HLO opcode (lower=true): the cpu backend factors through LAPACK potrf, the
interpreter (and eager mode, which shares its NumPy implementation) through NumPy. As in
JAX, the input is first symmetrized ((x + x^T) / 2); with symmetrize_input=False only its
lower triangle is read. Floating-point types only (f16/bf16 are factored in f32).
Differentiation is not implemented yet (it needs a triangular solve).
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend.core import Tracer, bind
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.linalg import cholesky_aval, cholesky_p
from xlapy.frontend.primitives.shapes import transpose

__all__ = ["cholesky", "symmetrize"]

def symmetrize(x):
    """(x + x^T) / 2 over the two minor dimensions (jax.lax.linalg.symmetrize)."""
    rank = len(B.aval_of(x).shape)
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return B.div(B.add(x, transpose(x, perm)), B.full_like(x, 2))


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of each matrix of x (jax.lax.linalg.cholesky)."""
    x = x if isinstance(x, Tracer) else np.asarray(x)
    if symmetrize_input:
        cholesky_aval(B.aval_of(x), True)  # the operand's errors before symmetrize's
        x = symmetrize(x)
    return bind(cholesky_p, x, lower=True)
