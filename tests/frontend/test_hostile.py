"""The frontend on programs no machine can run: the project's own errors, naming what failed,
never a raw MemoryError or RecursionError."""

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import ResourceExhaustedError, ShapeError, XlapyError

HUGE = (100_000, 1_000_000)  # f32: 400 GB


def test_400_gb_eagerly():
    with pytest.raises(ResourceExhaustedError, match=r"broadcast_in_dim: .*f32\[100000,1000000\]"):
        xnp.zeros(HUGE, np.float32)


def test_400_gb_under_jit():
    f = xp.jit(lambda x: xnp.ones(HUGE, np.float32) + x)
    with pytest.raises(ResourceExhaustedError,
                       match=r"not enough memory to run .*f32\[100000,1000000\].*"
                             r"400000000000 bytes"):
        f(np.float32(1))


def test_more_than_any_address_space():
    f = xp.jit(lambda x: xp.lax.pad(x, np.float32(0), [(0, 10**17, 0)]))
    with pytest.raises(ShapeError, match=r"pad: f32\[100000000000000001\] would take"):
        f(np.ones(1, np.float32))


def test_self_recursive_jitted_function():
    @xp.jit
    def f(x):
        return f(x) + 1

    for _ in range(2):  # and again: nothing half-built is left in its caches
        with pytest.raises(XlapyError, match=r"jit\(f\): .*calls itself"):
            f(np.float32(1))


def test_recursion_through_a_fresh_jit_each_level():
    def g(x):
        return xp.jit(g)(x)

    with pytest.raises(XlapyError, match=r"jit\(g\): .*recursion limit"):
        xp.jit(g)(np.float32(1))


def test_deeply_nested_and_self_containing_pytrees():
    deep = np.float32(1)
    for _ in range(2000):
        deep = (deep,)
    loop = [np.float32(1)]
    loop.append(loop)
    ident = xp.jit(lambda x: x)
    for tree in (deep, loop):
        with pytest.raises(XlapyError, match="a pytree nested more than 256 deep, or contain"):
            ident(tree)
    ok = np.float32(2)
    for _ in range(100):
        ok = [ok]
    out = ident(ok)
    for _ in range(100):
        out = out[0]
    assert out == 2
