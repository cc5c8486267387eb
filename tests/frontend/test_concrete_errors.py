"""Traced values used as concrete ones: under jit every such use is JAX's kind of error (a
TypeError naming the jit argument the value came from and suggesting static_argnums);
under grad / jvp outside jit the values are concrete and Python control flow works, as in
JAX. Each case runs in JAX too and must behave alike (raise a TypeError, or agree)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.frontend.core import TracerError

# f(N, a, n): a float scalar, n an int scalar (a Python int); N is xlapy.numpy or jax.numpy
USES = {
    "if": lambda N, a, n: a * 2 if n > 0 else a,
    "int": lambda N, a, n: a * int(n),
    "float": lambda N, a, n: a * float(n),
    "range": lambda N, a, n: sum(a for _ in range(n)),
    "list_index": lambda N, a, n: a * [1.0, 2.0, 3.0][n],
    "ones": lambda N, a, n: N.ones(n) * a,
    "zeros_2d": lambda N, a, n: N.zeros((2, n)) + a,
    "reshape": lambda N, a, n: N.ones(4).reshape(n, -1) * a,
    "arange": lambda N, a, n: N.arange(n) * a,
    "linspace": lambda N, a, n: N.linspace(0.0, 1.0, n) * a,
    "eye": lambda N, a, n: N.eye(n) * a,
    "item": lambda N, a, n: a * (n.item() if hasattr(n, "item") else n),  # (static: an int)
    "tolist": lambda N, a, n: a * (n.tolist() if hasattr(n, "tolist") else n),
    "numpy": lambda N, a, n: a * np.asarray(n),
    "while": lambda N, a, n: _while(a, n),
}


def _while(a, n):
    while n > 0:
        a, n = a * 2, n - 1
    return a


@pytest.mark.parametrize("use", sorted(USES))
def test_jit_names_the_argument_and_suggests_static_argnums(use):
    f = USES[use]
    with pytest.raises(TypeError):
        jax.jit(lambda a, n: f(jnp, a, n))(1.0, 2)
    with pytest.raises(TracerError) as e:
        xp.jit(lambda a, n: f(xnp, a, n))(1.0, 2)
    msg = str(e.value)
    assert isinstance(e.value, TypeError)
    assert "argument 'n'" in msg and "static_argnums" in msg, msg
    assert "iteration over a 0-d array" not in msg
    # static, it works and agrees with JAX
    want = jax.jit(lambda a, n: f(jnp, a, n), static_argnums=1)(1.0, 2)
    got = xp.jit(lambda a, n: f(xnp, a, n), static_argnums=1)(1.0, 2)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_the_issue_example():
    with pytest.raises(TracerError, match="argument 'n'.*static_argnums") as e:
        xp.jit(lambda a, n: xnp.ones(n) * a)(1.0, 3)
    assert "shape" in str(e.value)
    np.testing.assert_allclose(xp.jit(lambda a, n: xnp.ones(n) * a, static_argnums=1)(1.0, 3),
                               [1.0, 1.0, 1.0])


def test_keyword_arguments_are_named():
    with pytest.raises(TracerError, match="argument 'size'"):
        xp.jit(lambda a, *, size: xnp.zeros(size) + a)(1.0, size=3)
    out = xp.jit(lambda a, *, size: xnp.zeros(size) + a, static_argnames="size")(1.0, size=3)
    assert out.shape == (3,)


# under grad and jvp outside jit the values are concrete: the same programs run, as in JAX
CONCRETE_OK = ["if", "int", "range", "list_index", "item", "while"]
CONCRETE_REFUSED = ["float", "numpy"]  # JAX refuses them too: they would drop derivatives


@pytest.mark.parametrize("use", CONCRETE_OK)
def test_grad_and_jvp_evaluate_concretely(use):
    f = USES[use]
    loss = lambda N: (lambda a, n: f(N, a, n) * a)
    as_int = lambda N: (lambda a, m: f(N, a, m.astype(np.int32)) * a)
    for n in (np.float32(2.0), np.float32(0.0)):  # n differentiated too: a float
        want = jax.grad(as_int(jnp), (0, 1))(np.float32(1.5), n)
        got = xp.grad(as_int(xnp), (0, 1))(np.float32(1.5), n)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    want = jax.jvp(lambda a: loss(jnp)(a, np.int32(2)), (np.float32(1.5),), (np.float32(1.0),))
    got = xp.jvp(lambda a: loss(xnp)(a, np.int32(2)), (np.float32(1.5),), (np.float32(1.0),))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("use", CONCRETE_REFUSED)
def test_grad_refuses_what_would_drop_the_derivative(use):
    f = USES[use]
    with pytest.raises(TypeError):
        jax.grad(lambda a, n: f(jnp, a, n) * a, (0, 1))(np.float32(1.5), np.float32(2.0))
    with pytest.raises(TracerError):
        xp.grad(lambda a, n: f(xnp, a, n) * a, (0, 1))(np.float32(1.5), np.float32(2.0))


def test_sizes_from_concrete_grad_values():
    # a size computed from a differentiated value is concrete outside jit (as in JAX)
    f = lambda N: (lambda x: N.sum(N.ones(x.astype(np.int32)) * x))
    np.testing.assert_allclose(xp.grad(f(xnp))(np.float32(3.0)),
                               jax.grad(f(jnp))(np.float32(3.0)))


def test_grad_inside_jit_is_abstract():
    def f(x):
        return x * 2 if x > 0 else -x
    with pytest.raises(TracerError, match="argument 'x'"):
        xp.jit(xp.grad(f))(1.0)
    with pytest.raises(TypeError):
        jax.jit(jax.grad(f))(1.0)
