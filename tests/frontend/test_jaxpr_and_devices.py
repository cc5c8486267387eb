"""make_jaxpr, eval_shape, ShapeDtypeStruct, device_put, block_until_ready, devices,
default_backend and Array, against JAX where JAX defines the answer."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import XlapyError


def test_make_jaxpr_prints_like_jax():
    closed = xp.make_jaxpr(lambda x, y: xnp.sin(x) * y + 1.0)(np.float32(1.0),
                                                             np.ones(3, np.float32))
    assert str(closed) == (
        "{ lambda ; a:f32[] b:f32[3]. let\n"
        "    c:f32[] = sin a\n"
        "    d:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] c\n"
        "    e:f32[3] = mul d b\n"
        "    f:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 1.0:f32[]\n"
        "    g:f32[3] = add e f\n"
        "  in (g,) }")
    # the same variables, types and order of primitives as JAX's jaxpr (JAX broadcasts
    # inside mul; xlapy's strict primitives make the broadcast explicit)
    jtext = str(jax.make_jaxpr(lambda x, y: jnp.sin(x) * y + 1.0)(np.float32(1.0),
                                                                 np.ones(3, np.float32)))
    assert jtext.startswith("{ lambda ; a:f32[] b:f32[3]. let\n    c:f32[] = sin a")
    assert len(closed.eqns) == 5 and closed.in_avals[1].shape == (3,)
    assert [str(a) for a in closed.out_avals] == ["f32[3]"]


def test_make_jaxpr_constants_static_args_pytrees_and_shapes():
    c = xp.make_jaxpr(lambda x: x + np.arange(3.0, dtype=np.float32))(np.ones(3, np.float32))
    assert str(c).startswith("{ lambda a:f32[3]; b:f32[3]. let")
    np.testing.assert_array_equal(c.consts[0], [0, 1, 2])
    c = xp.make_jaxpr(lambda x, n: x * n, static_argnums=1)(1.0, 3)
    assert "mul a 3:i32[]" in str(c) or "mul a 3.0:f32[]" in str(c)
    closed, shapes = xp.make_jaxpr(lambda p: {"s": p["w"].sum(), "t": p["b"]},
                                   return_shape=True)({"w": np.ones((2, 2), np.float32),
                                                       "b": np.int32(1)})
    assert shapes == {"s": xp.ShapeDtypeStruct((), np.float32),
                      "t": xp.ShapeDtypeStruct((), np.int32)}
    assert [str(a) for a in closed.in_avals] == ["s32[]", "f32[2,2]"]


def test_make_jaxpr_nests_control_flow_and_names_variables_in_order():
    text = str(xp.make_jaxpr(lambda x: xlax.cond(x > 0, lambda v: v * 2, lambda v: -v, x))(
        np.float32(1.0)))
    assert "cond[" in text and "branches=(" in text
    assert "{ lambda ; d:f32[]. let" in text and "e:f32[] = neg d" in text
    many = str(xp.make_jaxpr(lambda x: sum(x * i for i in range(20)))(np.float32(1.0)))
    assert " ba:f32[]" in many and " z:f32[]" in many


def test_make_jaxpr_is_64_bit_canonicalized():
    text = str(xp.make_jaxpr(lambda x: x * 2)(np.ones(2)))
    assert text.startswith("{ lambda ; a:f32[2]")
    with xp.enable_x64():
        assert str(xp.make_jaxpr(lambda x: x * 2)(np.ones(2))).startswith(
            "{ lambda ; a:f64[2]")


def test_eval_shape_matches_jax():
    def f(x, p):
        return {"a": x.sum(0), "b": x[None] @ p["w"], "c": (x > 0).astype(np.int32)}
    args = (xp.ShapeDtypeStruct((2, 3), np.float32),
            {"w": xp.ShapeDtypeStruct((3, 4), np.float32)})
    jargs = (jax.ShapeDtypeStruct((2, 3), jnp.float32),
             {"w": jax.ShapeDtypeStruct((3, 4), jnp.float32)})
    got = xp.eval_shape(f, *args)
    want = jax.eval_shape(f, *jargs)
    for k in want:
        assert got[k].shape == want[k].shape and got[k].dtype == want[k].dtype
    assert repr(got["a"]) == repr(want["a"]) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    # arrays work too and nothing is computed
    calls = []
    xp.eval_shape(lambda x: calls.append(1) or x * 2, np.ones(4, np.float32))
    assert calls == [1]  # traced once, abstractly
    assert xp.eval_shape(lambda x: x, 1.0) == xp.ShapeDtypeStruct((), np.float32,
                                                                 weak_type=True)


def test_shape_dtype_struct():
    s = xp.ShapeDtypeStruct((2, 3), np.float32)
    j = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert (s.shape, s.dtype, s.ndim, s.size, len(s)) == (j.shape, j.dtype, j.ndim, j.size, 2)
    assert s == xp.ShapeDtypeStruct([2, 3], "float32") and hash(s) == hash(
        xp.ShapeDtypeStruct((2, 3), np.float32))
    assert s != xp.ShapeDtypeStruct((2, 3), np.int32)


def test_devices_and_backend_like_jax_on_cpu():
    assert [repr(d) for d in xp.devices()] == [repr(d) for d in jax.devices()] == \
        ["CpuDevice(id=0)"]
    d = xp.devices()[0]
    assert (d.platform, d.id, d.process_index) == ("cpu", 0, 0)
    assert xp.local_devices() == xp.devices() and xp.device_count() == 1
    assert xp.local_device_count() == 1 and xp.process_index() == 0
    assert xp.default_backend() == jax.default_backend() == "cpu"
    assert xp.devices("interpreter") == xp.devices()
    with pytest.raises(XlapyError, match="unknown backend 'tpu'"):
        xp.devices("tpu")  # (devices("gpu"): tests/backends/gpu)


def test_device_put_and_block_until_ready():
    tree = {"a": np.ones(2), "b": [1, 2.5], "c": np.int8(3)}
    put = xp.device_put(tree, xp.devices()[0])
    want = jax.device_put(tree)
    for k in ("a", "c"):
        assert put[k].dtype == want[k].dtype and isinstance(put[k], xp.Array)
    assert [p.dtype for p in put["b"]] == [w.dtype for w in want["b"]]
    x = np.ones(3, np.float32)
    put_x = xp.device_put(x)  # already canonical: a view (no copy) with the Array methods
    assert np.shares_memory(put_x, x) and put_x.block_until_ready() is put_x
    assert xp.block_until_ready(tree) is tree
    out = xp.jit(lambda x: x * 2)(x)
    assert xp.block_until_ready(out) is out
    with pytest.raises(XlapyError, match="host CPU"):
        xp.device_put(x, "gpu:0")


def test_array_isinstance():
    out = xp.jit(lambda x: x + 1)(np.ones(2, np.float32))
    assert isinstance(out, xp.Array) and isinstance(xnp.zeros(3), xp.Array)
    seen = []
    xp.jit(lambda x: seen.append(isinstance(x, xp.Array)) or x)(np.ones(2))
    xp.grad(lambda x: seen.append(isinstance(x, xp.Array)) or x)(1.0)
    assert seen == [True, True]
    assert not isinstance([1, 2], xp.Array) and not isinstance(1.0, xp.Array)
