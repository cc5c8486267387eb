"""XLAPY_GUARD_PAGES=1 (runtime/guard_pages.py): every buffer a compiled program is handed
ends at an inaccessible page. The guard itself (an access one byte past an array's end or
before its start stops the process) and programs giving the same results with it on:
arguments of several layouts, donated arguments, tuples, a scratch arena."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu.runtime import guard_pages


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 5), (1024,), (4096,), (7, 1000)])
def test_guarded_arrays_end_at_the_page(shape, dtype):
    a = guard_pages.empty(shape, dtype, at_end=True)
    b = guard_pages.empty(shape, dtype, at_end=False)
    assert a.shape == b.shape == shape and a.dtype == b.dtype == dtype
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    assert (a.ctypes.data + a.nbytes) % guard_pages.PAGE == 0
    assert b.ctypes.data % guard_pages.PAGE == 0
    a[...] = 7
    b[...] = 7
    assert (a == 7).all() and (b == 7).all()
    c = guard_pages.copy(np.arange(a.size).reshape(shape).astype(dtype).T)
    np.testing.assert_array_equal(c, np.arange(a.size).reshape(shape).astype(dtype).T)


@pytest.mark.parametrize("where", ["past-end", "before-start"])
def test_an_access_outside_a_guarded_array_stops_the_process(where):
    code = textwrap.dedent(f"""
        import ctypes
        from xlapy.backends.cpu.runtime import guard_pages
        at_end = {where == "past-end"!r}
        a = guard_pages.empty((10,), "float32", at_end=at_end)
        inside = a.ctypes.data + (a.nbytes - 1 if at_end else 0)
        ctypes.string_at(inside, 1)  # the last (first) byte: fine
        print("inside ok", flush=True)
        ctypes.string_at(inside + (1 if at_end else -1), 1)
        print("not stopped", flush=True)
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert "inside ok" in r.stdout and "not stopped" not in r.stdout
    assert r.returncode < 0, r   # killed by a signal (SIGSEGV), not an exception's exit


@pytest.fixture
def guarded(monkeypatch):
    monkeypatch.setenv("XLAPY_GUARD_PAGES", "1")
    assert guard_pages.enabled()


def _programs():
    def softmax(x):
        e = xnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def mixed(x, y):
        z = xnp.concatenate([x, y * 2.0], axis=1)
        return z.sum(axis=0), (x @ y.T)[:, :3], xnp.sort(z, axis=1)

    return [
        (softmax, [np.random.default_rng(0).standard_normal((37, 129)).astype(np.float32)]),
        (mixed, [np.random.default_rng(1).standard_normal((9, 11)),
                 np.random.default_rng(2).standard_normal((9, 11))]),
        (lambda v: xnp.cumsum(v)[::-1] + v[0], [np.arange(1023, dtype=np.int32)]),
    ]


@pytest.mark.parametrize("k", range(3))
def test_programs_give_the_same_results_guarded(guarded, k):
    fn, args = _programs()[k]
    want = xp.jit(fn, backend="interpreter")(*args)
    compiled = xp.jit(fn).lower(*args).compile()
    assert compiled.executable._guarded  # (also when the same program ran unguarded before)
    got = compiled(*args)
    for w, g in zip(np.atleast_1d(want) if not isinstance(want, tuple) else want,
                    np.atleast_1d(got) if not isinstance(got, tuple) else got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_guarded_runs_take_transposed_and_donated_arguments(guarded):
    x = np.arange(12.0).reshape(3, 4)
    f = xp.jit(lambda a, b: (a.T @ b, a + 1.0), donate_argnums=(0,))
    xt = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert f.lower(x, xt).compile().executable._guarded
    got = f(x.copy(), xt)
    np.testing.assert_allclose(np.asarray(got[0]), x.T @ xt)
    np.testing.assert_allclose(np.asarray(got[1]), x + 1.0)


def test_the_start_mode_places_buffers_after_the_first_guard(monkeypatch):
    monkeypatch.setenv("XLAPY_GUARD_PAGES", "start")
    assert guard_pages.enabled()
    assert guard_pages.empty((3, 5), np.float32).ctypes.data % guard_pages.PAGE == 0
    monkeypatch.setenv("XLAPY_GUARD_PAGES", "1")
    a = guard_pages.empty((3, 5), np.float32)
    assert (a.ctypes.data + a.nbytes) % guard_pages.PAGE == 0


def test_guard_pages_are_off_by_default(monkeypatch):
    monkeypatch.delenv("XLAPY_GUARD_PAGES", raising=False)
    assert not guard_pages.enabled()
    for off in ("0", "", "false", "no"):
        monkeypatch.setenv("XLAPY_GUARD_PAGES", off)
        assert not guard_pages.enabled()


def test_guard_page_allocation_failure_is_reported(monkeypatch):
    monkeypatch.setattr(guard_pages, "_mprotect",
                        lambda *a: (ctypes.set_errno(12), -1)[1])
    with pytest.raises(OSError, match="XLAPY_GUARD_PAGES"):
        guard_pages.empty((4,), np.float32)
