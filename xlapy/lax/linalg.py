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

from xlapy.hlo.evaluator.linalg import cholesky as _reference_cholesky
from xlapy.errors import ShapeError
from xlapy.frontend.core import Tracer, bind, primitive
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.shapes import transpose

__all__ = ["cholesky", "symmetrize"]

cholesky_p = primitive("cholesky")
cholesky_p.def_impl(lambda a, lower: _reference_cholesky(np.asarray(a), lower))


@cholesky_p.def_abstract_eval
def _cholesky_aval(a, lower):
    B.check_types("cholesky", "cholesky", a)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"cholesky: expects square matrices in the two minor dimensions, "
                         f"got {a}")
    return a


cholesky_p.def_lowering(lambda ctx, a, lower: ctx.b.cholesky(a, lower=lower))


def symmetrize(x):
    """(x + x^T) / 2 over the two minor dimensions (jax.lax.linalg.symmetrize)."""
    rank = len(B.aval_of(x).shape)
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return B.div(B.add(x, transpose(x, perm)), B.full_like(x, 2))


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of each matrix of x (jax.lax.linalg.cholesky)."""
    x = x if isinstance(x, Tracer) else np.asarray(x)
    if symmetrize_input:
        _cholesky_aval(B.aval_of(x), True)  # the operand's errors before symmetrize's
        x = symmetrize(x)
    return bind(cholesky_p, x, lower=True)
