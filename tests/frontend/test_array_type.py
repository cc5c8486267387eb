"""Results outside jit are xlapy ArrayImpl values: NumPy arrays (no copy) with the methods
JAX code calls on jax.Array (.at, block_until_ready, device, ...), taking jit's fast path."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax, nn, random
from xlapy.frontend.array import ArrayImpl

X = xnp.ones((3, 4))

MAKERS = {
    "jit": lambda: xp.jit(lambda a: a * 2)(X),
    "jit_tuple": lambda: xp.jit(lambda a: (a, a + 1))(X)[1],
    "array": lambda: xnp.array([1.0, 2.0]),
    "asarray": lambda: xnp.asarray(np.ones(2)),
    "zeros": lambda: xnp.zeros(3),
    "arange": lambda: xnp.arange(4),
    "linspace": lambda: xnp.linspace(0, 1, 5),
    "sum": lambda: xnp.sum(X),
    "matmul": lambda: X @ X.T,
    "lax": lambda: lax.add(X, X),
    "nn": lambda: nn.relu(X),
    "random": lambda: random.normal(random.PRNGKey(0), (2,)),
    "grad": lambda: xp.grad(lambda a: xnp.sum(a * a))(X),
    "vmap": lambda: xp.vmap(xnp.sin)(X),
    "device_put": lambda: xp.device_put(np.ones(3)),
}


@pytest.mark.parametrize("name", MAKERS)
def test_results_are_arrays_with_jax_methods(name):
    out = MAKERS[name]()
    assert type(out) is ArrayImpl, type(out)
    assert isinstance(out, np.ndarray) and isinstance(out, xp.Array)
    assert out.block_until_ready() is out
    assert out.device == xp.devices()[0] and out.devices() == {xp.devices()[0]}
    assert out.is_fully_addressable and out.unsafe_buffer_pointer() == out.ctypes.data


def test_at_updates_outside_jit():
    x = random.normal(random.PRNGKey(1), (3, 4))
    y = x.at[0, 1].set(5.0)
    assert float(y[0, 1]) == 5.0 and float(x[0, 1]) != 5.0  # a new array, x unchanged
    np.testing.assert_array_equal(x.at[:, 2].add(1.0)[:, 2], np.asarray(x)[:, 2] + 1.0)
    np.testing.assert_array_equal(xnp.arange(5).at[xnp.array([0, 2])].multiply(3),
                                  [0, 1, 6, 3, 4])
    assert float(x.at[1, 1].get()) == float(x[1, 1])


def test_outputs_fed_back_take_the_fast_path():
    f = xp.jit(lambda a: a * 2.0)
    y = f(X)
    for _ in range(3):
        y = f(y)
    assert len(f._fast) == 1  # the ArrayImpl arguments hit the fast-path cache
    np.testing.assert_array_equal(y, np.full((3, 4), 16.0, np.float32))


def test_views_share_memory_and_convert_back():
    x = xnp.zeros(4)
    plain = np.asarray(x)
    assert type(plain) is np.ndarray and np.shares_memory(plain, x)
    assert repr(xnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
    back = pickle.loads(pickle.dumps(xnp.arange(3)))
    np.testing.assert_array_equal(back, [0, 1, 2])


def test_numpy_operations_keep_numpy_semantics():
    x = xnp.ones(3)
    assert type(x + 1) is ArrayImpl  # NumPy's ufuncs on the subclass
    assert (np.ones(3) * x).dtype == np.float64  # NumPy's promotion (README: differences)
    total = x.sum()  # NumPy's method: a 0-d array of the subclass, like JAX's 0-d Array
    assert type(total) is ArrayImpl and total.shape == () and f"{total:.1f}" == "3.0"


def test_temporary_array_constants_are_not_confused_while_tracing():
    """Constants captured by a trace are keyed by identity: an ArrayImpl view freed during
    tracing must not hand its id (and its tracer) to the next temporary."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    bias = np.arange(4, dtype=np.float32)

    def f(x):
        h = x @ xnp.asarray(w)          # a temporary view, dropped after the product
        for _ in range(3):
            h = h + xnp.asarray(bias)   # new temporaries that may reuse its address
        return h

    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(xp.jit(f)(x), x @ w + 3 * bias)
