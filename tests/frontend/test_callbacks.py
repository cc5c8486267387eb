"""Host callbacks: xlapy.debug.print, xlapy.debug.callback, xlapy.pure_callback (as JAX's),
eagerly, under jit on the cpu and on the interpreter, inside loops, and under vmap/grad."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import XlapyError

BACKENDS = ["eager", "cpu", "interpreter"]


def _run(fn, backend):
    if backend == "eager":
        return fn
    return xp.jit(fn, backend=backend)


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_order_and_values(backend, capsys):
    def f(x, y):
        xp.debug.print("first x={}", x)
        z = x * 2.0 + y
        xp.debug.print("then z={z} y={y}", y=y, z=z)
        xp.debug.print("pair {} {}", (x[0], y), x[1])
        return z
    x = np.array([1.0, 2.0], np.float32)
    out = _run(f, backend)(x, np.float32(0.5))
    np.testing.assert_allclose(np.asarray(out), [2.5, 4.5])
    # a tuple formats with the reprs of its members (NumPy arrays here)
    pair = f"pair ({np.array(1.0, np.float32)!r}, {np.array(0.5, np.float32)!r}) 2.0"
    assert _lines(capsys) == ["first x=[1. 2.]", "then z=[2.5 4.5] y=0.5", pair]


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_python_scalars_and_no_arguments(backend, capsys):
    def f(x):
        xp.debug.print("hello")
        xp.debug.print("lit {} {} {}", 3, 2.5, True)
        return x
    _run(f, backend)(np.float32(1))
    assert _lines(capsys) == ["hello", "lit 3 2.5 True"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_cond_branches(backend, capsys):
    def f(x):
        return lax.cond(x > 0, lambda v: (xp.debug.print("pos {}", v), v)[1],
                        lambda v: (xp.debug.print("neg {}", v), -v)[1], x)
    g = _run(f, backend)
    assert float(g(np.float32(2))) == 2.0 and float(g(np.float32(-1))) == 1.0
    assert _lines(capsys) == ["pos 2.0", "neg -1.0"]


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_print_every_iteration_of_scan_and_while(backend, capsys):
    def f(x):
        def body(c, i):
            xp.debug.print("scan {} {}", i, c)
            return c + i, c

        c, _ = lax.scan(body, x, xnp.arange(3))

        def cond(s):
            return s[0] < 2

        def wbody(s):
            xp.debug.print("while {}", s[0])
            return s[0] + 1, s[1] * 2
        _, w = lax.while_loop(cond, wbody, (0, c))
        return w
    out = _run(f, backend)(np.int32(10))
    assert int(out) == 52
    assert _lines(capsys) == ["scan 0 10", "scan 1 10", "scan 2 11", "while 0", "while 1"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_pure_callback_results_feed_later_computation(backend):
    def host(a, b):
        return np.sort(a)[::-1].copy(), (a * b).sum(dtype=a.dtype)

    def f(a, b):
        spec = (xp.ShapeDtypeStruct(a.shape, a.dtype), xp.ShapeDtypeStruct((), a.dtype))
        s, dot = xp.pure_callback(host, spec, a, b)
        return s[0] + dot, s
    a = np.array([3.0, 1.0, 2.0], np.float32)
    b = np.array([1.0, 2.0, 3.0], np.float32)
    top, s = _run(f, backend)(a, b)
    assert float(top) == 3.0 + 11.0
    np.testing.assert_array_equal(np.asarray(s), [3.0, 2.0, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_callback_sees_runtime_values_and_can_keep_them(backend):
    seen = []

    def f(x):
        xp.debug.callback(lambda v, k: seen.append((v, k)), x, k=x.sum())
        y = x + 1
        xp.debug.callback(lambda v, k: seen.append((v, k)), y, k=y.sum())
        return y
    _run(f, backend)(np.arange(4, dtype=np.float32))
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0][0], [0, 1, 2, 3])
    np.testing.assert_array_equal(seen[1][0], [1, 2, 3, 4])
    assert float(seen[0][1]) == 6.0 and float(seen[1][1]) == 10.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_callback_exception_is_an_xlapy_error_naming_it(backend):
    def bad(x):
        raise ValueError("no thanks")

    def f(x):
        return xp.pure_callback(bad, xp.ShapeDtypeStruct(x.shape, x.dtype), x) + 1
    with pytest.raises(XlapyError, match=r"pure_callback\(bad\) raised ValueError: no thanks"):
        np.asarray(_run(f, backend)(np.ones(3, np.float32)))

    def g(x):
        xp.debug.callback(bad, x)
        return x
    with pytest.raises(XlapyError, match=r"debug.callback\(bad\) raised ValueError"):
        _run(g, backend)(np.ones(3, np.float32))
    # the program still works afterwards
    np.testing.assert_array_equal(np.asarray(_run(lambda x: x * 2, backend)(np.ones(2))), [2, 2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_result_shape_or_dtype_is_reported(backend):
    def f(x):
        return xp.pure_callback(lambda v: np.zeros(4, np.float32),
                                xp.ShapeDtypeStruct((3,), np.float32), x)
    with pytest.raises(XlapyError, match=r"pure_callback\(<lambda>\): result 0 is "
                                         r"float32\[4\], but the declared result is float32\[3\]"):
        np.asarray(_run(f, backend)(np.ones(3, np.float32)))

    def g(x):
        return xp.pure_callback(lambda v: v.astype(np.int32),
                                xp.ShapeDtypeStruct((3,), np.float32), x)
    with pytest.raises(XlapyError, match=r"result 0 is int32\[3\]"):
        np.asarray(_run(g, backend)(np.ones(3, np.float32)))


def test_dce_keeps_debug_print_and_drops_an_unused_pure_callback(capsys):
    calls = []

    def host(v):
        calls.append(1)
        return v

    def f(x):
        xp.debug.print("kept {}", x)
        xp.pure_callback(host, xp.ShapeDtypeStruct(x.shape, x.dtype), x)  # unused
        return x + 1
    jf = xp.jit(f)
    jf(np.float32(1.0))
    jf(np.float32(2.0))
    assert _lines(capsys) == ["kept 1.0", "kept 2.0"]
    assert calls == []
    hlo = jf.lower(np.float32(1.0)).compile().as_text()
    assert hlo.count("xlapy_host_callback") == 1
    assert "custom_call_has_side_effect=true" in hlo


def test_jit_retrace_reuses_the_callback_id():
    def f(x):
        xp.debug.print("v {}", x)
        return x
    a = xp.jit(f).lower(np.float32(1)).as_text()
    b = xp.jit(f).lower(np.float32(1)).as_text()
    assert a == b and "xlapy_host_callback" in a


def test_grad_prints_primal_values_and_jvp_too(capsys):
    def f(x):
        xp.debug.print("x={}", x)
        return x * x
    assert float(xp.grad(f)(3.0)) == 6.0
    assert float(xp.jit(xp.grad(f))(4.0)) == 8.0
    _, t = xp.jvp(f, (2.0,), (1.0,))
    assert float(t) == 4.0
    assert _lines(capsys) == ["x=3.0", "x=4.0", "x=2.0"]


def test_pure_callback_has_no_derivative():
    def f(x):
        return xp.pure_callback(np.sin, xp.ShapeDtypeStruct((), np.float32), x)
    with pytest.raises(XlapyError, match=r"pure_callback\(sin\) cannot be differentiated"):
        xp.grad(f)(1.0)
    with pytest.raises(XlapyError, match="cannot be differentiated"):
        xp.jvp(f, (1.0,), (1.0,))
    # with a custom_jvp it can
    g = xp.custom_jvp(f)
    g.defjvp(lambda p, t: (f(p[0]), xnp.cos(p[0]) * t[0]))
    np.testing.assert_allclose(float(xp.grad(g)(1.0)), np.cos(1.0), rtol=1e-6)


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_vmap_debug_print_calls_once_per_member(backend, capsys):
    def f(x, c):
        xp.debug.print("x={} c={}", x, c)
        return x * c
    out = _run(xp.vmap(f, in_axes=(0, None)), backend)(np.arange(3, dtype=np.float32),
                                                        np.float32(2))
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    assert _lines(capsys) == ["x=0.0 c=2.0", "x=1.0 c=2.0", "x=2.0 c=2.0"]


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_vmap_pure_callback_methods(method, backend):
    shapes = []

    def host(x, c):
        shapes.append((x.shape, c.shape))
        return x * c + 1

    def f(x, c):
        return xp.pure_callback(host, xp.ShapeDtypeStruct(x.shape, x.dtype), x, c,
                                vmap_method=method)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    c = np.array([1, 2], np.float32)
    out = _run(xp.vmap(f, in_axes=(0, None)), backend)(x, c)
    np.testing.assert_array_equal(np.asarray(out), x * c + 1)
    expect = {"sequential": [((2,), (2,))] * 3, "expand_dims": [((3, 2), (1, 2))],
              "broadcast_all": [((3, 2), (3, 2))]}[method]
    assert shapes == expect


def test_vmap_pure_callback_without_method_is_an_error():
    def f(x):
        return xp.pure_callback(np.sin, xp.ShapeDtypeStruct((), np.float32), x)
    with pytest.raises(XlapyError, match="with vmap_method=None it cannot be batched"):
        xp.vmap(f)(np.ones(3, np.float32))
    with pytest.raises(XlapyError, match="vmap_method must be one of"):
        xp.pure_callback(np.sin, xp.ShapeDtypeStruct((), np.float32), 1.0, vmap_method="x")


def test_reachable_as_jax_names():
    import xlapy as jax
    assert jax.debug.print is xp.debug.print and callable(jax.debug.callback)
    assert callable(jax.pure_callback)


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_identical_prints_are_not_merged(backend, capsys):
    def f(x):
        for _ in range(3):
            xp.debug.print("same {}", x)
        return x
    _run(f, backend)(np.float32(7))
    assert _lines(capsys) == ["same 7.0"] * 3
