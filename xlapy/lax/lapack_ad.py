"""Derivatives of the linear-algebra primitives (xlapy.lax.lapack's and cholesky), as JAX
defines them (jax._src.lax.linalg), written in xlapy's own operations.

Forward mode: one JVP rule per primitive.

  triangular_solve  x = op(a)^-1 b: linear in b; dx = -op(a)^-1 op(da) x (left side) or
                    -x op(da) op(a)^-1 (right side), da kept to a's triangle (without the
                    diagonal when unit_diagonal).
  cholesky          a = L L^H: dL = L phi(L^-1 da L^-H), phi the lower triangle with the
                    diagonal halved (Murray 2016; L^H = L^T for real a).
  lu                P a = L U: X = L^-1 P da U^-1, dL = L tril(X, -1), dU = triu(X) U, the
                    tangent of the packed output dL + dU (De Hoog, Anderssen and Lukas).
                    Rectangular matrices as JAX: L padded to m x m, U to n x n with the
                    identity. Pivots and info have no tangent.
  eigh              a = V diag(w) V^H: dw = re diag(V^H da V), dV = V (F o V^H da V) with
                    F_ij = 1 / (w_j - w_i) off the diagonal (distinct eigenvalues). Its VJP
                    rule for complex matrices is the transpose of this map (for real ones,
                    lapack.py's explicit rule).
  svd               a = U diag(s) V^H: ds = re diag(U^H da V) and the dU, dV of JAX's rule
                    (complex a: with JAX's i Im(diag(U^H da V)) / s term in dU; the VJP,
                    the transpose of this map); full_matrices=True of a non-square matrix
                    is not differentiable (as in JAX).
  eig               eigenvalues only (as JAX: eigenvectors are not differentiable):
                    dw_i = u_i^H da v_i / u_i^H v_i with the left and right eigenvectors
                    u_i, v_i (Giles 2008, eq. 4.60, without inverting V); of a real matrix
                    the tangents of wr and wi are dw's real and imaginary parts.

Reverse mode: the tangent maps above are linear in the input tangent, so a VJP rule is the
VJP of the tangent map (taken by the tape at a zero tangent): the transposed map, with no
formula of its own to get wrong. triangular_solve and eigh keep their explicit VJP rules
(xlapy/lax/lapack.py). geqrf and householder_product have no derivative of their own: the
packed Householder reflectors are not what anyone differentiates; xlapy.numpy.linalg.qr is
a custom_jvp with JAX's QR rule instead.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import bind, get_aval
from xlapy.frontend.jvp.rules import add_tangents
from xlapy.frontend.primitives import complex as C
from xlapy.lax import lapack as LP
from xlapy.lax import ops as O
from xlapy.lax.linalg import cholesky_p

# ---- helpers on stacks of matrices (the last two dims) ---------------------------------------


def _shape(x) -> tuple:
    return tuple(get_aval(x).shape)


def _dtype(x):
    return np.dtype(get_aval(x).dtype)


def mT(x):
    r = len(_shape(x))
    return O.transpose(x, tuple(range(r - 2)) + (r - 1, r - 2))


def conj(x):
    """The complex conjugate of x (x itself when real)."""
    return C.conj(x) if np.issubdtype(_dtype(x), np.complexfloating) else x


def mH(x):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return conj(mT(x))


def mm(a, b):
    r = len(_shape(a))
    batch = tuple(range(r - 2))
    return O.dot_general(a, b, (((r - 1,), (r - 2,)), (batch, batch)))


def _band(x, k: int, lower: bool):
    """tril(x, k) (lower) or triu(x, k)."""
    s = _shape(x)
    r = len(s)
    rows = O.broadcasted_iota(np.int32, s, r - 2)
    cols = O.broadcasted_iota(np.int32, s, r - 1)
    diff = O.sub(cols, rows)
    keep = O.le(diff, O.full(s, k, np.int32)) if lower else O.ge(diff, O.full(s, k, np.int32))
    return O.select(keep, x, O.full(s, 0, _dtype(x)))


def tril(x, k: int = 0):
    return _band(x, k, True)


def triu(x, k: int = 0):
    return _band(x, k, False)


def eye(batch: tuple, n: int, m: int, dtype):
    s = tuple(batch) + (n, m)
    r = len(s)
    on = O.eq(O.broadcasted_iota(np.int32, s, r - 2), O.broadcasted_iota(np.int32, s, r - 1))
    return O.convert_element_type(on, dtype)


def _rows(v, k: int):
    """v[..., j] repeated down k rows: out[..., i, j] = v[..., j]."""
    s = _shape(v)
    return O.broadcast_in_dim(v, s[:-1] + (k, s[-1]), tuple(range(len(s) - 1)) + (len(s),))


def _cols(v, k: int):
    """out[..., i, j] = v[..., i] for k columns."""
    s = _shape(v)
    return O.broadcast_in_dim(v, s + (k,), tuple(range(len(s))))


def diag(x):
    """The diagonal of each (square) matrix: [..., n]."""
    s = _shape(x)
    mask = eye(s[:-2], s[-2], s[-1], _dtype(x))
    return O.reduce_sum(O.mul(x, mask), (len(s) - 1,))


def _sub_block(x, rows: tuple, cols: tuple):
    s = _shape(x)
    starts = (0,) * (len(s) - 2) + (rows[0], cols[0])
    limits = s[:-2] + (rows[1], cols[1])
    return O.slice(x, starts, limits)


def _trsm(a, b, *, left_side=True, lower=True, transpose_a=False, unit_diagonal=False):
    return LP.triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _zeros(x):
    return O.full(_shape(x), 0, _dtype(x))


def _vjp_of_tangent(prim, tangent):
    """A VJP rule from `tangent(primals, out, dots, **params) -> output tangents` (a list
    for a multi-result primitive, None for an output without one), linear in `dots` (the
    first operand's tangent; the other operands are not differentiable)."""
    def rule(cts, *primals, out, **params):
        from xlapy.frontend.autodiff import vjp
        outs = list(out) if prim.multiple_results else [out]
        cts = list(cts) if prim.multiple_results else [cts]
        keep = [i for i, o in enumerate(outs) if np.issubdtype(_dtype(o), np.inexact)]

        def lin(dot):
            ts = tangent(primals, out, [dot], **params)
            ts = ts if prim.multiple_results else [ts]
            return [ts[i] if ts[i] is not None else _zeros(outs[i]) for i in keep]

        _, back = vjp(lin, _zeros(primals[0]))
        (grad,) = back([cts[i] for i in keep])
        return (grad,) + (None,) * (len(primals) - 1)
    prim.def_vjp(rule)
    return rule


# ---- triangular_solve ------------------------------------------------------------------------

def _trsm_jvp(primals, tangents, *, left_side, lower, transpose_a, unit_diagonal):
    a, b = primals
    ta, tb = tangents
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              unit_diagonal=unit_diagonal)
    x = _trsm(a, b, **kw)
    t = None if tb is None else _trsm(a, tb, **kw)
    if ta is not None:
        k = 1 if unit_diagonal else 0
        g = O.neg(tril(ta, -k) if lower else triu(ta, k))
        g = mT(g) if transpose_a else g
        ga = _trsm(a, mm(g, x), **kw) if left_side else _trsm(a, mm(x, g), **kw)
        t = add_tangents(t, ga)
    return x, t


LP.triangular_solve_p.def_jvp(_trsm_jvp)


# ---- cholesky --------------------------------------------------------------------------------

def _phi(x):
    s = _shape(x)
    half = O.add(O.full(s, 1, _dtype(x)), eye(s[:-2], s[-2], s[-1], _dtype(x)))
    return O.div(tril(x), half)


def _cholesky_tangent(primals, out, dots, *, lower):
    factor = tril(out) if lower else mH(triu(out))                       # L (U = L^H)
    sigma = dots[0]
    tmp = _trsm(conj(factor), sigma, left_side=False, transpose_a=True)  # sigma L^-H
    d = mm(factor, _phi(_trsm(factor, tmp)))                             # L phi(L^-1 .)
    return d if lower else mH(d)


def _cholesky_jvp(primals, tangents, *, lower):
    out = bind(cholesky_p, primals[0], lower=lower)
    if tangents[0] is None:
        return out, None
    return out, _cholesky_tangent(primals, out, tangents, lower=lower)


cholesky_p.def_jvp(_cholesky_jvp)
_vjp_of_tangent(cholesky_p, _cholesky_tangent)


# ---- lu ----------------------------------------------------------------------------------------

def permutation_from_pivots(pivots, m: int):
    """The row permutation (s32[..., m]) that LAPACK's 0-based row swaps `pivots` make:
    row i of P a is row perm[i] of a."""
    s = _shape(pivots)
    batch, k = s[:-1], s[-1]
    ids = O.broadcasted_iota(np.int32, batch + (m,), len(batch))
    perm = ids
    for i in range(k):
        j = O.broadcast_in_dim(O.reshape(O.slice(pivots, (0,) * len(batch) + (i,),
                                                 batch + (i + 1,)), batch),
                               batch + (m,), tuple(range(len(batch))))
        at_j = O.eq(ids, j)
        pj = O.reduce_sum(O.select(at_j, perm, O.full(_shape(perm), 0, np.int32)),
                          (len(batch),))
        pi = O.reshape(O.slice(perm, (0,) * len(batch) + (i,), batch + (i + 1,)), batch)
        at_i = O.eq(ids, O.full(_shape(ids), i, np.int32))
        spread = tuple(range(len(batch)))
        perm = O.select(at_i, O.broadcast_in_dim(pj, batch + (m,), spread),
                        O.select(at_j, O.broadcast_in_dim(pi, batch + (m,), spread), perm))
    return perm


def _permutation_matrix(perm, dtype):
    """P with P[..., i, j] = (perm[..., i] == j)."""
    s = _shape(perm)
    m = s[-1]
    rows = _cols(perm, m)
    return O.convert_element_type(
        O.eq(rows, O.broadcasted_iota(np.int32, s + (m,), len(s))), dtype)


def _lu_tangent(primals, out, dots):
    lu, pivots, _ = out
    s = _shape(lu)
    batch, (m, n) = s[:-2], s[-2:]
    k = min(m, n)
    dt = _dtype(lu)
    nb = len(batch)
    zero = O.full((), 0, dt)
    low = tril(_sub_block(lu, (0, m), (0, k)), -1)
    low = O.add(O.pad(low, zero, [(0, 0, 0)] * nb + [(0, 0, 0), (0, m - k, 0)]),
                eye(batch, m, m, dt))
    up = O.pad(triu(_sub_block(lu, (0, k), (0, n))), zero,
               [(0, 0, 0)] * nb + [(0, n - k, 0), (0, 0, 0)])
    if n > k:
        up = O.add(up, O.pad(eye(batch, n - k, n - k, dt), zero,
                             [(0, 0, 0)] * nb + [(k, 0, 0), (k, 0, 0)]))
    perm = permutation_from_pivots(O.sub(pivots, O.full(_shape(pivots), 1, np.int32)), m)
    pa = mm(_permutation_matrix(perm, dt), dots[0])
    la = _trsm(low, pa, unit_diagonal=True)
    lau = _trsm(up, la, left_side=False, lower=False)
    return [O.add(mm(low, tril(lau, -1)), mm(triu(lau), up)), None, None]


def _lu_jvp(primals, tangents):
    out = LP.lu_p.bind(primals[0])
    if tangents[0] is None:
        return out, [None, None, None]
    return out, _lu_tangent(primals, out, tangents)


LP.lu_p.def_jvp(_lu_jvp)
_vjp_of_tangent(LP.lu_p, _lu_tangent)


# ---- eigh ------------------------------------------------------------------------------------

def _eigh_tangent(primals, out, dots, *, lower, compute_v):
    v, w, _ = out if compute_v else LP.eigh_p.bind(primals[0], lower=lower, compute_v=True)
    n = _shape(w)[-1]
    vav = mm(mH(v), mm(dots[0], v))
    cplx = np.issubdtype(_dtype(v), np.complexfloating)
    dw = C.real(diag(vav)) if cplx else diag(vav)     # (real: V^H da V is Hermitian)
    if not compute_v:
        return [None, dw, None]
    s = _shape(v)
    ident = eye(s[:-2], n, n, _dtype(v))
    wc = O.convert_element_type(w, _dtype(v)) if cplx else w
    f = O.sub(O.div(O.full(s, 1, _dtype(v)), O.add(ident, O.sub(_rows(wc, n), _cols(wc, n)))),
              ident)
    return [mm(v, O.mul(f, vav)), dw, None]


def _eigh_jvp(primals, tangents, *, lower, compute_v):
    out = LP.eigh_p.bind(primals[0], lower=lower, compute_v=compute_v)
    if tangents[0] is None:
        return out, [None, None, None]
    return out, _eigh_tangent(primals, out, tangents, lower=lower, compute_v=compute_v)


LP.eigh_p.def_jvp(_eigh_jvp)
_real_eigh_vjp = LP.eigh_p.vjp                         # the explicit rule (lapack.py)
_complex_eigh_vjp = _vjp_of_tangent(LP.eigh_p, _eigh_tangent)


@LP.eigh_p.def_vjp
def _eigh_vjp(cts, a, out, **params):
    """Real matrices: the explicit rule; complex ones: the transpose of the tangent map
    (JAX's convention for complex VJPs)."""
    if np.issubdtype(_dtype(a), np.complexfloating):
        return _complex_eigh_vjp(cts, a, out=out, **params)
    return _real_eigh_vjp(cts, a, out, **params)


# ---- svd ---------------------------------------------------------------------------------------

def _svd_tangent(primals, out, dots, *, full_matrices, compute_uv):
    """JAX's rule (jax/_src/lax/linalg.py's _svd_jvp_rule), for real and complex a; ^H is
    the transpose of a real matrix, and the term i Im(diag(U^H da V)) / s of dU is zero
    for real ones."""
    a, da = primals[0], dots[0]
    m, n = _shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise XlapyError("svd: the derivative with full_matrices=True is implemented for "
                         f"square matrices only (as in JAX), got a {m}x{n} matrix; use "
                         "full_matrices=False")
    if compute_uv:
        s, u, vt, _ = out
    else:
        s, u, vt, _ = LP.svd_p.bind(a, full_matrices=False, compute_uv=True)
    dt = _dtype(a)
    cplx = np.issubdtype(dt, np.complexfloating)
    k = _shape(s)[-1]
    v = mH(vt)
    ds_mat = mm(mH(u), mm(da, v))
    ds = C.real(diag(ds_mat)) if cplx else diag(ds_mat)
    if not compute_uv:
        return [ds, None, None, None]
    sc = O.convert_element_type(s, dt) if cplx else s      # s in a's type
    sj, si = _rows(sc, k), _cols(sc, k)
    ident = eye(_shape(s)[:-1], k, k, dt)
    diffs = O.mul(O.add(sj, si), O.sub(sj, si))
    f = O.sub(O.div(O.full(_shape(ident), 1, dt), O.add(diffs, ident)), ident)
    dss = O.mul(sj, ds_mat)
    sds = O.mul(si, ds_mat)
    inner_u = O.mul(f, O.add(dss, mH(dss)))
    if cplx:   # .5 (dS - dS^H) diag(1 / s) (1 / 0 taken as 0): the diagonal's phase
        zero = O.eq(s, O.full(_shape(s), 0, _dtype(s)))
        z = O.convert_element_type(zero, _dtype(s))
        s_inv = O.convert_element_type(O.sub(O.div(O.full(_shape(s), 1, _dtype(s)),
                                                   O.add(s, z)), z), dt)
        half = O.mul(O.sub(ds_mat, mH(ds_mat)), O.full(_shape(ds_mat), 0.5, dt))
        inner_u = O.add(inner_u, O.mul(half, O.mul(ident, _rows(s_inv, k))))
    du = mm(u, inner_u)
    dv = mm(v, O.mul(f, O.add(sds, mH(sds))))
    if m > n:
        dav = mm(da, v)
        du = O.add(du, O.div(O.sub(dav, mm(u, mm(mH(u), dav))), _rows(sc, m)))
    if n > m:
        dau = mm(mH(da), u)
        dv = O.add(dv, O.div(O.sub(dau, mm(v, mm(vt, dau))), _rows(sc, n)))
    return [ds, du, mH(dv), None]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    out = LP.svd_p.bind(primals[0], full_matrices=full_matrices, compute_uv=compute_uv)
    if tangents[0] is None:
        return out, [None] * 4
    return out, _svd_tangent(primals, out, tangents, full_matrices=full_matrices,
                             compute_uv=compute_uv)


LP.svd_p.def_jvp(_svd_jvp)
_vjp_of_tangent(LP.svd_p, _svd_tangent)


# ---- eig (eigenvalues) ---------------------------------------------------------------------

def _no_vector_derivatives(compute_left, compute_right):
    if compute_left or compute_right:
        raise XlapyError("eig: the derivatives of eigenvectors are not implemented (nor in "
                         "JAX), only those of the eigenvalues (linalg.eigvals)")


def _eig_dw(a, da, vl, vr):
    if not np.issubdtype(_dtype(da), np.complexfloating):
        da = C.complex_(da, _zeros(da))
    uh = C.conj(mT(vl))
    dw = O.mul(diag(mm(uh, mm(da, vr))), O.div(O.full(_shape(vr)[:-1], 1, _dtype(vr)),
                                               diag(mm(uh, vr))))
    if np.issubdtype(_dtype(a), np.complexfloating):
        return [dw, None, None, None]
    return [C.real(dw), C.imag(dw), None, None, None]


def _eig_tangent(primals, out, dots, *, compute_left, compute_right):
    _no_vector_derivatives(compute_left, compute_right)
    both = LP.eig_p.bind(primals[0], compute_left=True, compute_right=True)
    return _eig_dw(primals[0], dots[0], both[-3], both[-2])


def _eig_jvp(primals, tangents, *, compute_left, compute_right):
    if tangents[0] is None:
        out = LP.eig_p.bind(primals[0], compute_left=compute_left,
                            compute_right=compute_right)
        return out, [None] * len(out)
    _no_vector_derivatives(compute_left, compute_right)
    both = list(LP.eig_p.bind(primals[0], compute_left=True, compute_right=True))
    tangent = _eig_dw(primals[0], tangents[0], both[-3], both[-2])
    both[-3], both[-2] = _zeros(both[-3]), _zeros(both[-2])   # not asked for: zeros
    return both, tangent


LP.eig_p.def_jvp(_eig_jvp)
_vjp_of_tangent(LP.eig_p, _eig_tangent)
