"""JVP rules of primitives/indexing.py (indices are never differentiated).

  gather        linear in the operand
  scatter       linear jointly in (operand, updates): the same positions are overwritten
                by the same (last) update, so the tangent is scatter(tx, idx, tu)
  scatter_add   linear jointly in (operand, updates)
  scatter_mul   tx scattered-multiplied by u, plus out * (the sum of tu/u at each
                target): d(x*prod u) = tx*prod u + out*sum(tu/u)  (u != 0 assumed, as the VJP)
  scatter_min/max  at each position, the mean of the tangents of the contributors equal
                to the result (the operand and in-bounds updates; ties share equally, as
                reduce_max and JAX do)
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.jvp.rules import add_tangents, instantiate, linear
from xlapy.frontend.primitives import indexing as I
from xlapy.frontend.primitives.basic import (add, and_, aval_of, convert, div, eq, full, max_,
                                             mul, select, zeros_like)

linear(I.gather_p, argnums=(0,))
linear(I.scatter_p, argnums=(0, 2))
linear(I.scatter_add_p, argnums=(0, 2))


def _scatter_mul_rule(primals, tangents, dimension_numbers):
    x, idx, u = primals
    tx, _, tu = tangents
    dn = dimension_numbers
    out = bind(I.scatter_mul_p, x, idx, u, dimension_numbers=dn)
    t = None
    if tx is not None:
        t = bind(I.scatter_mul_p, tx, idx, u, dimension_numbers=dn)
    if tu is not None:
        ok = I._in_bounds_updates(x, idx, u, dn)
        rel = select(ok, div(tu, u), zeros_like(tu))
        t = add_tangents(t, mul(out, bind(I.scatter_add_p, zeros_like(x), idx, rel,
                                          dimension_numbers=dn)))
    return out, t


I.scatter_mul_p.def_jvp(_scatter_mul_rule)


def _scatter_extremum_rule(prim):
    def rule(primals, tangents, dimension_numbers):
        x, idx, u = primals
        dn, dt = dimension_numbers, aval_of(x).dtype
        out = bind(prim, x, idx, u, dimension_numbers=dn)
        tx, tu = instantiate(tangents[0], x), instantiate(tangents[2], u)
        ua = aval_of(u)
        hit_u = and_(eq(u, I._gather_updates(out, idx, ua.shape, dn)),
                     I._in_bounds_updates(x, idx, u, dn))
        hit_x = eq(x, out)
        n_u = bind(I.scatter_add_p, zeros_like(x), idx, convert(hit_u, dt), dimension_numbers=dn)
        count = max_(add(convert(hit_x, dt), n_u), full(aval_of(x).shape, 1, dt))
        from_u = bind(I.scatter_add_p, zeros_like(x), idx, select(hit_u, tu, zeros_like(tu)),
                      dimension_numbers=dn)
        total = add(select(hit_x, tx, zeros_like(tx)), from_u)
        return out, div(total, count)
    prim.def_jvp(rule)


_scatter_extremum_rule(I.scatter_min_p)
_scatter_extremum_rule(I.scatter_max_p)
