"""JAX's small top-level helpers against jax itself: flatten_util.ravel_pytree,
device_get, disable_jit (and the jax_disable_jit option), named_scope / named_call,
ensure_compile_time_eval, experimental.enable_x64 / disable_x64, print_environment_info,
default_device, and xlapy.dtypes (JAX's promotion lattice, issubdtype with bfloat16)."""

from __future__ import annotations

import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree as jax_ravel

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import ShapeError, XlapyError
from xlapy.flatten_util import ravel_pytree

TREES = [
    {"a": np.arange(2, dtype=np.int32), "b": (np.ones((2, 3), np.float32),)},
    [np.ones(2, np.float16), np.ones(1, np.float32), 3.0],
    [np.ones(2, np.int32), np.array([1, 0], np.bool_)],
    {"w": np.ones(3, jnp.bfloat16), "n": None, "i": np.arange(2, dtype=np.int8)},
    [],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_ravel_pytree_matches_jax(tree):
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax_ravel(tree)
    assert flat.dtype == jflat.dtype and flat.shape == jflat.shape
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back, jback = unravel(flat), junravel(jflat)
    leaves, jleaves = xp.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback)
    assert xp.tree_util.tree_structure(back) == xp.tree_util.tree_structure(tree)
    for a, b in zip(leaves, jleaves):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_ravel_pytree_under_jit_grad_vmap():
    params = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(2, np.float32)}
    flat, unravel = ravel_pytree(params)
    jflat, junravel = jax_ravel(params)

    def loss(unr, p, N):
        return N.sum(N.tanh(p["w"]) ** 2) + N.sum(p["b"] * 3.0)

    g = xp.jit(xp.grad(lambda v: loss(unravel, unravel(v), xnp)))(flat)
    jg = jax.jit(jax.grad(lambda v: loss(junravel, junravel(v), jnp)))(jflat)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-5, atol=1e-5)
    # ravel inside a traced function, and under vmap
    out = xp.jit(lambda t: ravel_pytree(t)[0])(params)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jflat))
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    v = xp.vmap(lambda x: ravel_pytree((x, 2 * x))[0])(xs)
    jv = jax.vmap(lambda x: jax_ravel((x, 2 * x))[0])(xs)
    np.testing.assert_array_equal(np.asarray(v), np.asarray(jv))


def test_unravel_rejects_wrong_size_and_dtype():
    _, unravel = ravel_pytree([np.ones(2, np.float32), np.ones(3, np.float32)])
    with pytest.raises(ShapeError, match=r"shape \(5,\), got shape \(4,\)"):
        unravel(np.ones(4, np.float32))
    with pytest.raises(XlapyError, match="dtype int32, but expected dtype float32"):
        unravel(np.ones(5, np.int32))


def test_device_get():
    tree = {"a": xp.jit(lambda x: x + 1)(np.ones(2, np.float32)), "b": 1.5, "c": "s"}
    got, want = xp.device_get(tree), jax.device_get({"a": jnp.ones(2) + 1, "b": 1.5, "c": "s"})
    assert type(got["a"]) is np.ndarray and got["b"] == want["b"] and got["c"] == "s"
    np.testing.assert_array_equal(got["a"], want["a"])
    with pytest.raises(XlapyError, match="traced value"):
        xp.jit(lambda x: xp.device_get(x))(np.ones(2))


def test_disable_jit_runs_python_eagerly():
    seen = []

    @xp.jit
    def f(x):
        seen.append(type(x))
        return x * 2

    x = np.ones(2, np.float32)
    with xp.disable_jit():
        np.testing.assert_array_equal(np.asarray(f(x)), [2, 2])
        f(x)
    assert all(not isinstance(t, type) or not issubclass(t, xp.frontend.core.Tracer)
               for t in seen) and len(seen) == 2
    f(x)
    f(x)  # compiled once, then cached: traced one more time only
    assert len(seen) == 3 and issubclass(seen[-1], xp.frontend.core.Tracer)
    xp.config.update("jax_disable_jit", True)
    try:
        assert xp.config.jax_disable_jit
        f(x)
        assert len(seen) == 4 and not issubclass(seen[-1], xp.frontend.core.Tracer)
    finally:
        xp.config.update("jax_disable_jit", False)
    assert not xp.config.jax_disable_jit


def test_named_scope_and_named_call():
    def make(lib, N):
        def f(x):
            with lib.named_scope("layer1"):
                return N.sin(x) * 2
        return lib.jit(lib.named_call(f, name="outer"))

    x = np.linspace(0, 1, 4, dtype=np.float32)
    g = make(xp, xnp)
    np.testing.assert_allclose(np.asarray(g(x)), np.asarray(make(jax, jnp)(x)), rtol=1e-6)
    assert g.__name__ == "f"
    with pytest.raises(XlapyError, match="must be a string"):
        with xp.named_scope(3):
            pass
    with pytest.raises(XlapyError, match="expects a function"):
        xp.named_call(3)


def test_ensure_compile_time_eval():
    def f(x):
        with xp.ensure_compile_time_eval():
            c = xnp.sin(np.ones(3, np.float32))
            assert not isinstance(c, xp.frontend.core.Tracer)
            y = x + 1  # traced operands stay traced
            assert isinstance(y, xp.frontend.core.Tracer)
        return y + c

    text = str(xp.make_jaxpr(f)(np.ones(3, np.float32)))
    assert "sin" not in text
    np.testing.assert_allclose(np.asarray(xp.jit(f)(np.ones(3, np.float32))),
                               2 + np.sin(np.ones(3, np.float32)), rtol=1e-6)


def test_experimental_x64_blocks():
    from xlapy.experimental import disable_x64, enable_x64
    with enable_x64():
        assert xnp.ones(2).dtype == np.float64
        with disable_x64():
            assert xnp.ones(2).dtype == np.float32
    assert xnp.ones(2).dtype == jnp.ones(2).dtype


def test_environment_info_and_default_device(capsys):
    text = xp.print_environment_info(return_string=True)
    assert "xlapy" in text and np.__version__ in text
    xp.print_environment_info()
    assert capsys.readouterr().out == text
    with xp.default_device(xp.devices()[0]):
        assert np.asarray(xp.jit(lambda v: v + 1)(np.ones(1)))[0] == 2
    with pytest.raises(XlapyError, match="only the host CPU"):
        with xp.default_device("gpu:0"):
            pass


_DTYPES = [np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32,
           np.int64, jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64,
           np.complex128, 1, 1.0, 1j, True]


@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_result_type_is_jax_lattice(x64):
    with xp.enable_x64(x64), jax.enable_x64(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in itertools.product(_DTYPES, _DTYPES):
            got = xp.dtypes.result_type(a, b, return_weak_type_flag=True)
            assert got == jax.dtypes.result_type(a, b, return_weak_type_flag=True), (a, b)
        assert xp.dtypes.canonicalize_dtype(np.float64) == \
            jax.dtypes.canonicalize_dtype(np.float64)


def test_dtypes_issubdtype_and_bfloat16():
    assert np.dtype(xp.dtypes.bfloat16) == np.dtype(jax.dtypes.bfloat16)
    for a in _DTYPES[:15]:
        for b in (np.floating, np.inexact, np.integer, np.number, np.float32, jnp.bfloat16,
                  np.signedinteger, np.complexfloating):
            assert xp.dtypes.issubdtype(a, b) == jax.dtypes.issubdtype(a, b), (a, b)
    with pytest.raises(TypeError, match="None is not a dtype"):
        xp.dtypes.result_type(None)
