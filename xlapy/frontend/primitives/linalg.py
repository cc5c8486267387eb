"""Linear-algebra primitives (the user-facing functions are in xlapy.lax.linalg).

cholesky(a, lower): the `cholesky` HLO opcode on the two minor dimensions of a; eager
through the evaluator's rule (hlo/evaluator/linalg.py, the one NumPy implementation)."""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import primitive
from xlapy.frontend.primitives import basic as B
from xlapy.hlo.evaluator.linalg import cholesky as _reference_cholesky

cholesky_p = primitive("cholesky")
cholesky_p.def_impl(lambda a, lower: _reference_cholesky(np.asarray(a), lower))


@cholesky_p.def_abstract_eval
def cholesky_aval(a, lower):
    B.check_types("cholesky", "cholesky", a)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"cholesky: expects square matrices in the two minor dimensions, "
                         f"got {a}")
    return a


cholesky_p.def_lowering(lambda ctx, a, lower: ctx.b.cholesky(a, lower=lower))
