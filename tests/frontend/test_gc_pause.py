"""The garbage collector is paused while xlapy traces and compiles (gc_pause.py), and left
as the caller had it."""

import gc
import threading

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import gc_pause
from xlapy.backends.cpu.compiler import CpuCompiler


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_tracing_and_compiling_run_with_the_collector_paused(monkeypatch):
    seen = []
    real = CpuCompiler._compile

    def spy(self, *a, **k):
        seen.append(gc.isenabled())
        return real(self, *a, **k)

    monkeypatch.setattr(CpuCompiler, "_compile", spy)
    xp.clear_caches()
    traced = []

    def f(x):
        traced.append(gc.isenabled())
        return xnp.sin(x) * 2

    np.testing.assert_allclose(xp.jit(f)(np.ones(3, np.float32)), np.sin(1.0) * 2, rtol=1e-6)
    assert seen == [False] and traced == [False]
    assert gc.isenabled()


def test_the_callers_choice_is_kept_and_errors_restore_it():
    gc.disable()
    with gc_pause.gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()          # it was off: still off
    gc.enable()
    with pytest.raises(ValueError):
        with gc_pause.gc_paused():
            raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_end_with_the_last():
    entered, release = threading.Event(), threading.Event()

    def other():
        with gc_pause.gc_paused():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=other)
    with gc_pause.gc_paused():
        t.start()
        assert entered.wait(10)
    assert not gc.isenabled()          # the other thread's pause is still on
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_switched_off_leaves_the_collector_alone(monkeypatch):
    monkeypatch.setattr(gc_pause, "ENABLED", False)
    with gc_pause.gc_paused():
        assert gc.isenabled()
