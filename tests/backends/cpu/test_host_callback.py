"""The cpu backend's host callbacks (emitters/host_callback.py, runtime/host_callback.py):
calls into Python from compiled code, from several threads at once, errors reported after
the run, and refused in ahead-of-time objects."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import xlapy as xp
import xlapy.aot as aot
from xlapy import lax
from xlapy.errors import LoweringError, XlapyError


def _host(x, k):
    if k < 0:
        raise RuntimeError(f"negative k {k}")
    return x * k + 1


def _program():
    def f(x, k):
        y = xp.pure_callback(_host, xp.ShapeDtypeStruct(x.shape, x.dtype), x, k)
        z = lax.fori_loop(0, 3, lambda i, c: c + xp.pure_callback(
            _host, xp.ShapeDtypeStruct(x.shape, x.dtype), c, k), y)
        return z.sum()
    return xp.jit(f)


def _expect(x, k):
    y = x * k + 1
    for _ in range(3):
        y = y + (y * k + 1)
    return y.sum()


def test_callbacks_from_four_threads_at_once():
    f = _program()
    x = np.arange(64, dtype=np.float32) / 64
    f(x, np.float32(1))  # compiled once
    results, errors = {}, {}

    def work(t):
        try:
            for r in range(20):
                k = np.float32(-1 if (t == 3 and r % 5 == 4) else t + 1)
                try:
                    results[(t, r)] = (float(f(x, k)), k)
                except XlapyError as e:
                    errors[(t, r)] = str(e)
        except BaseException as e:  # pragma: no cover - reported by the assertion below
            errors[(t, "thread")] = repr(e)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads)
    assert sorted(errors) == [(3, 4), (3, 9), (3, 14), (3, 19)]
    assert all("pure_callback(_host) raised RuntimeError: negative k -1.0" in e
               for e in errors.values())
    assert len(results) == 76
    for (_t, _r), (got, k) in results.items():
        np.testing.assert_allclose(got, _expect(x.astype(np.float64), float(k)), rtol=1e-5)


def test_a_failing_callback_skips_the_rest_of_its_run(capsys):
    def bad(v):
        raise KeyError("boom")

    def f(x):
        xp.debug.print("before {}", x)
        xp.debug.callback(bad, x)
        xp.debug.print("after {}", x)
        return x
    with pytest.raises(XlapyError, match=r"debug.callback\(bad\) raised KeyError: 'boom'"):
        xp.jit(f)(np.float32(1))
    assert capsys.readouterr().out.splitlines() == ["before 1.0"]


def test_operands_in_other_layouts_arrive_row_major():
    seen = []

    def f(x):
        y = x.T * 2  # (a transpose the layout pass may turn into a layout change)
        xp.debug.callback(lambda v: seen.append(v), y)
        return y
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = xp.jit(f)(x)
    np.testing.assert_array_equal(seen[0], x.T * 2)
    np.testing.assert_array_equal(np.asarray(out), x.T * 2)


def test_ahead_of_time_objects_refuse_host_callbacks():
    text = xp.jit(lambda x: xp.pure_callback(np.cos, xp.ShapeDtypeStruct((3,), np.float32),
                                             x)).lower(np.ones(3, np.float32)).as_text()
    with pytest.raises(LoweringError, match="host callback .* ahead-of-time objects cannot "
                                            "hold one"):
        aot.compile(text)


def test_disk_cache_entries_look_the_id_up_when_they_run(tmp_path, monkeypatch):
    """The object code keeps only the id: a cached entry served where the id names another
    function (as in another process) calls that one, which is what that HLO means."""
    from xlapy.backends.cpu.compiler import CpuCompiler
    from xlapy.hlo import host_callbacks, parse
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("XLAPY_FLAGS", raising=False)
    spec = [((4,), np.float32)]
    k = host_callbacks.register(lambda v: [v + 100], spec, spec, "plus", effect=False)
    text = ("HloModule cb\nENTRY e {\n  p = f32[4] parameter(0)\n"
            "  c = (f32[4]) custom-call(p), custom_call_target=\"xlapy_host_callback\", "
            f"backend_config=\"{{\\\"callback_id\\\": {k}}}\"\n"
            "  ROOT g = f32[4] get-tuple-element(c), index=0\n}\n")
    x = np.arange(4, dtype=np.float32)
    first = CpuCompiler()
    np.testing.assert_array_equal(first.compile(parse(text)).run(x), x + 100)
    assert first.stats["compiles"] == 1
    other = host_callbacks.HostCallback(lambda v: [v * 1000], *[tuple(
        (d, np.dtype(t)) for d, t in spec)] * 2, "times", False)
    mine, host_callbacks._by_id[k] = host_callbacks._by_id[k], other
    try:
        second = CpuCompiler()
        np.testing.assert_array_equal(second.compile(parse(text)).run(x), x * 1000)
    finally:
        host_callbacks._by_id[k] = mine
    assert second.stats["disk_hits"] == 1 and second.stats["compiles"] == 0


def test_a_callback_may_run_compiled_programs_even_its_own():
    inner = xp.jit(lambda v: v * 3 + 1)
    f = xp.jit(lambda x: xp.pure_callback(lambda v: np.asarray(inner(v)),
                                          xp.ShapeDtypeStruct(x.shape, x.dtype), x) * 2)
    g = xp.jit(lambda x: xp.pure_callback(lambda v: np.asarray(f(v)),
                                          xp.ShapeDtypeStruct(x.shape, x.dtype), x) + 1)
    x = np.ones(5, np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), 8.0)
    np.testing.assert_array_equal(np.asarray(g(x)), 9.0)
    # a program whose callback runs the program itself (its executable is busy: the inner
    # runs take fresh arenas)
    def host(v):
        return v if v[0] <= 0 else np.asarray(k(v - 1)) + 1
    k = xp.jit(lambda x: xp.pure_callback(host, xp.ShapeDtypeStruct(x.shape, x.dtype), x))
    np.testing.assert_array_equal(np.asarray(k(np.full(4, 3.0, np.float32))), 3.0)
