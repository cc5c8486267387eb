"""xlapy.lax control flow (fori_loop, while_loop, cond, switch, scan) against jax.lax.

The same test functions run on xlapy and on JAX (they take the `lax` and numpy modules as
arguments); values are compared eagerly, under jit on the cpu backend and under jit on the
interpreter; gradients are compared with jax.grad and with central finite differences (in
float64), including jit(grad), grad(jit), grad of grad, nested loops and closures over
outer jit arguments.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import XlapyError

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


MODES = ["eager", "cpu", "interpreter"]


def run(fn, mode, *args):
    if mode == "eager":
        return fn(*args)
    return xp.jit(fn, backend=mode)(*args)


def check(got, want, rtol=1e-5, atol=1e-5):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def both(fn):
    """(xlapy version, jax version) of fn(lax, np_module, *args)."""
    return (lambda *a: fn(lax, xnp, *a)), jax.jit(lambda *a: fn(jax.lax, jnp, *a))


def finite_diff(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
    return g


# ---- the programs ------------------------------------------------------------------------------

def fori_sum(lax, m, x):
    return lax.fori_loop(0, 10, lambda i, c: c + m.sin(x * i.astype(x.dtype)), m.zeros_like(x))


def newton_sqrt(lax, m, a):
    def cond(c):
        x, n = c
        return m.logical_and(m.max(m.abs(x * x - a)) > 1e-4, n < 100)

    def body(c):
        x, n = c
        return 0.5 * (x + a / x), n + 1
    return lax.while_loop(cond, body, (a, m.zeros((), m.int32)))


def cond_tree(lax, m, x, y):
    return lax.cond(m.sum(x) > 0,
                    lambda p: {"a": m.sin(p[0]) * 2.0, "b": p[1] @ p[0]},
                    lambda p: {"a": m.cos(p[0]), "b": -p[1].sum(axis=1)},
                    (x, y))


def switch3(lax, m, idx, x):
    return lax.switch(idx[0], [lambda v: v + 1.0, lambda v: m.exp(v), lambda v: -v * 3.0], x)


def cumsum_scan(lax, m, xs):
    return lax.scan(lambda c, x: (c + x, c * x), m.zeros(xs.shape[1:], xs.dtype), xs)


def rnn(lax, m, W, U, b, h0, xs, reverse=False):
    def step(h, x):
        h = m.tanh(W @ h + U @ x + b)
        return h, h.sum()
    return lax.scan(step, h0, xs, reverse=reverse)


def rnn_loss(lax, m, W, U, b, h0, xs):
    h, ys = rnn(lax, m, W, U, b, h0, xs)
    return (h * h).sum() + (ys * ys).mean()


def tanh_layers(lax, m, W, b, x):
    return (lax.fori_loop(0, 5, lambda i, h: m.tanh(W @ h + b), x) ** 2).sum()


# ---- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_fori_loop_sum(mode):
    x = rand(4)
    f, jf = both(fori_sum)
    check(run(f, mode, x), jf(x))


@pytest.mark.parametrize("mode", MODES)
def test_while_loop_newton_data_dependent_trip_count(mode):
    a = np.array([2.0, 10.0, 0.3], np.float32)
    f, jf = both(newton_sqrt)
    got = run(f, mode, a)
    check(got, jf(a))
    assert 3 < int(got[1]) < 100
    a2 = np.array([1.0, 1.0, 1.0], np.float32)  # converged at once: zero iterations
    check(run(f, mode, a2), jf(a2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_traced_predicate_pytree(mode, sign):
    x, y = np.abs(rand(3)) * sign, rand(2, 3)
    f, jf = both(cond_tree)
    check(run(f, mode, x, y), jf(x, y))


@pytest.mark.parametrize("mode", MODES)
def test_switch_clamps_out_of_range_index(mode):
    x = rand(5)
    f, jf = both(switch3)
    for i in (-5, 0, 1, 2, 9):
        idx = np.array([i], np.int32)
        check(run(f, mode, idx, x), jf(idx, x))


def test_cond_and_switch_concrete_index():
    assert float(lax.cond(True, lambda: 1.0, lambda: 2.0)) == 1.0
    assert float(lax.cond(0, lambda: 1.0, lambda: 2.0)) == 2.0
    assert float(lax.switch(7, [lambda: 1.0, lambda: 2.0])) == 2.0


@pytest.mark.parametrize("mode", MODES)
def test_scan_cumulative_sum(mode):
    xs = rand(6, 3)
    f, jf = both(cumsum_scan)
    check(run(f, mode, xs), jf(xs))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_rnn(mode, reverse):
    args = (rand(4, 4, scale=0.5), rand(4, 3), rand(4), rand(4), rand(7, 3))
    f = lambda *a: rnn(lax, xnp, *a, reverse=reverse)
    jf = jax.jit(lambda *a: rnn(jax.lax, jnp, *a, reverse=reverse))
    check(run(f, mode, *args), jf(*args))


def test_scan_pytrees_length_and_none():
    init = {"n": np.int32(0), "s": np.zeros(2, np.float32)}
    xs = (rand(5, 2), rand(5))
    body = lambda c, x: ({"n": c["n"] + 1, "s": c["s"] + x[0] * x[1]}, None)
    c, ys = lax.scan(body, init, xs)
    jc, _ = jax.lax.scan(body, init, xs)
    check(c, jc)
    assert ys is None
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), np.float32(1), None, length=4)
    check((c, ys), (np.float32(16), np.array([1, 2, 4, 8], np.float32)))
    c, ys = lax.scan(lambda c, x: (c + x, x), np.float32(1), np.zeros(0, np.float32))
    assert float(c) == 1.0 and ys.shape == (0,)
    for mode in ("cpu", "interpreter"):
        c, ys = run(lambda xs: lax.scan(lambda s, x: (s + x, x * 2.0), np.ones(2, np.float32), xs,
                                        reverse=True), mode, np.zeros((0, 2), np.float32))
        check((c, ys), (np.ones(2, np.float32), np.zeros((0, 2), np.float32)))
    assert float(xp.jit(lambda x: lax.fori_loop(3, 3, lambda i, c: c + 1.0, x))(
        np.float32(2))) == 2.0


@pytest.mark.parametrize("mode", ["cpu", "interpreter"])
def test_fori_loop_traced_bounds_is_a_while_loop(mode):
    f = lambda n, x: lax.fori_loop(0, n[0], lambda i, c: c * 2.0, x)
    check(run(f, mode, np.array([5], np.int32), rand(2)[:1] * 0 + 1.5),
          np.array([48.0], np.float32))
    assert "while" in xp.jit(f).lower(np.array([5], np.int32), np.ones(1, np.float32)).as_text()


def test_nested_scan_in_fori_loop_and_closure_over_jit_arguments():
    def f(lax, m, W, xs, h0):
        def outer(i, h):
            h, _ = lax.scan(lambda c, x: (m.tanh(W @ c + x), None), h, xs)
            return h * 0.5
        return lax.fori_loop(0, 3, outer, h0)
    args = (rand(3, 3, scale=0.4), rand(4, 3), rand(3))
    f_x, jf = both(f)
    for mode in MODES:
        check(run(f_x, mode, *args), jf(*args))
    text = xp.jit(f_x).lower(*args).as_text()
    assert text.count("while(") == 2


# ---- gradients --------------------------------------------------------------------------------

def test_grad_fori_loop_tanh_layers_vs_jax_and_finite_differences():
    W, b, x = rand(3, 3, scale=0.5), rand(3), rand(3)
    f = lambda W: tanh_layers(lax, xnp, W, b, x)
    want = jax.grad(lambda W: tanh_layers(jax.lax, jnp, W, b, x))(W)
    check(xp.grad(f)(W), want, rtol=1e-4)
    check(xp.jit(xp.grad(f))(W), want, rtol=1e-4)
    check(xp.grad(xp.jit(f))(W), want, rtol=1e-4)
    W64, b64, x64 = W.astype(np.float64), b.astype(np.float64), x.astype(np.float64)
    f64 = lambda W: tanh_layers(lax, xnp, W, b64, x64)
    with xp.enable_x64():  # finite differences need float64
        np.testing.assert_allclose(xp.grad(f64)(W64), finite_diff(f64, W64), rtol=1e-6,
                                   atol=1e-8)


def test_grad_scan_rnn_loss_all_arguments():
    args = (rand(4, 4, scale=0.5), rand(4, 3), rand(4), rand(4), rand(6, 3))
    argnums = (0, 1, 2, 3, 4)
    want = jax.grad(lambda *a: rnn_loss(jax.lax, jnp, *a), argnums)(*args)
    g = lambda *a: rnn_loss(lax, xnp, *a)
    check(xp.grad(g, argnums)(*args), want, rtol=1e-4)
    check(xp.jit(xp.grad(g, argnums))(*args), want, rtol=1e-4)
    check(xp.jit(xp.grad(g, argnums), backend="interpreter")(*args), want, rtol=1e-4)
    a64 = [a.astype(np.float64) for a in args]
    with xp.enable_x64():  # finite differences need float64
        fd = finite_diff(lambda W: rnn_loss(lax, xnp, W, *a64[1:]), a64[0])
        np.testing.assert_allclose(xp.grad(g)(*a64), fd, rtol=1e-6, atol=1e-8)


def test_grad_reverse_scan_and_captured_consts():
    W, xs, h0 = rand(3, 3, scale=0.5), rand(5, 3), rand(3)

    def loss(lax, m, W, xs, h0):  # W is captured by the body: a loop-invariant const
        h, ys = lax.scan(lambda c, x: (m.tanh(W @ c) * x, (c * x).sum()), h0, xs, reverse=True)
        return h.sum() + (ys ** 2).sum()
    want = jax.grad(lambda *a: loss(jax.lax, jnp, *a), (0, 1, 2))(W, xs, h0)
    g = xp.grad(lambda *a: loss(lax, xnp, *a), (0, 1, 2))
    check(g(W, xs, h0), want, rtol=1e-4)
    check(xp.jit(g)(W, xs, h0), want, rtol=1e-4)


def cond_loss(lax, m, x, y, s):
    out = lax.cond(s[0] > 0,
                   lambda p: {"a": m.sin(p[0]) * 2.0, "b": p[1] @ p[0]},
                   lambda p: {"a": m.cos(p[0]) * p[1][0], "b": -p[1].sum(axis=1)},
                   (x, y))
    return (out["a"] ** 2).sum() + out["b"].sum()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_grad_cond_both_branches(sign):
    x, y, s = rand(3), rand(2, 3), np.array([sign], np.float32)
    want = jax.grad(lambda *a: cond_loss(jax.lax, jnp, *a), (0, 1))(x, y, s)
    g = xp.grad(lambda *a: cond_loss(lax, xnp, *a), (0, 1))
    check(g(x, y, s), want, rtol=1e-4)
    check(xp.jit(g)(x, y, s), want, rtol=1e-4)
    check(xp.grad(xp.jit(lambda *a: cond_loss(lax, xnp, *a)), (0, 1))(x, y, s), want,
          rtol=1e-4)
    a64 = [v.astype(np.float64) for v in (x, y, s)]
    with xp.enable_x64():  # finite differences need float64
        fd = finite_diff(lambda v: cond_loss(lax, xnp, v, *a64[1:]), a64[0])
        np.testing.assert_allclose(xp.grad(lambda *a: cond_loss(lax, xnp, *a))(*a64), fd,
                                   rtol=1e-6, atol=1e-8)


def cond_cubic(lax, m, x, s):
    return lax.cond(s > 0, lambda v: v * v * v, lambda v: m.sin(v) * v, x)


@pytest.mark.parametrize("x0", [1.3, -0.7])
def test_grad_of_grad_cond(x0):
    x, s = np.float32(x0), np.float32(x0)
    want = jax.grad(jax.grad(lambda v: cond_cubic(jax.lax, jnp, v, s)))(x)
    gg = xp.grad(xp.grad(lambda v, s: cond_cubic(lax, xnp, v, s)))
    check(gg(x, s), want, rtol=1e-4)
    check(xp.jit(gg)(x, s), want, rtol=1e-4)


def test_grad_cond_predicate_computed_from_differentiated_value():
    x = np.float32(1.3)
    want = jax.grad(lambda v: cond_cubic(jax.lax, jnp, v, v))(x)
    check(xp.grad(lambda v: cond_cubic(lax, xnp, v, v))(x), want, rtol=1e-4)
    f = lambda v: lax.cond(v > 0, lambda u: u ** 3, xnp.sin, v)
    check(xp.grad(xp.grad(f))(x), np.float32(6 * 1.3), rtol=1e-4)


def test_grad_body_computes_on_captured_values_only():
    W, xs, h0 = rand(3, 3, scale=0.5), rand(4, 3), rand(3)

    def loss(lax, m, W, xs, h0):
        h, _ = lax.scan(lambda c, x: (m.tanh(W.T @ c + x * W[0]), None), h0, xs)
        return lax.cond(h.sum() > 0, lambda v: (v * W[1]).sum(), lambda v: v.sum(), h)
    want = jax.grad(lambda *a: loss(jax.lax, jnp, *a))(W, xs, h0)
    check(xp.grad(lambda *a: loss(lax, xnp, *a))(W, xs, h0), want, rtol=1e-4)
    # a captured scalar broadcast inside a branch inside a scan body, under eager grad
    w, ks = np.float32(0.7), np.arange(5, dtype=np.int32)
    want = jax.grad(lambda w: cond_in_scan(jax.lax, jnp, w, ks))(w)
    check(xp.grad(lambda w: cond_in_scan(lax, xnp, w, ks))(w), want, rtol=1e-4)


def cond_in_scan(lax, m, w, ks):
    def body(c, k):
        c = lax.cond(k % 2 == 0, lambda v: m.sin(v * w), lambda v: v * w, c)
        return c, c.sum()
    c, ys = lax.scan(body, m.ones(3, m.float32), ks)
    return c.sum() + ys.sum()


def test_cond_inside_scan_over_integers_jit_grad():
    w, ks = np.float32(0.7), np.arange(5, dtype=np.int32)
    check(cond_in_scan(lax, xnp, w, ks), cond_in_scan(jax.lax, jnp, w, ks), rtol=1e-5)
    want = jax.grad(lambda w: cond_in_scan(jax.lax, jnp, w, ks))(w)
    check(xp.jit(xp.grad(lambda w: cond_in_scan(lax, xnp, w, ks)))(w), want, rtol=1e-4)


def test_while_inside_scan_body():
    def h(lax, m, xs):
        def body(c, x):
            n = lax.while_loop(lambda v: v[0] < x, lambda v: (v[0] * 2.0, v[1] + 1),
                               (m.float32(1), m.int32(0)))[1]
            return c + n, n
        return lax.scan(body, m.int32(0), xs)
    xs = np.array([1.0, 5.0, 100.0], np.float32)
    f, jf = both(h)
    for mode in MODES:
        check(run(f, mode, xs), jf(xs))


def test_grad_of_grad_scan():
    def s(lax, m, x):
        c, ys = lax.scan(lambda c, xi: (m.sin(c * xi), c * c), x,
                         m.linspace(0.1, 1, 4).astype(m.float32))
        return c + ys.sum()
    x = np.float32(0.9)
    want = jax.grad(jax.grad(lambda v: s(jax.lax, jnp, v)))(x)
    gg = xp.grad(xp.grad(lambda v: s(lax, xnp, v)))
    check(gg(x), want, rtol=1e-4)
    check(xp.jit(gg)(x), want, rtol=1e-4)


def test_grad_of_grad_fori_loop():
    def f(lax, m, x):
        return lax.fori_loop(0, 3, lambda i, c: m.sin(c) * x, x)
    x = np.float32(0.8)
    want = jax.grad(jax.grad(lambda v: f(jax.lax, jnp, v)))(x)
    check(xp.grad(xp.grad(lambda v: f(lax, xnp, v)))(x), want, rtol=1e-4)


def test_grad_switch_and_integer_carry():
    def f(lax, m, x, idx):
        def body(c, xi):
            k, h = c
            h = lax.switch(k % 3, [m.sin, m.cos, lambda v: v * v], h * xi)
            return (k + 1, h), None
        (_, h), _ = lax.scan(body, (idx, x), m.linspace(0.5, 1.5, 4).astype(x.dtype))
        return h.sum()
    x, idx = rand(3), np.int32(1)
    want = jax.grad(lambda v: f(jax.lax, jnp, v, idx))(x)
    check(xp.grad(lambda v: f(lax, xnp, v, idx))(x), want, rtol=1e-4)


def test_grad_nested_scan_in_fori_loop_with_jit_closure():
    def f(lax, m, W, xs, h0):
        def outer(i, h):
            h, _ = lax.scan(lambda c, x: (m.tanh(W @ c + x), None), h, xs)
            return h * 0.9
        return (lax.fori_loop(0, 2, outer, h0) ** 2).sum()
    args = (rand(3, 3, scale=0.5), rand(4, 3), rand(3))
    want = jax.grad(lambda *a: f(jax.lax, jnp, *a), (0, 1, 2))(*args)
    g = xp.grad(lambda *a: f(lax, xnp, *a), (0, 1, 2))
    check(g(*args), want, rtol=1e-4)
    check(xp.jit(g)(*args), want, rtol=1e-4)


def test_while_loop_forward_inside_grad_is_fine_when_not_differentiated():
    def f(x):
        n = lax.while_loop(lambda k: k < 4, lambda k: k + 1, np.int32(0))
        return (x * n.astype(x.dtype)).sum()
    check(xp.grad(f)(rand(3)), np.full(3, 4.0, np.float32))


# ---- errors -------------------------------------------------------------------------------------

def test_error_carry_shape_change_names_leaf_and_avals():
    with pytest.raises(XlapyError, match=r"shape of carry\[1\].*f32\[3\].*f32\[4\]"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, xnp.zeros(4, np.float32)),
                       (np.int32(0), np.zeros(3, np.float32)))
    with xp.enable_x64(), \
            pytest.raises(XlapyError, match=r"dtype of carry\['h'\].*f32\[2\].*f64\[2\]"):
        lax.scan(lambda c, x: ({"h": c["h"] * x}, None), {"h": np.ones(2, np.float32)},
                 np.ones((3, 2), np.float64))
    with pytest.raises(XlapyError, match=r"dtype of carry\['h'\].*f32\[2\].*pred\[2\]"):
        lax.scan(lambda c, x: ({"h": c["h"] > x}, None), {"h": np.ones(2, np.float32)},
                 np.ones((3, 2), np.float32))
    with pytest.raises(XlapyError, match="same structure"):
        lax.fori_loop(0, 2, lambda i, c: (c, c), np.ones(2, np.float32))


def test_weak_python_scalar_carry_is_cast():
    out = lax.fori_loop(0, 3, lambda i, c: 2.0, np.float32(1))
    assert out.dtype == np.float32 and float(out) == 2.0


def test_error_while_loop_grad():
    f = lambda x: lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, x).sum()
    with pytest.raises(XlapyError, match="reverse-mode differentiation of while_loop is not "
                                         "supported.*fori_loop with static bounds or scan"):
        xp.grad(f)(np.ones(2, np.float32))


def test_error_messages_of_cond_switch_scan():
    with pytest.raises(XlapyError, match=r"output is f32\[2\] in false_fun but f32\[3\]"):
        lax.cond(True, lambda: np.ones(3, np.float32), lambda: np.ones(2, np.float32))
    with pytest.raises(XlapyError, match="same structure"):
        lax.switch(0, [lambda: (1.0, 2.0), lambda: 1.0])
    with pytest.raises(XlapyError, match="boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, np.ones(2, np.float32))
    with pytest.raises(XlapyError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(XlapyError, match="length must be given"):
        lax.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(XlapyError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(XlapyError, match="integer"):
        lax.switch(np.float32(1), [lambda: 1.0])
