"""xp.vmap's API against jax.vmap: in_axes / out_axes (pytree prefixes, None, negative
axes), keyword arguments, axis_size, nesting, composition with jit and grad, errors, and
the collectives over a vmap's axis name (xlapy.lax.psum, ...)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.core import TracerError
from xlapy.frontend.vmap import VmapError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal((4, 5)).astype(np.float32)


def close(a, b, rtol=1e-5):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for u, v in zip(la, lb):
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape, (u.shape, v.shape)
        np.testing.assert_allclose(u, v, rtol=rtol, atol=rtol)


def both(fn_of, *args, rtol=1e-5, **vmap_kw):
    """vmap(fn) on xlapy and JAX, same arguments; fn_of(N) builds fn for a numpy module."""
    got = xp.vmap(fn_of(xnp), **vmap_kw)(*args)
    want = jax.vmap(fn_of(jnp), **vmap_kw)(*args)
    close(got, want, rtol)
    return got


# ---- in_axes / out_axes -----------------------------------------------------------------------

@pytest.mark.parametrize("in_axes", [0, 1, -1, -2, (0,), [1]])
def test_in_axes_ints(in_axes):
    both(lambda N: lambda a: N.sin(a) * a.sum(), X, in_axes=in_axes)


@pytest.mark.parametrize("out_axes", [0, 1, -1, 2, -3])
def test_out_axes_ints(out_axes):
    x = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    both(lambda N: lambda a: a * 2, x, out_axes=out_axes)


def test_in_axes_none_shares_the_argument():
    both(lambda N: lambda a, w: N.tanh(a @ w), X, W, in_axes=(0, None))
    both(lambda N: lambda w, a: w.T @ a, W, X.T, in_axes=(None, 1), out_axes=1)


def test_pytree_in_axes_prefixes():
    d = {"a": X, "b": W[:, 0], "c": (X.T, X[0])}
    spec = ({"a": 0, "b": None, "c": (1, None)},)
    both(lambda N: lambda t: t["a"] * t["b"] + t["c"][0] - t["c"][1], d, in_axes=spec)
    # a prefix covering a whole subtree
    both(lambda N: lambda t: t["a"] + t["c"][0] * t["c"][1], {"a": X, "c": (X.T, X.T)},
         in_axes=({"a": 0, "c": 1},))


def test_pytree_out_axes_and_none_for_unmapped_outputs():
    got = both(lambda N: lambda a, w: ({"y": a @ w, "w": w}, a.sum()), X, W,
               in_axes=(0, None), out_axes=({"y": 1, "w": None}, 0))
    assert got[0]["w"].shape == W.shape and got[0]["y"].shape == (5, 3)


def test_unmapped_outputs_are_broadcast():
    got = both(lambda N: lambda a, w: (w * 2, 1.0), X, W, in_axes=(0, None))
    assert got[0].shape == (3, 4, 5) and got[1].shape == (3,)


def test_keyword_arguments_are_mapped_over_axis_0():
    got = xp.vmap(lambda a, b=None: a + b)(X, b=X * 2)
    np.testing.assert_allclose(got, X * 3)


def test_axis_size_without_mapped_arguments():
    got = xp.vmap(lambda w: w * 2, in_axes=None, axis_size=2)(W)
    assert got.shape == (2, 4, 5)
    assert xp.vmap(lambda: xnp.ones(2), axis_size=3)().shape == (3, 2)


def test_non_array_leaves_with_in_axes_none_pass_through():
    got = xp.vmap(lambda a, s: a * len(s), in_axes=(0, None))(X, "abc")
    np.testing.assert_allclose(got, X * 3)


# ---- errors (JAX raises ValueError / TypeError where these do) ------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: xp.vmap(lambda a, b: a)(X, W), "inconsistent sizes"),
    (lambda: xp.vmap(lambda a: a, in_axes=2)(X), "at least 3, but is only 2"),
    (lambda: xp.vmap(lambda a: a, in_axes=-3)(X), "at least 3"),
    (lambda: xp.vmap(lambda a: a)(np.float32(1)), "at least 1, but is only 0"),
    (lambda: xp.vmap(lambda a: a, in_axes=None)(X), "at least one non-None"),
    (lambda: xp.vmap(lambda a: a, out_axes=None)(X), "out_axes is None"),
    (lambda: xp.vmap(lambda a: a, in_axes=(0, 0))(X), r"len\(in_axes\)=2, len\(args\)=1"),
    (lambda: xp.vmap(lambda a: a, in_axes=({"a": 0},))({"b": X}), "tree prefix"),
    (lambda: xp.vmap(lambda a: a, out_axes=(0, 1))(X), "tree prefix"),
    (lambda: xp.vmap(lambda a: a, in_axes=0.5), "must be an int, None"),
    (lambda: xp.vmap(lambda a: a, in_axes="x"), "must be an int, None"),
    (lambda: xp.vmap(lambda a: a, out_axes=3)(X), "out of range"),
    (lambda: xp.vmap(lambda a: a, axis_size=4)(X), "axis_size` argument was 4"),
    (lambda: xp.vmap(lambda a, b: a)(X, b=W), "kwargs\\['b'\\]"),
])
def test_errors_match_jax(call, match):
    with pytest.raises(VmapError, match=match) as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, XlapyError)


def test_inconsistent_sizes_name_the_arguments():
    with pytest.raises(VmapError) as info:
        xp.vmap(lambda a, b: a)(X, np.ones(5))
    msg = str(info.value)
    assert "axis 0 of argument a of type f32[3,4]" in msg
    assert "axis 0 of argument b of type f64[5]" in msg


def test_not_callable():
    with pytest.raises(TypeError):
        xp.vmap(3)


def test_python_control_flow_on_a_batched_value_is_a_tracer_error():
    with pytest.raises(TracerError, match="inside vmap"):
        xp.vmap(lambda a: a if a.sum() > 0 else -a)(X)


# ---- nesting and composition ------------------------------------------------------------------

def test_nested_vmaps_with_axes_on_both_levels():
    x3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    f = lambda V, N: V(V(lambda a, b: N.outer(a, b).sum(0), in_axes=(0, None)),
                       in_axes=(2, 1), out_axes=1)
    close(f(xp.vmap, xnp)(x3, X), f(jax.vmap, jnp)(x3, X))


def test_vmap_inside_jit_and_jit_inside_vmap():
    f = lambda a: xnp.tanh(a @ W).sum()
    want = np.tanh(X @ W).sum(1)
    close(xp.jit(xp.vmap(f))(X), want)
    close(xp.vmap(xp.jit(f))(X), want)
    close(xp.jit(xp.vmap(xp.jit(f)))(X), want)


def test_vmap_of_grad_is_per_example_gradients():
    def loss(N):
        return lambda w, x, y: ((N.tanh(x @ w) - y) ** 2).sum()
    y = RNG.standard_normal((3, 5)).astype(np.float32)
    got = xp.vmap(xp.grad(loss(xnp)), in_axes=(None, 0, 0))(W, X, y)
    want = jax.vmap(jax.grad(loss(jnp)), in_axes=(None, 0, 0))(W, X, y)
    close(got, want)
    close(xp.jit(xp.vmap(xp.grad(loss(xnp)), in_axes=(None, 0, 0)))(W, X, y), want)
    close(xp.vmap(xp.jit(xp.grad(loss(xnp))), in_axes=(None, 0, 0))(W, X, y), want)


def test_grad_of_vmap_and_second_order():
    f = lambda V, N: lambda w: V(lambda a: N.sin(a @ w))(X).sum()
    close(xp.grad(f(xp.vmap, xnp))(W), jax.grad(f(jax.vmap, jnp))(W))
    close(xp.jit(xp.grad(f(xp.vmap, xnp)))(W), jax.grad(f(jax.vmap, jnp))(W))
    g = lambda G, V, N: lambda s: G(lambda t: V(lambda a: N.sin(a * t))(X).sum())(s)
    close(xp.grad(g(xp.grad, xp.vmap, xnp))(np.float32(0.3)),
          jax.grad(g(jax.grad, jax.vmap, jnp))(np.float32(0.3)))
    # hessian-vector-ish: vmap over grad of grad
    h = lambda G, V, N: V(G(G(lambda t: N.sin(t) * t)))
    close(h(xp.grad, xp.vmap, xnp)(X[0]), h(jax.grad, jax.vmap, jnp)(X[0]))


def test_grad_of_vmap_of_a_scan_saves_the_batched_carries():
    from xlapy.frontend.graph import make_graph
    from xlapy.frontend.core import ShapedArray

    def f(L, V, N):
        body = lambda c, x: (N.sin(c) * x + c, c * x)
        return lambda w: V(lambda c0: L.scan(body, c0 * w, X[0])[1].sum())(X[:, 0]).sum()
    close(xp.grad(f(xlax, xp.vmap, xnp))(np.float32(0.7)),
          jax.grad(f(jax.lax, jax.vmap, jnp))(np.float32(0.7)))
    graph, _, _ = make_graph(xp.grad(f(xlax, xp.vmap, xnp)), [ShapedArray((), np.float32)])
    scans = [e for e in graph.eqns if e.prim.name == "scan"]
    # the forward scan saves its carries for the backward one (no recomputing scan)
    assert len(scans) == 2 and scans[0].params["save_carries"]


def test_vmap_of_numpy_level_functions():
    idx = np.array([0, 2, 1])
    both(lambda N: lambda a, i: a[i], X, idx)
    both(lambda N: lambda a, i: a.at[i].add(1.0), X, idx)
    both(lambda N: lambda a, b: N.einsum("i,j->ij", a, b), X, X)
    both(lambda N: lambda a: N.sort(a)[::-1], X)
    both(lambda N: lambda a: N.where(a > 0, a, 0.0).mean(), X)
    both(lambda N: lambda a: a[1:3].reshape(2, 1) * a[None, :2], X, in_axes=1)


def test_batched_while_predicate_runs_until_every_member_is_done():
    n = np.array([0, 3, 1], np.int32)
    f = lambda L: lambda k, x: L.while_loop(lambda c: c[0] < k, lambda c: (c[0] + 1, c[1] * 2),
                                            (np.int32(0), x))
    got = xp.vmap(f(xlax), in_axes=(0, None))(n, np.float32(1.5))
    want = jax.vmap(f(jax.lax), in_axes=(0, None))(n, np.float32(1.5))
    close(got, want)
    np.testing.assert_array_equal(got[0], n)


# ---- collectives -------------------------------------------------------------------------------

def collectives(L, N):
    def f(x):
        return {"sum": L.psum(x, "i"), "mean": L.pmean(x, "i"), "max": L.pmax(x, "i"),
                "min": L.pmin(x, "i"), "index": L.axis_index("i"), "n": L.psum(1, "i"),
                "centred": x - L.pmean(x, "i"),
                "gather": L.all_gather(x, "i"), "gather_tiled": L.all_gather(x, "i", tiled=True),
                "gather_axis1": L.all_gather(x, "i", axis=1)}
    return f


def test_collectives_against_jax():
    got = xp.vmap(collectives(xlax, xnp), axis_name="i")(X)
    want = jax.vmap(collectives(jax.lax, jnp), axis_name="i")(X)
    close(got, want)
    close(xp.jit(xp.vmap(collectives(xlax, xnp), axis_name="i"))(X), want)


def test_collectives_over_nested_axes():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for names in ["i", "j", ("i", "j"), ("j", "i")]:
        f = lambda L, names=names: lambda a: (L.psum(a, names), L.axis_index(names),
                                              L.pmax(a, names))
        V = lambda v, L, f=f: v(v(f(L), axis_name="j"), axis_name="i")
        close(V(xp.vmap, xlax)(x), V(jax.vmap, jax.lax)(x))


def test_grad_through_collectives_matches_jax():
    xs = np.arange(3, dtype=np.float32)
    for fn in (lambda L: lambda x: L.psum(x * x, "i"),
               lambda L: lambda x: L.pmean(x * x, "i"),
               lambda L: lambda x: (L.all_gather(x * x, "i") * np.arange(3.0)).sum()):
        close(xp.vmap(xp.grad(fn(xlax)), axis_name="i")(xs),
              jax.vmap(jax.grad(fn(jax.lax)), axis_name="i")(xs))
    close(xp.grad(lambda v: xp.vmap(lambda x: xlax.psum(x * x, "i"), axis_name="i")(v).sum())(xs),
          jax.grad(lambda v: jax.vmap(lambda x: jax.lax.psum(x * x, "i"),
                                      axis_name="i")(v).sum())(xs))


def test_collectives_inside_loops_and_conds():
    def f(L):
        def g(x):
            s = L.fori_loop(0, 3, lambda i, c: c + L.psum(np.float32(1.0), "i"), np.float32(0))
            t = L.scan(lambda c, v: (c + L.psum(v, "i"), c), np.float32(0), x)[0]
            u = L.cond(True, lambda: L.psum(np.float32(2.0), "i"), lambda: np.float32(0))
            return s, t, u
        return g
    want = jax.vmap(f(jax.lax), axis_name="i")(X)
    close(xp.vmap(f(xlax), axis_name="i")(X), want)
    close(xp.jit(xp.vmap(f(xlax), axis_name="i"))(X), want)


def test_collective_in_a_jit_called_inside_vmap():
    f = lambda a: a + xp.jit(lambda: xlax.psum(np.float32(1.0), "i"))()
    close(xp.vmap(f, axis_name="i")(X), X + 3)


def test_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        xp.vmap(lambda a: xlax.psum(a, "j"), axis_name="i")(X)
    with pytest.raises(XlapyError, match="unbound axis name"):
        xlax.psum(X, "i")


def test_leading_batch_rule_for_batch_polymorphic_primitives():
    # a Cholesky-like primitive taking [..., n, n] (not registered: a local Primitive)
    from xlapy.frontend.batching import leading_batch_rule
    from xlapy.frontend.core import Primitive, bind
    p = Primitive("test_cholesky")
    p.def_impl(lambda a: np.linalg.cholesky(a))
    p.def_abstract_eval(lambda a: a)
    p.def_batch(leading_batch_rule(p))
    m = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
    spd = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3, dtype=np.float32)
    got = xp.vmap(lambda a: bind(p, a), in_axes=1)(spd)
    np.testing.assert_allclose(got, np.linalg.cholesky(np.swapaxes(spd, 0, 1)), rtol=1e-5)
