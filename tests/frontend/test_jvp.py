"""Forward mode (xp.jvp, linearize, jacfwd, jacrev, hessian) against JAX.

The op table is the gradient suite's (test_gradients.CASES: one or more cases per
differentiable primitive, written once against a lax-like module L and a numpy-like module
N) plus EXTRA below (indexing, sorting, cumulative ops, dynamic slices, control flow). For
every case, with a fixed random tangent per input: xp.jvp against jax.jvp eagerly in
float32, under jit (on the cpu backend for the SMALL cases, the interpreter for the others),
jvp of a jitted function, and (elementwise and
small cases) in float16 and float64 (with x64 on in both libraries).

Then: a coverage test (every primitive has a JVP rule or a listed reason), the API's
semantics (float0 tangents of integers, has_aux, structure errors, linearize), Jacobians
and Hessians of pytree functions against JAX, and composition (jvp of jvp, jvp of grad,
grad of jvp, jit of jacfwd, forward mode through while_loop).
"""

from __future__ import annotations

import os
import sys
import types
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.core import PRIMITIVES
from xlapy.frontend.primitives import sorting as xsort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_gradients as TG

# xlapy.lax with the primitives layer's cumulative ops and sort (the signatures these
# cases call them with)
XL = types.SimpleNamespace(**{**{k: getattr(xlax, k) for k in dir(xlax) if not k.startswith("_")},
                              "cummax": xsort.cummax, "cummin": xsort.cummin,
                              "cumsum": xsort.cumsum, "cumprod": xsort.cumprod,
                              "sort": xsort.sort})

C = TG.Case
_IDX = np.array([3, 0, 2], np.int32)
_DUP = np.array([1, 3, 1, 0, 3], np.int32)

EXTRA = [
    # ---- indexing.py, dynamic_slice.py ----
    C("gather_take", lambda L, N, x: x[np.array([2, 0, 2, 1])] * x[np.array([[1], [0], [3], [3]]),
                                                                    np.array([2, 1, 0])],
      [((4, 3), "normal")]),
    C("scatter_set", lambda L, N, x, u: x.at[_IDX].set(u * u), [((5, 2), "normal"),
                                                                  ((3, 2), "normal")]),
    C("scatter_add_duplicates", lambda L, N, x, u: x.at[_DUP].add(u * 2),
      [((4, 3), "normal"), ((5, 3), "normal")]),
    C("scatter_mul", lambda L, N, x, u: x.at[_IDX].multiply(u, unique_indices=True),
      [((5,), "normal"), ((3,), "pos")]),
    C("scatter_min_max", lambda L, N, x, u: x.at[_IDX].min(u) + x.at[_IDX].max(u * 2),
      [((5,), "normal"), ((3,), "normal")]),
    C("dynamic_slice", lambda L, N, x: L.dynamic_slice(x, (1, 2), (2, 3)) * 2,
      [((4, 5), "normal")]),
    C("dynamic_update_slice", lambda L, N, x, u: L.dynamic_update_slice(x, u * u, (2, 1)),
      [((4, 5), "normal"), ((2, 3), "normal")]),
    # ---- sorting.py ----
    C("sort", lambda L, N, x: L.sort(x, dimension=1) * 2, [((3, 5), "normal")]),
    C("sort_two_operands", lambda L, N, x, y: L.sort((x, y), dimension=0, num_keys=1)[1],
      [((6,), "normal"), ((6,), "normal")]),
    C("cumsum_reverse", lambda L, N, x: L.cumsum(x, axis=1, reverse=True),
      [((3, 4), "normal")]),
    C("cumprod", lambda L, N, x: L.cumprod(x, axis=0), [((4, 3), "pos")]),
    C("cummax_cummin", lambda L, N, x: L.cummax(x, axis=1) + L.cummin(x, axis=1, reverse=True),
      [((3, 6), "normal")]),
    # ---- control.py ----
    C("cond_true", lambda L, N, x, y: L.cond(True, lambda a, b: N.sin(a) * b,
                                             lambda a, b: a - b, x, y),
      [((3,), "normal"), ((3,), "normal")]),
    C("cond_traced_predicate", lambda L, N, x, y: L.cond(N.sum(x) > 100.0,
                                                         lambda a, b: a * b,
                                                         lambda a, b: N.exp(a) + b, x, y),
      [((3,), "normal"), ((3,), "normal")]),
    C("switch", lambda L, N, x: L.switch(1, [lambda a: a, lambda a: a * a, N.sin], x),
      [((3,), "normal")]),
    C("scan_rnn", lambda L, N, w, xs: L.scan(lambda h, x: (N.tanh(h @ w + x),) * 2,
                                             N.zeros(3, w.dtype), xs)[1],
      [((3, 3), "normal"), ((4, 3), "normal")]),
    C("scan_reverse_closure", lambda L, N, w, xs: L.scan(
        lambda c, x: (c * w + x, c), N.ones(3, w.dtype), xs, reverse=True)[0],
      [((3,), "normal"), ((5, 3), "normal")]),
    C("fori_loop", lambda L, N, x: L.fori_loop(0, 3, lambda i, c: N.sin(c) * c + i, x),
      [((4,), "normal")]),
    C("while_loop", lambda L, N, x: L.while_loop(lambda c: c[0] < 3,
                                                 lambda c: (c[0] + 1, c[1] * N.cos(c[1])),
                                                 (0, x))[1],
      [((4,), "normal")]),
    C("while_const_tangent", lambda L, N, x, y: L.while_loop(
        lambda c: N.sum(c) < 50.0, lambda c: c * 1.5 + y, x),
      [((3,), "pos"), ((3,), "pos")]),
]

ALL_CASES = TG.CASES + EXTRA
# elementwise and small cases swept in float16 / float64 too
SMALL = {"neg", "abs", "exp", "log", "tanh", "sin_cos", "sqrt", "mul", "div", "pow",
         "max_min", "select", "reduce_sum", "reduce_max_min", "dot_general_matmul",
         "cumsum_reverse", "scan_rnn", "while_loop"}


def _inputs(case, dtype):
    rng = np.random.default_rng(zlib.crc32(("jvp/" + case.name).encode()))
    args = [TG._make(s, rng).astype(dtype) for s in case.inputs]
    tans = [rng.standard_normal(a.shape).astype(dtype) for a in args]
    return args, tans


def _tol(dtype):
    return {np.float16: 2e-2, np.float32: 1e-5, np.float64: 1e-12}[np.dtype(dtype).type]


def _compare(got, want, rtol, what):
    gl, wl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl), what
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}: shape {g.shape} vs JAX {w.shape}"
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} vs JAX {w.dtype}"
        TG._close(g, w, rtol, what)


def _xfn(case):
    return lambda *a: case.fn(XL, xnp, *a)


def _jfn(case):
    return lambda *a: case.fn(jax.lax, jnp, *a)


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_jvp_against_jax(case):
    args, tans = _inputs(case, np.float32)
    want = jax.jvp(_jfn(case), args, tans)
    rtol = max(case.rtol, 1e-5)
    _compare(xp.jvp(_xfn(case), args, tans), want, rtol, f"{case} eager")
    backend = "cpu" if case.name in SMALL else "interpreter"  # LLVM compiles cost time
    jitted = xp.jit(lambda a, t: xp.jvp(_xfn(case), a, t), backend=backend)
    _compare(jitted(args, tans), want, rtol, f"{case} jit(jvp) {backend}")
    _compare(xp.jvp(xp.jit(_xfn(case)), args, tans), want, rtol, f"{case} jvp(jit)")


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.name in SMALL], ids=str)
@pytest.mark.parametrize("dtype", [np.float16, np.float64], ids=["f16", "f64"])
def test_jvp_other_dtypes(case, dtype):
    args, tans = _inputs(case, dtype)
    with jax.enable_x64(dtype == np.float64), xp.enable_x64(dtype == np.float64):
        want = jax.jvp(_jfn(case), args, tans)
        got = xp.jit(lambda a, t: xp.jvp(_xfn(case), a, t), backend="interpreter")(args, tans)
        _compare(got, want, _tol(dtype), f"{case} {np.dtype(dtype).name}")


# ---- every primitive has a rule -----------------------------------------------------------------

# primitives whose results are integers or bools carry no tangent: no rule is needed (the
# JVP trace applies them to the primals)
NO_TANGENT = {
    "not": "bool/integer result", "is_finite": "bool result", "and": "bool/integer result",
    "or": "bool/integer result", "xor": "bool/integer result",
    "shift_left": "integer result", "shift_right_logical": "integer result",
    "shift_right_arithmetic": "integer result", "eq": "bool result", "ne": "bool result",
    "lt": "bool result", "le": "bool result", "gt": "bool result", "ge": "bool result",
    "reduce_and": "bool result", "reduce_or": "bool result", "argmax": "integer result",
    "argmin": "integer result", "iota": "no operands", "axis_index": "integer result",
    "population_count": "integer result", "clz": "integer result",
}
# primitives whose JVP rule is still to be written (the JVP trace names them in its error)
NOT_YET = {
    # QR is differentiated as a whole (xlapy/numpy/_qr.py, a custom_jvp with JAX's rule):
    # the packed Householder reflectors have no derivative of their own
    "geqrf": "differentiated through linalg.qr's custom_jvp",
    "householder_product": "differentiated through linalg.qr's custom_jvp",
}


def test_every_primitive_has_a_jvp_rule_or_a_reason():
    # every module that defines primitives, so that PRIMITIVES is complete
    import xlapy.frontend.jvp
    import xlapy.lax.lapack
    import xlapy.lax.linalg  # noqa: F401
    missing = sorted(n for n, p in PRIMITIVES.items()
                     if p.jvp is None and n not in NO_TANGENT and n not in NOT_YET
                     and not n.startswith("test_"))
    assert not missing, f"primitives without a JVP rule (add one in xlapy/frontend/jvp/ or " \
                        f"a reason to NO_TANGENT): {missing}"
    stale = sorted(n for n in {**NO_TANGENT, **NOT_YET}
                   if n in PRIMITIVES and PRIMITIVES[n].jvp is not None)
    assert not stale, f"listed as needing no rule but have one: {stale}"


def test_missing_rule_names_the_primitive():
    from xlapy.frontend.core import primitive
    p = PRIMITIVES.get("test_jvp_no_rule") or primitive("test_jvp_no_rule")
    p.def_impl(lambda x: np.asarray(x) * 2)
    p.def_abstract_eval(lambda a: a)
    with pytest.raises(XlapyError, match="jvp.*'test_jvp_no_rule' is not implemented"):
        xp.jvp(lambda x: p.bind(x), (np.float32(1.0),), (np.float32(1.0),))


# ---- the API ----------------------------------------------------------------------------------

def test_integer_inputs_take_float0_tangents():
    f0 = xp.dtypes.float0
    assert f0 == jax.dtypes.float0
    x, n = np.float32(2.0), np.int32(3)
    got = xp.jvp(lambda x, n: (x * n, n + 1), (x, n), (np.float32(1.0), np.zeros((), f0)))
    want = jax.jvp(lambda x, n: (x * n, n + 1), (x, n),
                   (np.float32(1.0), np.zeros((), jax.dtypes.float0)))
    assert float(got[0][0]) == float(want[0][0]) and float(got[1][0]) == float(want[1][0])
    assert int(got[0][1]) == 4 and got[1][1].dtype == f0 and got[1][1].shape == ()
    with pytest.raises(XlapyError, match="float0"):
        xp.jvp(lambda x, n: x * n, (x, n), (np.float32(1.0), np.int32(0)))


def test_jvp_argument_errors():
    with pytest.raises(XlapyError, match="tuples or lists"):
        xp.jvp(lambda x: x, np.float32(1.0), np.float32(1.0))
    with pytest.raises(XlapyError, match="same structure"):
        xp.jvp(lambda x: x, [np.float32(1.0)], ((np.float32(1.0),),))
    with pytest.raises(XlapyError, match=r"shape \[2\] but its tangent has shape \[3\]"):
        xp.jvp(lambda x: x, (np.ones(2, np.float32),), (np.ones(3, np.float32),))
    with pytest.raises(XlapyError, match="dtypes must be equal"):
        xp.jvp(lambda x: x, (np.ones(2, np.float32),), (np.ones(2, np.float16),))


def test_jvp_pytrees_and_has_aux():
    def f(p, x):
        y = xnp.tanh(x @ p["w"] + p["b"])
        return {"y": y, "s": (y.sum(),)}, {"n": x.shape[0], "mean": y.mean()}

    def jf(p, x):
        y = jnp.tanh(x @ p["w"] + p["b"])
        return {"y": y, "s": (y.sum(),)}, {"n": x.shape[0], "mean": y.mean()}

    rng = np.random.default_rng(0)
    p = {"w": rng.standard_normal((3, 2)).astype(np.float32),
         "b": rng.standard_normal(2).astype(np.float32)}
    x = rng.standard_normal((4, 3)).astype(np.float32)
    tp = jax.tree_util.tree_map(lambda a: np.ones_like(a), p)
    tx = np.full_like(x, 0.5)
    out, tan, aux = xp.jvp(f, (p, x), (tp, tx), has_aux=True)
    jout, jtan, jaux = jax.jvp(jf, (p, x), (tp, tx), has_aux=True)
    _compare((out, tan), (jout, jtan), 1e-5, "pytree jvp")
    assert aux["n"] == 4 and np.allclose(aux["mean"], jaux["mean"], rtol=1e-5)


def test_linearize_matches_jvp():
    f = lambda x: xnp.sin(x) * x ** 2
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    y, f_jvp = xp.linearize(f, x)
    jy, jf_jvp = jax.linearize(lambda x: jnp.sin(x) * x ** 2, x)
    for t in (np.ones(5, np.float32), np.arange(5, dtype=np.float32)):
        _compare(f_jvp(t), jf_jvp(t), 1e-5, "linearize")
    _compare(y, jy, 1e-6, "linearize primal")


# ---- Jacobians and Hessians ----------------------------------------------------------------------

def _jac_fns(N):
    def f(x, y):
        return {"a": N.sin(x) * y[0], "b": (N.tanh(x[:2] * y[1:]).sum(), x @ x)}
    return f


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
@pytest.mark.parametrize("which", ["jacfwd", "jacrev"])
def test_jacobians_against_jax(which, argnums):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    got = getattr(xp, which)(_jac_fns(xnp), argnums=argnums)(x, y)
    want = getattr(jax, which)(_jac_fns(jnp), argnums=argnums)(x, y)
    assert jax.tree_util.tree_structure(want) == \
        jax.tree_util.tree_structure(jax.tree_util.tree_map(np.asarray, got))
    _compare(got, want, 1e-5, which)
    jitted = xp.jit(getattr(xp, which)(_jac_fns(xnp), argnums=argnums))(x, y)
    _compare(jitted, want, 1e-5, f"jit({which})")


def test_jacobian_has_aux_and_matrix_input():
    w = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    for which in ("jacfwd", "jacrev"):
        got, aux = getattr(xp, which)(lambda w: (xnp.tanh(w) @ np.ones(3, np.float32), w.sum()),
                                      has_aux=True)(w)
        want, jaux = getattr(jax, which)(lambda w: (jnp.tanh(w) @ np.ones(3, np.float32),
                                                    w.sum()), has_aux=True)(w)
        assert got.shape == (2, 2, 3)
        _compare(got, want, 1e-5, which)
        np.testing.assert_allclose(aux, jaux, rtol=1e-6)


def test_jacfwd_of_an_integer_output_is_zeros_of_its_dtype():
    f = lambda N: (lambda x: (x * 2, x.astype(np.int32)))
    got = xp.jacfwd(f(xnp))(np.ones(2, np.float32))
    want = jax.jacfwd(f(jnp))(np.ones(2, np.float32))
    _compare(got, want, 1e-6, "jacfwd with an integer output")


def test_jacobian_errors():
    with pytest.raises(XlapyError, match="jacfwd requires real-valued inputs"):
        xp.jacfwd(lambda x: x * 2)(np.ones(2, np.int32))
    with pytest.raises(XlapyError, match="jacrev requires real-valued outputs"):
        xp.jacrev(lambda x: (x * 2).astype(np.int32))(np.ones(2, np.float32))
    with pytest.raises(XlapyError, match="holomorphic"):
        xp.jacfwd(lambda x: x, holomorphic=True)(np.ones(2, np.float32))


@pytest.mark.parametrize("name", ["cubic", "mlp", "softmax_xent"])
def test_hessian_against_jax(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(4).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)

    def make(N):
        if name == "cubic":
            return lambda x: (x ** 3 * N.sin(x)).sum()
        if name == "mlp":
            return lambda x: N.tanh(x @ w).sum() ** 2
        return lambda x: -N.log(N.exp(x[:3] - x[3]) / N.exp(x[:3] - x[3]).sum())[1]
    got = xp.hessian(make(xnp))(x)
    want = jax.hessian(make(jnp))(x)
    _compare(got, want, 1e-4, f"hessian {name}")
    _compare(xp.jit(xp.hessian(make(xnp)))(x), want, 1e-4, f"jit(hessian) {name}")


# ---- composition ---------------------------------------------------------------------------------

def test_nested_jvp_and_mixed_modes():
    x = np.float32(0.7)
    f, jf = (lambda x: xnp.sin(x) * xnp.exp(x)), (lambda x: jnp.sin(x) * jnp.exp(x))
    d2 = lambda g, J: (lambda x: J.jvp(lambda y: J.jvp(g, (y,), (np.float32(1.0),))[1],
                                       (x,), (np.float32(1.0),))[1])
    np.testing.assert_allclose(d2(f, xp)(x), d2(jf, jax)(x), rtol=1e-5)
    # jvp of grad and grad of jvp
    jvp_grad = xp.jvp(xp.grad(f), (x,), (np.float32(1.0),))[1]
    grad_jvp = xp.grad(lambda x: xp.jvp(f, (x,), (np.float32(1.0),))[1])(x)
    want = jax.jvp(jax.grad(jf), (x,), (np.float32(1.0),))[1]
    np.testing.assert_allclose(jvp_grad, want, rtol=1e-5)
    np.testing.assert_allclose(grad_jvp, want, rtol=1e-5)
    # perturbations of two jvps stay apart (the inner one closes over the outer's x)
    got = xp.jvp(lambda x: xp.jvp(lambda y: x * y, (np.float32(2.0),), (np.float32(1.0),))[1],
                 (np.float32(3.0),), (np.float32(1.0),))
    assert float(got[0]) == 3.0 and float(got[1]) == 1.0


def test_python_control_flow_on_concrete_jvp_values():
    def f(x):
        if x > 0:
            return x * 2
        return x ** 3
    for x0 in (1.5, -2.0):
        got = xp.jvp(f, (np.float32(x0),), (np.float32(1.0),))
        want = jax.jvp(f, (np.float32(x0),), (np.float32(1.0),))
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_forward_mode_through_while_loop_where_reverse_mode_refuses():
    def newton(a):  # sqrt(a) by Newton's method: a data-dependent trip count
        def body(c):
            x, i = c
            return (0.5 * (x + a / x), i + 1)
        return xlax.while_loop(lambda c: c[1] < 20, body, (a, 0))[0]

    a = np.float32(2.0)
    val, tan = xp.jvp(newton, (a,), (np.float32(1.0),))
    np.testing.assert_allclose(val, np.sqrt(2.0), rtol=1e-6)
    np.testing.assert_allclose(tan, 0.5 / np.sqrt(2.0), rtol=1e-5)
    np.testing.assert_allclose(xp.jacfwd(newton)(a), 0.5 / np.sqrt(2.0), rtol=1e-5)
    with pytest.raises(XlapyError, match="while_loop is not supported"):
        xp.grad(newton)(a)


# ---- with vmap -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["psum", "all_gather"])
def test_jvp_of_collectives_inside_vmap(name):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    t = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)

    def make(lib, L):
        f = getattr(L, name)
        return lib.vmap(lambda v, w: lib.jvp(lambda u: f(u * u, "i"), (v,), (w,)), axis_name="i")
    _compare(make(xp, xlax)(x, t), make(jax, jax.lax)(x, t), 1e-6, name)


def test_jvp_of_pmax_shares_ties_like_reduce_max():
    # JAX has no rule for pmax; xlapy's is reduce_max's (the mean over the maximal members)
    x = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 0.0]], np.float32)
    t = np.array([[10.0, 1.0], [2.0, 3.0], [4.0, 7.0]], np.float32)
    out, tan = xp.vmap(lambda v, w: xp.jvp(lambda u: xlax.pmax(u, "i"), (v,), (w,)),
                       axis_name="i")(x, t)
    np.testing.assert_array_equal(out, np.broadcast_to([3.0, 5.0], (3, 2)))
    np.testing.assert_allclose(tan, np.broadcast_to([3.0, 2.0], (3, 2)))
    _, tmin = xp.vmap(lambda v, w: xp.jvp(lambda u: xlax.pmin(u, "i"), (v,), (w,)),
                      axis_name="i")(x, t)
    np.testing.assert_allclose(tmin, np.broadcast_to([10.0, 7.0], (3, 2)))


def test_vmap_of_jvp_and_jacobians_match_jax():
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    f, jf = (lambda v: xnp.sin(v) * v.sum()), (lambda v: jnp.sin(v) * v.sum())
    _compare(xp.vmap(lambda v: xp.jvp(f, (v,), (xnp.ones_like(v),)))(x),
             jax.vmap(lambda v: jax.jvp(jf, (v,), (jnp.ones_like(v),)))(x), 1e-5, "vmap(jvp)")
    _compare(xp.vmap(xp.jacfwd(f))(x), jax.vmap(jax.jacfwd(jf))(x), 1e-5, "vmap(jacfwd)")
    _compare(xp.jvp(xp.vmap(f), (x,), (x,)), jax.jvp(jax.vmap(jf), (x,), (x,)), 1e-5,
             "jvp(vmap)")


def test_primitive_without_a_rule_yet_is_named():
    from xlapy.lax import lapack
    a = np.eye(2, dtype=np.float32) * 4
    with pytest.raises(XlapyError, match="'geqrf' is not implemented"):
        xp.jvp(lambda m: lapack.geqrf_p.bind(m)[0], (a,), (a,))
