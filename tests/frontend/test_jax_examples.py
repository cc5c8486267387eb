"""Small versions of JAX's example programs written against `import xlapy as jax`, each run
with xlapy and with jax and compared: an ODE fit (odeint under grad and jit, as
examples/ode.py-like neural-ODE code) and Gaussian-process regression (cho_factor /
cho_solve and the gradient of the marginal likelihood, as
examples/gaussian_process_regression.py)."""

from __future__ import annotations

import jax as real_jax
import numpy as np
import pytest

import xlapy


def _libs(name):
    if name == "xlapy":
        import xlapy as jax
        import xlapy.numpy as jnp
        from xlapy.experimental.ode import odeint
        from xlapy.scipy import linalg as sla
    else:
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint
        from jax.scipy import linalg as sla
    return jax, jnp, odeint, sla


def ode_fit(name):
    """Fit the decay rate and forcing of dy/dt = -k y + b sin(t) by gradient steps."""
    jax, jnp, odeint, _ = _libs(name)
    ts = jnp.linspace(0.0, 1.5, 3)
    target = jnp.array([1.0, 0.6, 0.5])

    def dynamics(y, t, params):
        return -params["k"] * y + params["b"] * jnp.sin(t)

    def loss(params):
        ys = odeint(dynamics, jnp.array(1.0), ts, params, rtol=1e-6, atol=1e-6)
        return jnp.mean((ys - target) ** 2)

    # (xlapy runs the gradient steps eagerly: compiling its adjoint solve takes ~20 s on a
    # loaded machine, tests/frontend/test_ode.py runs odeint under jit; jax is faster jitted)
    step = jax.value_and_grad(loss)
    if name == "jax":
        step = jax.jit(step)
    params = {"k": jnp.array(0.3), "b": jnp.array(0.1)}
    value, g = step(params)
    params = jax.tree_util.tree_map(lambda p, d: p - 0.5 * d, params, g)
    return [float(value), float(loss(params))], {k: float(v) for k, v in params.items()}


def gp_regression(name):
    """The negative log marginal likelihood of a GP with an RBF kernel, its gradient with
    respect to the (softplus-transformed) hyperparameters, a few descent steps, and the
    posterior mean at test points."""
    jax, jnp, _, sla = _libs(name)
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-2, 2, 12)).astype(np.float32)[:, None]
    y = (np.sin(2 * x[:, 0]) + 0.1 * rng.standard_normal(12)).astype(np.float32)
    xt = np.linspace(-2, 2, 5).astype(np.float32)[:, None]

    def softplus(v):
        return jnp.logaddexp(v, 0.0)

    def cov(amp, ls, a, b):
        d = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
        return amp * jnp.exp(-0.5 * d / ls ** 2)

    def nll(params):
        amp, ls, noise = (softplus(params[k]) for k in ("amp", "ls", "noise"))
        k = cov(amp, ls, x, x) + (noise + 1e-4) * jnp.eye(x.shape[0])
        chol = sla.cho_factor(k, lower=True)
        alpha = sla.cho_solve(chol, y)
        return (0.5 * jnp.dot(y, alpha) + jnp.sum(jnp.log(jnp.diag(chol[0])))
                + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi))

    def predict(params):
        amp, ls, noise = (softplus(params[k]) for k in ("amp", "ls", "noise"))
        k = cov(amp, ls, x, x) + (noise + 1e-4) * jnp.eye(x.shape[0])
        return cov(amp, ls, xt, x) @ sla.cho_solve(sla.cho_factor(k, lower=True), y)

    grad_fn = jax.jit(jax.value_and_grad(nll))
    params = {"amp": jnp.array(0.0), "ls": jnp.array(0.0), "noise": jnp.array(-2.0)}
    values = []
    for _ in range(3):
        value, g = grad_fn(params)
        values.append(float(value))
        params = jax.tree_util.tree_map(lambda p, d: p - 0.05 * d, params, g)
    return values, np.asarray(jax.jit(predict)(params))


@pytest.mark.parametrize("program", [ode_fit, gp_regression], ids=lambda f: f.__name__)
def test_example_program_matches_jax(program):
    ours, theirs = program("xlapy"), program("jax")
    assert isinstance(xlapy.jit, type(xlapy.jit)) and real_jax.__name__ == "jax"
    for a, b in zip(ours, theirs):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            a, b = list(a.values()), list(b.values())
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)
    losses = ours[0]
    assert losses[-1] < losses[0]  # the descent steps did descend
