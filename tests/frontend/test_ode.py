"""xlapy.experimental.ode.odeint against jax.experimental.ode.odeint: values at the
output times, pytree states, extra arguments, jit, the adjoint gradient with respect to
y0, t and the arguments, and its errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.ode import odeint as jax_odeint

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.experimental.ode import odeint

TS = np.linspace(0.0, 2.0, 4).astype(np.float32)
Y0 = np.float32([1.0, 2.0])


def decay(N):
    return lambda y, t, a: -a * y + N.sin(t)


def pendulum(N):
    def f(state, t, k):
        return {"x": state["v"], "v": -k * N.sin(state["x"])}
    return f


def test_values_match_jax():
    ys = odeint(decay(xnp), Y0, TS, 0.5)
    want = jax_odeint(decay(jnp), Y0, TS, 0.5)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(want), rtol=2e-6, atol=2e-6)
    s0 = {"x": np.float32(1.0), "v": np.zeros(1, np.float32)}
    got = xp.jit(lambda s, k: odeint(pendulum(xnp), s, TS, k, rtol=1e-5, atol=1e-5))(
        s0, np.float32(2.0))
    want = jax_odeint(pendulum(jnp), s0, TS, np.float32(2.0), rtol=1e-5, atol=1e-5)
    for k in ("x", "v"):
        assert got[k].shape == want[k].shape and got[k].dtype == want[k].dtype
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-5)


def test_adjoint_gradient_matches_jax():
    def loss(N, ode):
        return lambda y, t, a: N.sum(ode(decay(N), y, t, a) ** 2)

    got = xp.grad(loss(xnp, odeint), argnums=(0, 1, 2))(Y0, TS, np.float32(0.5))
    want = jax.grad(loss(jnp, jax_odeint), argnums=(0, 1, 2))(Y0, TS, np.float32(0.5))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_mxstep_and_hmax():
    # too few steps allowed: the solve stops early and extrapolates, as JAX's (with 1 or
    # 2 steps the extrapolation amplifies last-bit differences too much to compare)
    got = odeint(decay(xnp), Y0, TS, 0.5, mxstep=3)
    want = jax_odeint(decay(jnp), Y0, TS, 0.5, mxstep=3)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-3)
    full = jax_odeint(decay(jnp), Y0, TS, 0.5)
    assert np.abs(np.asarray(got) - np.asarray(full)).max() > 2e-4  # it did stop early
    got = odeint(decay(xnp), Y0, TS, 0.5, hmax=0.1)
    want = jax_odeint(decay(jnp), Y0, TS, 0.5, hmax=0.1)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(XlapyError, match="floating-point"):
        odeint(decay(xnp), np.arange(2), TS, 0.5)
    with pytest.raises(XlapyError, match="t must be a 1-d array"):
        odeint(decay(xnp), Y0, np.arange(3), 0.5)
    with pytest.raises(XlapyError, match="rtol must be positive"):
        odeint(decay(xnp), Y0, TS, 0.5, rtol=-1.0)
    with pytest.raises(XlapyError, match="y0's structure"):
        odeint(lambda y, t: xnp.concatenate([y, y]), Y0, TS)
    with pytest.raises(XlapyError, match="callable"):
        odeint(3, Y0, TS)
