"""xlapy.lax.linalg: linear-algebra primitives, named and shaped like jax.lax.linalg.

cholesky(x, symmetrize_input=True): the lower Cholesky factor L of each matrix of the two
minor dimensions of x (x = L L^T, or L L^H for complex x), NaN for a matrix that is not
positive definite. It is the `cholesky` HLO opcode (lower=true): the cpu backend factors
through LAPACK potrf (cpotrf/zpotrf for c64/c128), the evaluator (the interpreter, and
eager mode through the opcode) through NumPy. As in JAX, the input is first symmetrized
((x + x^H) / 2); with symmetrize_input=False only its lower triangle is read (the Hermitian
matrix it defines). Floating-point and complex types (f16/bf16 are factored in f32).
Differentiable: JAX's rule, dL = L phi(L^-1 dx L^-H) (xlapy/lax/lapack_ad.py).

qr, svd, eigh, triangular_solve, lu: xlapy/lax/linalg_factor.py.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.batching.trace import leading_batch_rule
from xlapy.frontend.core import Tracer, bind, primitive
from xlapy.frontend.eager import via_evaluator
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.complex import conj
from xlapy.frontend.primitives.shapes import transpose

__all__ = ["cholesky", "eigh", "lu", "qr", "svd", "symmetrize", "triangular_solve"]

# ---- the cholesky primitive and its rules ----------------------------------------------------

cholesky_p = primitive("cholesky")
cholesky_p.def_impl(via_evaluator(cholesky_p))               # eager: the evaluator's rule
cholesky_p.def_lowering(lambda ctx, a, lower: ctx.b.op("cholesky", a, lower=lower))
cholesky_p.def_batch(leading_batch_rule(cholesky_p))         # vmap: batch dims lead


@cholesky_p.def_abstract_eval
def cholesky_aval(a, lower):
    B.check_types("cholesky", "cholesky", a)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"cholesky: expects square matrices in the two minor dimensions, "
                         f"got {a}")
    return a


# ---- the user functions (jax.lax.linalg's) ---------------------------------------------------

def symmetrize(x):
    """(x + x^H) / 2 over the two minor dimensions (jax.lax.linalg.symmetrize): x^T for
    real x, the conjugate transpose for complex x (the Hermitian part)."""
    aval = B.aval_of(x)
    rank = len(aval.shape)
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    xt = transpose(x, perm)
    if np.dtype(aval.dtype).kind == "c":
        xt = conj(xt)
    return B.div(B.add(x, xt), B.full_like(x, 2))


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of each matrix of x (jax.lax.linalg.cholesky)."""
    x = x if isinstance(x, Tracer) else np.asarray(x)
    if symmetrize_input:
        cholesky_aval(B.aval_of(x), True)  # the operand's errors before symmetrize's
        x = symmetrize(x)
    return bind(cholesky_p, x, lower=True)


# the derivatives of cholesky and of the LAPACK primitives (registered on import)
from xlapy.lax import lapack_ad as _lapack_ad  # noqa: E402,F401
# qr, svd, eigh, triangular_solve, lu (over xlapy.numpy.linalg's functions)
from xlapy.lax.linalg_factor import eigh, lu, qr, svd, triangular_solve  # noqa: E402
