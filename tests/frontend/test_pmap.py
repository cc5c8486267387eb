"""xp.pmap: the collectives of xlapy.lax over a pmap axis lower to HLO collectives and run
as replicas on the interpreter; checked against NumPy, and a data-parallel gradient step
(per-device grads averaged with pmean) against the full-batch gradient."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import XlapyError

X = np.arange(12, dtype=np.float32).reshape(4, 3) - 5


def test_collectives_over_the_pmap_axis():
    def f(x):
        return (lax.psum(x, "i"), lax.pmean(x, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"),
                lax.axis_index("i"), lax.all_gather(x, "i"),
                lax.all_gather(x, "i", axis=0, tiled=True), lax.psum(1, "i"))
    s, m, mx, mn, idx, g, gt, n = xp.pmap(f, axis_name="i")(X)
    for d in range(4):
        np.testing.assert_array_equal(s[d], X.sum(0))
        np.testing.assert_allclose(m[d], X.mean(0), rtol=1e-6)
        np.testing.assert_array_equal(mx[d], X.max(0))
        np.testing.assert_array_equal(mn[d], X.min(0))
        np.testing.assert_array_equal(g[d], X)
        np.testing.assert_array_equal(gt[d], X.reshape(-1))
    np.testing.assert_array_equal(idx, np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(n, [4, 4, 4, 4])


def test_pytrees_and_two_arguments():
    out = xp.pmap(lambda a, b: {"s": lax.psum(a * b["w"], "dev")}, axis_name="dev")(
        X, {"w": np.arange(4, dtype=np.float32)})
    np.testing.assert_array_equal(out["s"][2], (X * np.arange(4)[:, None]).sum(0))


def _loss(params, x, y):
    h = xnp.tanh(x @ params["w1"] + params["b1"])
    return xnp.mean((h @ params["w2"] - y) ** 2)


def test_data_parallel_gradient_is_the_full_batch_gradient():
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((5, 8)).astype(np.float32),
              "b1": np.zeros(8, np.float32),
              "w2": rng.standard_normal((8, 2)).astype(np.float32)}
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    n = 4

    def step(p, xb, yb):
        return lax.pmean(xp.grad(_loss)(p, xb, yb), "batch")

    replicated = {k: np.broadcast_to(v, (n,) + v.shape).copy() for k, v in params.items()}
    grads = xp.pmap(step, axis_name="batch")(replicated, x.reshape(n, 4, 5),
                                             y.reshape(n, 4, 2))
    want = xp.grad(_loss)(params, x, y)
    for k in params:
        for d in range(n):
            np.testing.assert_allclose(grads[k][d], want[k], rtol=2e-5, atol=1e-6,
                                       err_msg=f"{k} on device {d}")


def test_errors():
    with pytest.raises(XlapyError, match="inconsistent sizes for array axes to be mapped"):
        xp.pmap(lambda a, b: a + b, axis_name="i")(X, X[:2])
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        xp.pmap(lambda a: lax.psum(a, "j"), axis_name="i")(X)
    # a collective over an inner vmap axis inside pmap still runs inside that vmap
    out = xp.pmap(lambda a: xp.vmap(lambda r: lax.psum(r, "v"), axis_name="v")(a),
                  axis_name="i")(X)
    np.testing.assert_array_equal(out, np.broadcast_to(X.sum(1)[:, None], X.shape))


def test_traced_once_per_argument_structure():
    traces = []

    def f(x):
        traces.append(x.shape)
        return lax.psum(x, "i")
    g = xp.pmap(f, axis_name="i")
    g(X)
    g(X + 1)
    assert traces == [(3,)]
    np.testing.assert_array_equal(g(X[:2, :2])[1], X[:2, :2].sum(0))
    assert traces == [(3,), (2,)]


RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def _shifted(x, perm):
    out = np.zeros_like(x)
    for s, t in perm:
        out[t] = x[s]
    return out


@pytest.mark.parametrize("perm", [RING, [(0, 2), (2, 0)]])
def test_ppermute_in_pmap_and_vmap(perm):
    def f(x):
        return lax.ppermute(x, "i", perm)
    np.testing.assert_array_equal(xp.pmap(f, axis_name="i")(X), _shifted(X, perm))
    np.testing.assert_array_equal(xp.vmap(f, axis_name="i")(X), _shifted(X, perm))
    # its gradient sends the cotangents back along the inverse pairs
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    g = xp.grad(lambda x: xp.numpy.sum(xp.vmap(f, axis_name="i")(x) * w))(X)
    np.testing.assert_array_equal(g, _shifted(w, [(t, s) for s, t in perm]))


def test_ppermute_errors():
    with pytest.raises(XlapyError, match="repeats a target"):
        lax.ppermute(X, "i", [(0, 1), (2, 1)])
    with pytest.raises(XlapyError, match="beyond the axis size 4"):
        xp.vmap(lambda x: lax.ppermute(x, "i", [(0, 5)]), axis_name="i")(X)


def test_psum_scatter_in_pmap_vmap_and_grad():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    total = x.sum(0)
    for mapper in (xp.pmap, xp.vmap):
        tiled = mapper(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(x)
        np.testing.assert_array_equal(tiled, total.reshape(4, 2))
        y = x.reshape(4, 4, 2)
        untiled = mapper(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(y)
        np.testing.assert_array_equal(untiled, y.sum(0))
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    g = xp.grad(lambda v: xp.numpy.sum(
        xp.vmap(lambda r: lax.psum_scatter(r, "i", tiled=True), axis_name="i")(v) * w))(x)
    np.testing.assert_array_equal(g, np.broadcast_to(w.reshape(-1), (4, 8)))
    with pytest.raises(XlapyError, match="must equal the axis size 4"):
        xp.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(x)
