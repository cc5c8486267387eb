"""lax.all_to_all / pswapaxes against jax.lax (under vmap with an axis name), over xlapy's
vmap and pmap axes, with their gradients, JVPs and an inner vmap passing through."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
from xlapy import lax
from xlapy.errors import XlapyError

jax = pytest.importorskip("jax")
jlax = jax.lax

N = 2
X = (np.arange(N * 2 * 4 * 6, dtype=np.float32).reshape(N, 2, 4, 6) - 40) / 7
W = np.cos(np.arange(96, dtype=np.float32)).reshape(N, 4, 2, 6)  # a cotangent-ish weight

CASES = [(0, 0, False), (0, 1, False), (0, 2, False), (2, 0, True), (1, 2, True),
         (2, 2, True), (0, 0, True)]


def _f(mod, s, c, t):
    return lambda v: mod.all_to_all(v, "i", s, c, tiled=t)


@pytest.mark.parametrize("s,c,t", CASES)
def test_all_to_all_as_jax(s, c, t):
    want = np.asarray(jax.vmap(_f(jlax, s, c, t), axis_name="i")(X))
    for mapper in (xp.vmap, xp.pmap):
        got = mapper(_f(lax, s, c, t), axis_name="i")(X)
        assert got.shape == want.shape, mapper
        np.testing.assert_array_equal(got, want, err_msg=str(mapper))


@pytest.mark.parametrize("s,c,t", [(0, 2, False), (2, 0, True), (1, 1, True)])
def test_all_to_all_gradient_and_jvp(s, c, t):
    def loss(mod, vmap, np_):
        def f(x):
            y = vmap(_f(mod, s, c, t), axis_name="i")(x)
            return np_.sum(y * np_.sin(np_.arange(y.size, dtype=np.float32).reshape(y.shape)))
        return f
    want = np.asarray(jax.grad(loss(jlax, jax.vmap, jax.numpy))(X))
    got = xp.grad(loss(lax, xp.vmap, xp.numpy))(X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    tangent = np.ones_like(X) * np.float32(0.5)
    _, jt = jax.jvp(jax.vmap(_f(jlax, s, c, t), axis_name="i"), (X,), (tangent,))
    _, xt = xp.jvp(xp.vmap(_f(lax, s, c, t), axis_name="i"), (X,), (tangent,))
    np.testing.assert_array_equal(xt, np.asarray(jt))


def test_inner_vmap_passes_through_and_pswapaxes():
    def f(mod, vmap):
        # the inner vmap (axis 'j', over dimension 1) does not own 'i'
        return vmap(vmap(lambda v: mod.all_to_all(v, "i", 1, 0, tiled=True), axis_name="j",
                         in_axes=1, out_axes=1), axis_name="i")
    np.testing.assert_array_equal(f(lax, xp.vmap)(X), np.asarray(f(jlax, jax.vmap)(X)))
    y = X[:, :, :N, :]
    sw = xp.pmap(lambda v: lax.pswapaxes(v, "i", 1), axis_name="i")(y)
    want = jax.vmap(lambda v: jlax.pswapaxes(v, "i", 1), axis_name="i")(y)
    np.testing.assert_array_equal(sw, np.asarray(want))


def test_negative_axes_count_from_the_end():
    # (JAX 0.10.2 fails on negative axes with tiled=True, so xlapy is compared with itself)
    got = xp.pmap(_f(lax, -1, -3, True), axis_name="i")(X)
    np.testing.assert_array_equal(got, xp.pmap(_f(lax, 2, 0, True), axis_name="i")(X))


def test_all_to_all_errors():
    with pytest.raises(XlapyError, match="must equal the size of the named axis"):
        xp.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(X)
    with pytest.raises(XlapyError, match="has to be divisible"):
        xp.pmap(lambda v: lax.all_to_all(v, "i", 2, 0, tiled=True), axis_name="i")(
            X[:, :, :, :5])
    with pytest.raises(XlapyError, match="must be axes of the operand"):
        xp.vmap(lambda v: lax.all_to_all(v, "i", 3, 0), axis_name="i")(X)
