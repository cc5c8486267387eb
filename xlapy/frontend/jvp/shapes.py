"""JVP rules of primitives/shapes.py.

Linear (the rule applies the primitive to the tangent): reshape, transpose, reduce_sum,
slice, pad (jointly in the operand and the padding value), concatenate, rev.
Bilinear: dot_general.
  reduce_max/min  the mean of the tangents at the positions holding the extremum (JAX's
                  rule: ties share equally)
  reduce_prod     sum_i t_i * prod_{j != i} x_j, with the zero-safe products of the VJP
argmax/argmin/iota/reduce_and/reduce_or have integer or bool results: no rule needed.
"""

from __future__ import annotations

from xlapy.frontend.jvp.rules import bilinear, derivatives, linear
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.primitives.basic import aval_of, convert, div, eq, full, mul

for _p in (S.reshape_p, S.transpose_p, S.reduce_sum_p, S.slice_p, S.pad_p, S.concatenate_p,
           S.rev_p):
    linear(_p)
bilinear(S.dot_general_p)


def _chooser(t, x, out, axes):
    a = aval_of(x)
    at = S._expand_back(out, a.shape, axes)
    where = convert(eq(x, at), a.dtype)
    return div(S.reduce_sum(mul(t, where), axes), S.reduce_sum(where, axes))


derivatives(S.reduce_max_p, _chooser)
derivatives(S.reduce_min_p, _chooser)


def _prod(t, x, out, axes):
    # the VJP with a cotangent of ones gives d(prod)/dx_i (the product of the others)
    (others,) = S.reduce_prod_p.vjp(full(aval_of(out).shape, 1, aval_of(out).dtype), x,
                                    out=out, axes=axes)
    return S.reduce_sum(mul(t, others), axes)


derivatives(S.reduce_prod_p, _prod)

