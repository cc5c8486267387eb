"""Solves differentiated implicitly (jax.lax.custom_linear_solve, jax.lax.custom_root).

custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                    has_aux=False):
    x = solve(matvec, b), for a linear matvec (x -> A x on pytrees shaped like b). Reverse
    mode does not differentiate through solve's iterations: with x = A^-1 b,
    b's cotangent is A^-T x_ct (transpose_solve(vecmat, x_ct), where vecmat is matvec's
    transpose; solve(matvec, x_ct) when symmetric) and the cotangent of what matvec closes
    over is that of -<b_ct, A x> (so gradients reach a matrix A captured by matvec). Values
    solve closes over get no cotangent. has_aux: solve returns (x, aux); aux is passed
    through without derivatives.

custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    x = solve(f, initial_guess), a root of f. Reverse mode uses the implicit function
    theorem at the root: with J = df/dx there, u = tangent_solve(v -> J^T v, x_ct) and what
    f closes over gets the cotangent of -<u, f(x)>; initial_guess gets none (as JAX's).
    For a scalar root, tangent_solve = lambda g, y: y / g(1.0).

Both are custom_vjp functions whose closed-over values are made operands
(xlapy.frontend.closure.closure_convert): they work eagerly, under jit, vmap and grad
(not under forward-mode jvp, which custom_vjp functions do not support).
"""

from __future__ import annotations

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.autodiff import vjp
from xlapy.frontend.closure import closure_convert
from xlapy.frontend.custom_derivatives import custom_vjp

__all__ = ["custom_linear_solve", "custom_root"]


def _zeros_like(tree):
    import xlapy.numpy as xnp
    return pytree.tree_map(xnp.zeros_like, tree)


def _neg(tree):
    return pytree.tree_map(lambda v: -v, tree)


def _transpose(linear_fn, example):
    """The transpose of a linear function (its VJP, taken at `example`'s shapes)."""
    _, pullback = vjp(linear_fn, _zeros_like(example))
    return lambda ct: pullback(ct)[0]


def _check_structure(name: str, what: str, got, want):
    gs, ws = pytree.flatten(got)[1], pytree.flatten(want)[1]
    if gs != ws:
        raise XlapyError(f"{name}: {what} must have the structure of b {ws}, got {gs}")


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """x = solve(matvec, b), differentiated as the solution of matvec(x) = b."""
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise XlapyError(f"custom_linear_solve: {name} must be callable, got "
                             f"{type(fn).__name__}")
    mv, mv_consts = closure_convert(matvec, b)
    _check_structure("custom_linear_solve", "matvec(b)", mv(b, *mv_consts), b)

    def solve_flat(mv_consts, b):
        return solve(lambda x: mv(x, *mv_consts), b)

    def transpose_flat(mv_consts, b):
        if symmetric:
            return solve_flat(mv_consts, b)
        return transpose_solve(_transpose(lambda v: mv(v, *mv_consts), b), b)

    # the solves' own closed-over values become operands too (with zero cotangents, as
    # JAX's); the transposed solve is traced now, while those values are alive
    sv, sv_consts = closure_convert(solve_flat, list(mv_consts), b)
    if symmetric or transpose_solve is not None:
        tv, tv_consts = closure_convert(transpose_flat, list(mv_consts), b)
    else:
        tv, tv_consts = None, []

    def run_solve(mv_consts, sv_consts, tv_consts, b):
        out = sv(mv_consts, b, *sv_consts)
        x = out[0] if has_aux else out
        _check_structure("custom_linear_solve", "solve's result", x, b)
        return out

    def fwd(mv_consts, sv_consts, tv_consts, b):
        out = run_solve(mv_consts, sv_consts, tv_consts, b)
        return out, (mv_consts, sv_consts, tv_consts, out[0] if has_aux else out)

    def bwd(res, ct):
        mv_consts, sv_consts, tv_consts, x = res
        ct_x = ct[0] if has_aux else ct
        if tv is None:
            raise XlapyError("custom_linear_solve: transpose_solve is required to "
                             "differentiate in reverse mode (or symmetric=True)")
        ct_b = tv(mv_consts, ct_x, *tv_consts)
        if has_aux:
            ct_b = ct_b[0]
        # what matvec closes over: the cotangent of -<ct_b, A(consts) x>
        _, pull = vjp(lambda cs: mv(x, *cs), list(mv_consts))
        (ct_consts,) = pull(_neg(ct_b))
        return ct_consts, _zeros_like(sv_consts), _zeros_like(tv_consts), ct_b

    f = custom_vjp(run_solve)
    f.defvjp(fwd, bwd)
    return f(list(mv_consts), list(sv_consts), list(tv_consts), b)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """x = solve(f, initial_guess), differentiated implicitly at the root f(x) = 0."""
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise XlapyError(f"custom_root: {name} must be callable, got "
                             f"{type(fn).__name__}")
    fc, consts = closure_convert(f, initial_guess)
    _check_structure("custom_root", "f(initial_guess)", fc(initial_guess, *consts),
                     initial_guess)

    def solve_flat(consts, guess):
        return solve(lambda x: fc(x, *consts), guess)

    sv, sv_consts = closure_convert(solve_flat, list(consts), initial_guess)

    def run_solve(consts, sv_consts, guess):
        out = sv(consts, guess, *sv_consts)
        x = out[0] if has_aux else out
        _check_structure("custom_root", "solve's result", x, guess)
        return out

    def fwd(consts, sv_consts, guess):
        out = run_solve(consts, sv_consts, guess)
        return out, (consts, sv_consts, out[0] if has_aux else out)

    def bwd(res, ct):
        consts, sv_consts, x = res
        ct_x = ct[0] if has_aux else ct
        jac_t = _transpose(lambda v: _jvp_x(fc, x, consts, v), x)
        u = tangent_solve(jac_t, ct_x)
        _, pull = vjp(lambda cs: fc(x, *cs), list(consts))
        (ct_consts,) = pull(_neg(u))
        return ct_consts, _zeros_like(sv_consts), _zeros_like(x)

    g = custom_vjp(run_solve)
    g.defvjp(fwd, bwd)
    return g(list(consts), list(sv_consts), initial_guess)


def _jvp_x(fc, x, consts, v):
    """df/dx at x applied to v (linear in v)."""
    from xlapy.frontend.forward import jvp
    return jvp(lambda y: fc(y, *consts), (x,), (v,))[1]
