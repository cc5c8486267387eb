"""custom_jvp, custom_vjp and checkpoint against JAX: the same values under grad, jvp,
jit(grad), grad(jit), grad of grad and inside control flow; JAX's errors; and checkpoint's
recomputation (counted primitive evaluations, the optimization barrier under jit, the
policies)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S

X = np.array([-30.0, -1.5, 0.0, 0.7, 40.0], np.float32)


def _close(a, b, rtol=1e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-6)


# ---- custom_jvp -------------------------------------------------------------------------------

def _softplus(lib, N):
    @lib.custom_jvp
    def softplus(x):
        return N.log1p(N.exp(-N.abs(x))) + N.maximum(x, 0.0)

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * (1 / (1 + N.exp(-x)))
    return softplus


def test_custom_jvp_every_transformation_matches_jax():
    f, jf = _softplus(xp, xnp), _softplus(jax, jnp)
    loss, jloss = (lambda x: f(x).sum() * 2), (lambda x: jf(x).sum() * 2)
    want = jax.grad(jloss)(X)
    _close(xp.grad(loss)(X), want)
    _close(xp.jit(xp.grad(loss))(X), want)
    _close(xp.grad(xp.jit(loss))(X), want)
    t = np.linspace(-1, 1, 5, dtype=np.float32)
    _close(xp.jvp(f, (X,), (t,)), jax.jvp(jf, (X,), (t,)))
    _close(xp.jit(lambda x, t: xp.jvp(f, (x,), (t,)))(X, t), jax.jvp(jf, (X,), (t,)))
    # second order: grad of grad and the Hessian go through the rule's derivative
    g2 = lambda lib, ff: lib.grad(lambda x: lib.grad(lambda y: ff(y).sum())(x).sum())
    _close(g2(xp, f)(X), g2(jax, jf)(X))
    _close(xp.hessian(lambda x: f(x).sum())(X[1:4]), jax.hessian(lambda x: jf(x).sum())(X[1:4]))
    # the eager value is the function's own
    _close(f(X), jf(X))


def test_custom_jvp_rule_is_what_is_differentiated():
    # a rule that disagrees with the function: every mode must use the rule
    @xp.custom_jvp
    def f(x, y):
        return xnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: 10.0 * t, lambda t, ans, x, y: -1.0 * t)

    @jax.custom_jvp
    def jf(x, y):
        return jnp.sin(x) * y

    jf.defjvps(lambda t, ans, x, y: 10.0 * t, lambda t, ans, x, y: -1.0 * t)
    x, y = np.float32(0.3), np.float32(2.0)
    _close(xp.grad(f, (0, 1))(x, y), jax.grad(jf, (0, 1))(x, y))
    _close(xp.jvp(f, (x, y), (np.float32(1.0), np.float32(3.0))),
           jax.jvp(jf, (x, y), (np.float32(1.0), np.float32(3.0))))
    _close(xp.jit(xp.grad(f, (0, 1)))(x, y), jax.grad(jf, (0, 1))(x, y))


def test_custom_jvp_nondiff_argnums_pytrees_and_integer_tangents():
    seen = {}

    def build(lib):
        def apply(fn, p, n):  # fn is static (nondiff_argnums), n an integer
            return {"y": fn(p["a"]) * n, "s": p["b"].sum()}
        f = lib.custom_jvp(apply, nondiff_argnums=(0,))

        @f.defjvp
        def _(fn, primals, tangents):
            p, n = primals
            tp, tn = tangents
            seen[lib.__name__] = np.asarray(tn).dtype
            return f(fn, p, n), {"y": 3.0 * tp["a"] * n, "s": tp["b"].sum()}
        return f

    fx, fj = build(xp), build(jax)
    p = {"a": np.arange(3, dtype=np.float32), "b": np.ones(2, np.float32)}
    tp = {"a": np.ones(3, np.float32), "b": np.full(2, 2.0, np.float32)}
    n = np.int32(4)
    got = xp.jvp(lambda p: fx(xnp.sin, p, n), (p,), (tp,))
    want = jax.jvp(lambda p: fj(jnp.sin, p, n), (p,), (tp,))
    _close(got, want)
    assert seen["xlapy"] == xp.dtypes.float0 and seen["jax"] == jax.dtypes.float0
    _close(xp.grad(lambda p: fx(xnp.sin, p, n)["y"].sum())(p),
           jax.grad(lambda p: fj(jnp.sin, p, n)["y"].sum())(p))


def test_custom_jvp_inside_scan_keeps_its_rule_under_grad():
    def run(lib, L, N):
        f = _softplus(lib, N)

        def loss(w):
            def body(c, x):
                c = f(c * w + x)
                return c, c
            return L.scan(body, N.zeros(2, np.float32), np.ones((4, 2), np.float32))[1].sum()
        return loss
    w = np.float32(0.8)
    want = jax.grad(run(jax, jax.lax, jnp))(w)
    _close(xp.grad(run(xp, xlax, xnp))(w), want)
    _close(xp.jit(xp.grad(run(xp, xlax, xnp)))(w), want)


def test_custom_jvp_errors():
    @xp.custom_jvp
    def nodef(x):
        return x
    with pytest.raises(XlapyError, match="no JVP defined"):
        nodef(np.float32(1.0))

    @xp.custom_jvp
    def bad_pair(x):
        return x * 2
    bad_pair.defjvp(lambda p, t: (p[0] * 2, (t[0],)))
    with pytest.raises(XlapyError, match="equal structures"):
        xp.jvp(bad_pair, (np.float32(1.0),), (np.float32(1.0),))

    @xp.custom_jvp
    def bad_shape(x):
        return x * 2
    bad_shape.defjvp(lambda p, t: (p[0] * 2, xnp.ones(3, np.float32)))
    with pytest.raises(XlapyError, match=r"tangent f32\[3\] where .* output is f32\[2\]"):
        xp.jvp(bad_shape, (np.ones(2, np.float32),), (np.ones(2, np.float32),))

    def outer(y):
        @xp.custom_jvp
        def g(x):
            return x * y
        g.defjvp(lambda p, t: (g(*p), t[0]))
        return g(np.float32(2.0))
    with pytest.raises(XlapyError, match="closes over a value that is being differentiated"):
        xp.grad(outer)(np.float32(3.0))


# ---- custom_vjp -------------------------------------------------------------------------------

def _clip_gradient(lib):
    # JAX's documentation example: identity forward, clipped cotangent backward
    @lib.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, (lo, hi)

    def bwd(res, g):
        lo, hi = res
        return (None, None, (lib.numpy.clip if lib is jax else xnp.clip)(g, lo, hi))
    clip_gradient.defvjp(fwd, bwd)
    return clip_gradient


def test_custom_vjp_clip_gradient_matches_jax():
    cx, cj = _clip_gradient(xp), _clip_gradient(jax)
    f = lambda c, N: (lambda x: (c(-0.5, 0.5, x) ** 3).sum())
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    want = jax.grad(f(cj, jnp))(x)
    for got in (xp.grad(f(cx, xnp))(x), xp.jit(xp.grad(f(cx, xnp)))(x),
                xp.grad(xp.jit(f(cx, xnp)))(x)):
        _close(got, want)
    _close(cx(-0.5, 0.5, x), x)


def _sin_with_residuals(lib, N, calls):
    @lib.custom_vjp
    def f(x, y):
        return N.sin(x) * y

    def fwd(x, y):
        calls.append("fwd")
        return f(x, y), (N.cos(x), N.sin(x), y)

    def bwd(res, g):
        calls.append("bwd")
        cos_x, sin_x, y = res
        return (g * cos_x * y * 2.0, g * sin_x)  # twice the true x-derivative
    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_residuals_and_second_order():
    calls = []
    f, jf = _sin_with_residuals(xp, xnp, calls), _sin_with_residuals(jax, jnp, [])
    x, y = np.float32(0.4), np.float32(1.5)
    _close(xp.grad(f, (0, 1))(x, y), jax.grad(jf, (0, 1))(x, y))
    assert calls == ["fwd", "bwd"]
    # bwd is differentiated for second order, as in JAX
    g2x = lambda lib, ff: lib.grad(lambda x: lib.grad(ff)(x, y))
    _close(g2x(xp, f)(x), g2x(jax, jf)(x))
    _close(xp.jit(xp.grad(f, (0, 1)))(x, y), jax.grad(jf, (0, 1))(x, y))
    # outside differentiation the primal function runs, not fwd
    calls.clear()
    _close(f(x, y), jf(x, y))
    _close(xp.jit(f)(x, y), jf(x, y))
    assert calls == []


def test_custom_vjp_pytrees_kwargs_and_integer_arguments():
    def make(lib, N):
        @lib.custom_vjp
        def f(p, n, scale=1.0):
            return {"out": p["w"] * n * scale}

        def fwd(p, n, scale=1.0):
            return f(p, n, scale), (p["w"], n)

        def bwd(res, g):
            w, n = res
            return ({"w": g["out"] * 5.0, "unused": None}, None, (g["out"] * w).sum())
        f.defvjp(fwd, bwd)
        return f
    fx, fj = make(xp, xnp), make(jax, jnp)
    p = {"w": np.arange(3, dtype=np.float32), "unused": np.ones(2, np.float32)}
    loss = lambda f: (lambda p, s: f(p, np.int32(2), scale=s)["out"].sum())
    got = xp.grad(loss(fx), (0, 1))(p, np.float32(3.0))
    want = jax.grad(loss(fj), (0, 1))(p, np.float32(3.0))
    _close(got, want)
    assert np.all(np.asarray(got[0]["unused"]) == 0)


def test_custom_vjp_inside_fori_loop_keeps_its_rule():
    def run(lib, L, N):
        c = _clip_gradient(lib)
        return lambda x: L.fori_loop(0, 3, lambda i, v: c(-0.1, 0.1, v) * 2.0, x).sum()
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    want = jax.grad(run(jax, jax.lax, jnp))(x)
    _close(xp.grad(run(xp, xlax, xnp))(x), want)
    _close(xp.jit(xp.grad(run(xp, xlax, xnp)))(x), want)


def test_custom_vjp_errors():
    cx = _clip_gradient(xp)
    with pytest.raises(XlapyError, match="can't apply forward-mode"):
        xp.jvp(lambda x: cx(-1.0, 1.0, x), (np.float32(1.0),), (np.float32(1.0),))

    @xp.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))
    with pytest.raises(XlapyError, match="one cotangent per argument"):
        xp.grad(f)(np.float32(1.0), np.float32(2.0))

    @xp.custom_vjp
    def h(x):
        return x
    h.defvjp(lambda x: (x[:1], None), lambda r, g: (g,))
    with pytest.raises(XlapyError, match="fwd rule of h returned"):
        xp.grad(lambda x: h(x).sum())(np.ones(2, np.float32))

    @xp.custom_vjp
    def nodef(x):
        return x
    with pytest.raises(XlapyError, match="no VJP defined"):
        nodef(np.float32(1.0))

    def outer(y):
        @xp.custom_vjp
        def g(x):
            return x * y
        g.defvjp(lambda x: (x * y, x), lambda r, ct: (ct * 100.0,))
        return g(np.float32(2.0))
    with pytest.raises(XlapyError, match="closes over a value that is being differentiated"):
        xp.grad(outer)(np.float32(3.0))


# ---- checkpoint -------------------------------------------------------------------------------

def _mlp(N, w1, w2):
    return lambda x: N.tanh(N.sin(x @ w1) @ w2).sum()


RNG = np.random.default_rng(0)
W1 = RNG.standard_normal((4, 5)).astype(np.float32)
W2 = RNG.standard_normal((5, 3)).astype(np.float32)
XS = RNG.standard_normal((2, 4)).astype(np.float32)


@pytest.fixture
def count(monkeypatch):
    """Counts eager evaluations of sin and dot_general."""
    counts = {"sin": 0, "dot_general": 0}
    for p in (B.sin_p, S.dot_general_p):
        impl = p.impl

        def counting(*a, _impl=impl, _n=p.name, **k):
            counts[_n] += 1
            return _impl(*a, **k)
        monkeypatch.setattr(p, "impl", counting)
    return counts


@pytest.mark.parametrize("policy", [None, "dots_saveable", "everything_saveable"])
def test_checkpoint_gradients_and_recomputation(count, policy):
    pol = getattr(xp.checkpoint_policies, policy) if policy else None
    f = xp.checkpoint(_mlp(xnp, W1, W2), policy=pol)
    jpol = getattr(jax.checkpoint_policies, policy) if policy else None
    want = jax.grad(jax.checkpoint(_mlp(jnp, W1, W2), policy=jpol))(XS)
    _close(xp.grad(_mlp(xnp, W1, W2))(XS), want)
    plain = dict(count)
    count.update(sin=0, dot_general=0)
    _close(xp.grad(f)(XS), want)
    # plain: each forward op once; the backward pass has 2 dots per matmul (a dot's VJP
    # computes both operands' cotangents) and a cos, no sin
    assert plain == {"sin": 1, "dot_general": 6}
    if policy is None:        # everything recomputed: sin and both dots again
        assert count == {"sin": 2, "dot_general": 8}
    elif policy == "dots_saveable":   # the dots are kept, sin is recomputed
        assert count == {"sin": 2, "dot_general": 6}
    else:                     # nothing recomputed
        assert count == plain
    _close(xp.jit(xp.grad(f))(XS), want)


def test_checkpoint_under_jit_reads_through_an_optimization_barrier():
    f = lambda x: xnp.sin(xnp.sin(x))
    text = xp.jit(xp.grad(xp.checkpoint(f))).lower(np.float32(1.0)).as_text()
    assert text.count(" sine(") == 4 and "opt-barrier" in text
    text = xp.jit(xp.grad(xp.checkpoint(f, prevent_cse=False))).lower(np.float32(1.0)).as_text()
    assert "opt-barrier" not in text
    text = xp.jit(xp.grad(f)).lower(np.float32(1.0)).as_text()
    assert text.count(" sine(") == 2
    _close(xp.jit(xp.grad(xp.checkpoint(f)))(np.float32(1.0)),
           jax.grad(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))))(np.float32(1.0)))


def test_checkpoint_static_argnums_closures_jvp_and_scan():
    def f(x, n, w):
        for _ in range(n):
            x = xnp.sin(x * w)
        return x.sum()

    def jf(x, n, w):
        for _ in range(n):
            x = jnp.sin(x * w)
        return x.sum()
    w = np.float32(1.3)
    x = np.linspace(0, 1, 3, dtype=np.float32)
    cf = xp.checkpoint(f, static_argnums=(1,))
    want = jax.grad(jax.checkpoint(jf, static_argnums=(1,)), (0, 2))(x, 3, w)
    _close(xp.grad(cf, (0, 2))(x, 3, w), want)
    _close(xp.jit(xp.grad(cf, (0, 2)), static_argnums=1)(x, 3, w), want)
    _close(xp.jvp(lambda x: cf(x, 2, w), (x,), (np.ones(3, np.float32),)),
           jax.jvp(lambda x: jf(x, 2, w), (x,), (np.ones(3, np.float32),)))
    _close(xp.hessian(lambda x: cf(x, 2, w))(x), jax.hessian(lambda x: jf(x, 2, w))(x),
           rtol=1e-4)

    def scan_loss(lib, L, N, w):
        step = lib.checkpoint(lambda c, x: (N.tanh(c * w + x), c))
        return L.scan(step, N.zeros(3, np.float32), np.ones((4, 3), np.float32))[0].sum()
    _close(xp.grad(lambda w: scan_loss(xp, xlax, xnp, w))(w),
           jax.grad(lambda w: scan_loss(jax, jax.lax, jnp, w))(w))


def test_optimization_barrier_matches_jax():
    tree = (np.arange(3, dtype=np.float32), {"a": np.float32(2.0)})
    f = lambda lib: (lambda t: lib.lax.optimization_barrier(t)[1]["a"] * t[0])
    _close(xp.jit(f(xp))(tree), jax.jit(f(jax))(tree))
    _close(f(xp)(tree), f(jax)(tree))
    _close(xp.grad(lambda t: f(xp)(t).sum())(tree), jax.grad(lambda t: f(jax)(t).sum())(tree))
    assert "opt-barrier" in xp.jit(f(xp)).lower(tree).as_text()


def test_checkpoint_policy_errors_and_remat_alias():
    assert xp.remat is xp.checkpoint
    with pytest.raises(XlapyError, match="policy must be a function"):
        xp.checkpoint(lambda x: x, policy="dots")
    with pytest.raises(AttributeError):
        xp.checkpoint_policies.save_only_these_names  # noqa: B018 (not in the subset)


# ---- with vmap -----------------------------------------------------------------------------------

def _vmap_functions(lib, N):
    @lib.custom_vjp
    def f(x, y):
        return N.sin(x) * y
    f.defvjp(lambda x, y: (f(x, y), (N.cos(x), y, N.sin(x))),
             lambda r, g: (2 * g * r[0] * r[1], (g * r[2]).sum()))

    @lib.custom_jvp
    def h(x):
        return N.tanh(x)
    h.defjvps(lambda t, ans, x: 3.0 * t)
    c = lib.checkpoint(lambda x: N.sin(N.sin(x)))
    return f, h, c


VMAP_CASES = {
    "vmap(grad(custom_vjp))": lambda lib, f, h, c, x, y: lib.vmap(
        lib.grad(lambda r: f(r, y).sum()))(x),
    "grad(vmap(custom_vjp)) x and shared y": lambda lib, f, h, c, x, y: lib.grad(
        lambda x, y: lib.vmap(lambda r: f(r, y))(x).sum(), (0, 1))(x, y),
    "vmap(custom_vjp)": lambda lib, f, h, c, x, y: lib.vmap(lambda r: f(r, y))(x),
    "vmap(jvp(custom_jvp))": lambda lib, f, h, c, x, y: lib.vmap(
        lambda r: lib.jvp(h, (r,), (r,))[1])(x),
    "jvp(vmap(custom_jvp))": lambda lib, f, h, c, x, y: lib.jvp(lib.vmap(h), (x,), (x,))[1],
    "grad(vmap(custom_jvp))": lambda lib, f, h, c, x, y: lib.grad(
        lambda x: lib.vmap(h)(x).sum())(x),
    "grad(vmap(checkpoint))": lambda lib, f, h, c, x, y: lib.grad(
        lambda x: lib.vmap(c)(x).sum())(x),
    "jit(grad(vmap(checkpoint)))": lambda lib, f, h, c, x, y: lib.jit(lib.grad(
        lambda x: lib.vmap(c)(x).sum()))(x),
    "vmap(grad(checkpoint))": lambda lib, f, h, c, x, y: lib.vmap(
        lib.grad(lambda r: c(r).sum()))(x),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_with_vmap_matches_jax(name):
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    y = np.float32(2.0)
    got = VMAP_CASES[name](xp, *_vmap_functions(xp, xnp), x, y)
    want = VMAP_CASES[name](jax, *_vmap_functions(jax, jnp), x, y)
    _close(got, want)
