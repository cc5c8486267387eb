"""Helpers that build JVP rules (see the package docstring for the rule convention)."""

from __future__ import annotations

from xlapy.frontend.core import bind, get_aval
from xlapy.frontend.primitives.basic import add, full, is_float


def zeros_of(x):
    a = get_aval(x)
    return full(a.shape, 0, a.dtype)


def instantiate(t, primal):
    """A tangent as an array: zeros for a symbolic zero."""
    return zeros_of(primal) if t is None else t


def add_tangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return add(a, b)


def float_out(out) -> bool:
    return is_float(get_aval(out).dtype)


def linear(prim, argnums=None):
    """prim is linear in the operands `argnums` jointly (all when None), the others fixed:
    tangent_out = prim(tangents of argnums, the other operands unchanged)."""
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        idx = range(len(primals)) if argnums is None else argnums
        if all(tangents[i] is None for i in idx) or not _any_float(prim, out):
            return out, _none(prim, out)
        args = list(primals)
        for i in idx:
            args[i] = instantiate(tangents[i], primals[i])
        return out, bind(prim, *args, **params)
    prim.def_jvp(rule)
    return rule


def bilinear(prim):
    """prim(x, y) linear in each operand: tangent_out = prim(tx, y) + prim(x, ty)."""
    def rule(primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        out = bind(prim, x, y, **params)
        t = None
        if tx is not None:
            t = bind(prim, tx, y, **params)
        if ty is not None:
            t = add_tangents(t, bind(prim, x, ty, **params))
        return out, t
    prim.def_jvp(rule)
    return rule


def derivatives(prim, *partials):
    """One function per operand: partials[i](t_i, *primals, out=out, **params) -> the
    contribution of operand i's tangent (None: the operand is not differentiable, e.g. an
    index). Contributions are summed."""
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        t = None
        for fn, ti in zip(partials, tangents):
            if fn is None or ti is None:
                continue
            t = add_tangents(t, fn(ti, *primals, out=out, **params))
        return out, t
    prim.def_jvp(rule)
    return rule


def zero(prim):
    """prim is piecewise constant (floor, sign, round, ...): the tangent is zero."""
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        return out, _none(prim, out)
    prim.def_jvp(rule)
    return rule


def _any_float(prim, out) -> bool:
    outs = out if prim.multiple_results else [out]
    return any(float_out(o) for o in outs)


def _none(prim, out):
    return [None] * len(out) if prim.multiple_results else None
