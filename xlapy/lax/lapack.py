"""Linear-algebra primitives that lower to the LAPACK custom-calls JAX emits on the cpu
(hlo/lapack_calls.py has their contracts; the interpreter and the cpu backend run them
through scipy's LAPACK, as jaxlib does).

  lu_p                 a[...,m,n] -> (lu, pivots s32[...,min(m,n)] (1-based), info s32[...])
  triangular_solve_p   a[...,k,k], b[...,m,n] -> x   (left_side, lower, transpose_a,
                                                      unit_diagonal)
  geqrf_p              a[...,m,n] -> (a, tau[...,min(m,n)])
  householder_product_p  a[...,m,n], tau[...,k] -> q[...,m,n]
  eigh_p               a[...,n,n] -> (vectors, values[...,n] (real), info)   (lower,
                       compute_v; syevd, or heevd for complex a)
  svd_p                a[...,m,n] -> (s (real), u, vt, info)   (full_matrices, compute_uv;
                       gesdd: vt is V^H for complex a)
  eig_p                a[...,n,n] real -> (wr, wi, vl, vr, info), complex -> (w, vl, vr,
                       info); vl, vr complex (compute_left, compute_right; zeros if not)

Each: eager through the evaluator, abstract evaluation, lowering to its custom-call, a
batching rule (batch dims lead: leading_batch_rule). f32 and f64 (as the custom-calls), and
for lu, triangular_solve, eig, eigh, geqrf, householder_product (ungqr) and svd also c64
and c128 (transpose_a is the plain transpose).
Differentiation: triangular_solve and eigh have VJP rules here; the JVP rules of all and
the VJP rules of lu and svd are in xlapy/lax/lapack_ad.py (JAX's derivatives). geqrf and
householder_product have none: QR is differentiated as a whole (xlapy/numpy/_qr.py).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.batching.trace import leading_batch_rule
from xlapy.frontend.core import ShapedArray, primitive
from xlapy.frontend.eager import via_evaluator
from xlapy.hlo.shapes import Shape

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INEXACT = _FLOATS + (np.dtype(np.complex64), np.dtype(np.complex128))


def _check(name: str, a: ShapedArray, rank: int = 2, square: bool = False,
           types=_FLOATS):
    if np.dtype(a.dtype) not in types:
        names = " or ".join(np.dtype(t).name for t in types)
        raise ShapeError(f"{name}: expects {names} arrays (LAPACK), got {a}")
    if len(a.shape) < rank:
        raise ShapeError(f"{name}: expects arrays of rank >= {rank}, got {a}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: expects square matrices in the two minor dimensions, "
                         f"got {a}")


def _custom_call(ctx, routine: str, operands, avals, config: str = ""):
    """The custom-call of `routine` on operands, its results as a list (one per aval)."""
    t = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
         np.dtype(np.complex128): "z"}[np.dtype(operands[0].shape.dtype)]
    shapes = [Shape.array(np.dtype(a.dtype), a.shape) for a in avals]
    kw = {"backend_config": "{" + config + "}"} if config else {}
    shape = Shape.tuple(shapes) if len(shapes) > 1 else shapes[0]
    cc = ctx.b.custom_call(f"lapack_{t}{routine}_ffi", list(operands), shape,
                           api_version="API_VERSION_TYPED_FFI", **kw)
    if len(shapes) == 1:
        return cc
    return [ctx.b.get_tuple_element(cc, i) for i in range(len(shapes))]


def _chars(**kw) -> str:
    return ", ".join(f"{k} = {ord(v)} : ui8" for k, v in sorted(kw.items()))


def _define(name: str, aval, lower, multiple_results: bool = True):
    p = primitive(name, multiple_results=multiple_results)
    p.def_impl(via_evaluator(p))
    p.def_abstract_eval(aval)
    p.def_lowering(lower)
    p.def_batch(leading_batch_rule(p))
    return p


_I32 = np.dtype(np.int32)


# ---- lu (getrf) ------------------------------------------------------------------------------

def _lu_aval(a):
    _check("lu", a, types=_INEXACT)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [a, ShapedArray(batch + (min(m, n),), _I32), ShapedArray(batch, _I32)]


lu_p = _define("lu", _lu_aval, lambda ctx, a: _custom_call(ctx, "getrf", [a],
                                                           _lu_aval(_aval_of_instr(a))))


def _aval_of_instr(x) -> ShapedArray:
    return ShapedArray(tuple(x.shape.dims), x.shape.dtype)


# ---- triangular solve (trsm) -----------------------------------------------------------------

def _trsm_aval(a, b, left_side, lower, transpose_a, unit_diagonal):
    _check("triangular_solve", a, square=True, types=_INEXACT)
    _check("triangular_solve", b, types=_INEXACT)
    k = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != k or a.shape[:-2] != b.shape[:-2] or a.dtype != b.dtype:
        raise ShapeError(f"triangular_solve: a {a} does not fit b {b} "
                         f"(left_side={left_side}): a must be [..., {k}, {k}] of b's batch "
                         f"dims and type")
    return b


def _trsm_lower(ctx, a, b, left_side, lower, transpose_a, unit_diagonal):
    config = _chars(side="L" if left_side else "R", uplo="L" if lower else "U",
                    trans_x="T" if transpose_a else "N", diag="U" if unit_diagonal else "N")
    return _custom_call(ctx, "trsm", [a, b], [_aval_of_instr(b)], config)


triangular_solve_p = _define("triangular_solve", _trsm_aval, _trsm_lower,
                             multiple_results=False)


# ---- QR (geqrf, orgqr) -----------------------------------------------------------------------

def _geqrf_aval(a):
    _check("geqrf", a, types=_INEXACT)
    return [a, ShapedArray(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)]


geqrf_p = _define("geqrf", _geqrf_aval,
                  lambda ctx, a: _custom_call(ctx, "geqrf", [a], _geqrf_aval(_aval_of_instr(a))))


def _orgqr_aval(a, tau):
    _check("householder_product", a, types=_INEXACT)
    m, n = a.shape[-2:]
    if not (len(tau.shape) == len(a.shape) - 1 and tau.shape[:-1] == a.shape[:-2]
            and m >= n >= tau.shape[-1] and tau.dtype == a.dtype):
        raise ShapeError(f"householder_product: needs a[..., m, n] and tau[..., k] with "
                         f"m >= n >= k, got {a} and {tau}")
    return a


householder_product_p = _define(
    "householder_product", _orgqr_aval,
    lambda ctx, a, tau: _custom_call(
        ctx, "ungqr" if np.dtype(a.shape.dtype).kind == "c" else "orgqr", [a, tau],
        [_aval_of_instr(a)]),
    multiple_results=False)


# ---- eigh (syevd) ----------------------------------------------------------------------------

def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) in (np.float32, np.complex64) else np.float64)


def _eigh_aval(a, lower, compute_v):
    _check("eigh", a, square=True, types=_INEXACT)
    return [a, ShapedArray(a.shape[:-1], _real_of(a.dtype)), ShapedArray(a.shape[:-2], _I32)]


def _eigh_lower(ctx, a, lower, compute_v):
    routine = "heevd" if np.dtype(a.shape.dtype).kind == "c" else "syevd"
    return _custom_call(ctx, routine, [a], _eigh_aval(_aval_of_instr(a), lower, compute_v),
                        _chars(mode="V" if compute_v else "N", uplo="L" if lower else "U"))


eigh_p = _define("eigh", _eigh_aval, _eigh_lower)


# ---- svd (gesdd) -----------------------------------------------------------------------------

def _svd_aval(a, full_matrices, compute_uv):
    _check("svd", a, types=_INEXACT)
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    uc, vr = (m, n) if full_matrices or not compute_uv else (k, k)
    return [ShapedArray(batch + (k,), _real_of(a.dtype)), ShapedArray(batch + (m, uc), a.dtype),
            ShapedArray(batch + (vr, n), a.dtype), ShapedArray(batch, _I32)]


def _svd_lower(ctx, a, full_matrices, compute_uv):
    s, u, vt, info = _svd_aval(_aval_of_instr(a), full_matrices, compute_uv)
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    outs = _custom_call(ctx, "gesdd", [a], [_aval_of_instr(a), s, u, vt, info],
                        _chars(mode=mode))
    return outs[1:]


svd_p = _define("svd", _svd_aval, _svd_lower)


# ---- eig (geev) ------------------------------------------------------------------------------

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _eig_aval(a, compute_left, compute_right):
    _check("eig", a, square=True, types=_FLOATS + tuple(_COMPLEX.values()))
    dt = np.dtype(a.dtype)
    c = _COMPLEX.get(dt, dt)
    vecs = [ShapedArray(a.shape, c)] * 2
    info = ShapedArray(a.shape[:-2], _I32)
    if dt in _COMPLEX:
        return [ShapedArray(a.shape[:-1], dt)] * 2 + vecs + [info]
    return [ShapedArray(a.shape[:-1], c)] + vecs + [info]


def _eig_lower(ctx, a, compute_left, compute_right):
    return _custom_call(ctx, "geev", [a], _eig_aval(_aval_of_instr(a), compute_left,
                                                    compute_right),
                        _chars(compute_left="V" if compute_left else "N",
                               compute_right="V" if compute_right else "N"))


eig_p = _define("eig", _eig_aval, _eig_lower)


# ---- VJP rules (in xlapy's own operations; they run eagerly or traced, like any) ------------

def _mT(x):
    from xlapy.frontend.primitives import basic as B
    from xlapy.frontend.primitives.shapes import transpose
    r = len(B.aval_of(x).shape)
    return transpose(x, tuple(range(r - 2)) + (r - 1, r - 2))


def _mm(a, b):
    from xlapy.frontend.primitives import basic as B
    from xlapy.frontend.primitives.shapes import dot_general
    r = len(B.aval_of(a).shape)
    batch = tuple(range(r - 2))
    return dot_general(a, b, (((r - 1,), (r - 2,)), (batch, batch)))


@triangular_solve_p.def_vjp
def _trsm_vjp(ct, a, b, out, left_side, lower, transpose_a, unit_diagonal):
    """x = op(a)^-1 b (left) or b op(a)^-1 (right): ct_b solves with op(a)^T; ct_a is
    -op(ct_b x^T) (left) / -op(x^T ct_b) (right), kept to a's triangle."""
    from xlapy.frontend.primitives import basic as B
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    g = _mm(ct_b, _mT(out)) if left_side else _mm(_mT(out), ct_b)
    g = B.neg(_mT(g) if transpose_a else g)
    from xlapy.frontend.primitives.shapes import iota
    rows = iota(np.int32, B.aval_of(a).shape, len(B.aval_of(a).shape) - 2)
    cols = iota(np.int32, B.aval_of(a).shape, len(B.aval_of(a).shape) - 1)
    keep = B.ge(rows, cols) if lower else B.le(rows, cols)
    if unit_diagonal:
        keep = B.and_(keep, B.ne(rows, cols))
    return B.select(keep, g, B.zeros_like(g)), ct_b


@eigh_p.def_vjp
def _eigh_vjp(cts, a, out, lower, compute_v):
    """a = V diag(w) V^T: ct_a = V (diag(ct_w) + F o (V^T ct_V)) V^T with
    F_ij = 1 / (w_j - w_i) off the diagonal (JAX's rule; the input is taken symmetric).
    Real matrices: xlapy/lax/lapack_ad.py sends complex ones to the transpose of their
    tangent map."""
    from xlapy.frontend.primitives import basic as B
    v, w, _ = out
    ct_v, ct_w = cts[0], cts[1]
    shape = B.aval_of(v).shape
    r = len(shape)
    from xlapy.frontend.primitives.shapes import iota
    diag = B.eq(iota(np.int32, shape, r - 2), iota(np.int32, shape, r - 1))
    wi = B.broadcast_in_dim(w, shape, tuple(range(r - 2)) + (r - 2,))
    wj = B.broadcast_in_dim(w, shape, tuple(range(r - 2)) + (r - 1,))
    diff = B.sub(wj, wi)
    inv = B.select(diag, B.zeros_like(diff),
                   B.div(B.full_like(diff, 1), B.select(diag, B.full_like(diff, 1), diff)))
    inner = B.zeros_like(v)
    if ct_v is not None:
        inner = B.mul(inv, _mm(_mT(v), ct_v))
    if ct_w is not None:
        inner = B.add(inner, B.select(diag, B.broadcast_in_dim(ct_w, shape, tuple(
            range(r - 2)) + (r - 1,)), B.zeros_like(v)))
    return (_mm(v, _mm(inner, _mT(v))),)
