"""The dedicated emitters are imported when a program first needs one (emitters/registry.py:
PROVIDERS, CALL_TARGET_PROVIDERS), and a compilation runs with Python's cyclic garbage
collector paused (gc_control.collector_paused)."""

from __future__ import annotations

import gc
import json
import pathlib
import subprocess
import sys
import threading

import numpy as np

from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.gc_control import collector_paused
from xlapy.backends.cpu.emitters import registry
from xlapy.hlo import parse

ROOT = pathlib.Path(__file__).resolve().parents[3]
PACKAGE = "xlapy.backends.cpu.emitters"


def test_every_registered_emitter_is_where_the_tables_say():
    registry.load_all()
    assert registry.CUSTOM_EMITTERS and registry.CUSTOM_CALL_TARGETS
    for opcode, fn in registry.CUSTOM_EMITTERS.items():
        if fn.__module__ == registry.__name__:  # (custom-call: the registry's own)
            continue
        assert opcode in registry.PROVIDERS, f"{opcode}: not in registry.PROVIDERS"
        assert fn.__module__ == f"{PACKAGE}.{registry.PROVIDERS[opcode]}", opcode
    for target, fn in registry.CUSTOM_CALL_TARGETS.items():
        module = fn.__module__.rsplit(".", 1)[1]
        assert module in registry.CALL_TARGET_MODULES, target
        if target in registry.CALL_TARGET_PROVIDERS:
            assert registry.CALL_TARGET_PROVIDERS[target] == module, target
    for name in set(registry.PROVIDERS.values()) | set(registry.CALL_TARGET_MODULES):
        assert (ROOT / "xlapy" / "backends" / "cpu" / "emitters" / f"{name}.py").exists()
    assert registry.emitter_for("add") is None  # (the loop kernel's)
    assert registry.call_target_emitter("no such target") is None


CHILD = r"""
import json, sys
import numpy as np
from xlapy.backends.base import get_platform
from xlapy.hlo import parse
comp = get_platform("cpu").compiler
prefixes = ("xlapy.backends.cpu.emitters.", "xlapy.backends.cpu.passes.")
def loaded():
    return sorted(m for m in sys.modules if m.startswith(prefixes))
x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
dot = comp.compile(parse(sys.argv[1])).run(x, x)
after_dot = loaded()
w = np.linspace(-1, 1, 9, dtype=np.float32).reshape(1, 1, 3, 3)
img = np.linspace(0, 1, 64, dtype=np.float32).reshape(1, 1, 8, 8)
conv = comp.compile(parse(sys.argv[2])).run(img, w)
print(json.dumps({"after_dot": after_dot, "after_conv": loaded(),
                  "dot": np.asarray(dot).tolist(), "conv": np.asarray(conv).tolist()}))
"""

DOT = """HloModule lazy_dot
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[8,8] add(d, a)
}
"""

CONV = """HloModule lazy_conv
ENTRY e {
  x = f32[1,1,8,8] parameter(0)
  w = f32[1,1,3,3] parameter(1)
  ROOT c = f32[1,1,6,6] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01
}
"""


def test_a_program_without_convolutions_loads_no_convolution_emitters(tmp_path):
    env = {"XLAPY_CACHE_DIR": str(tmp_path / "programs"),
           "XLAPY_RUNTIME_CACHE_DIR": str(tmp_path / "runtime"),
           "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, DOT, CONV], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    first = set(r["after_dot"])
    assert f"{PACKAGE}.gemm" in first and f"{PACKAGE}.program" in first
    for name in ("conv", "conv_winograd", "fft", "sort", "scatter", "collectives",
                 "lapack_calls", "select_and_scatter"):
        assert f"{PACKAGE}.{name}" not in first, name
    assert "xlapy.backends.cpu.passes.conv_plan" not in first
    assert "xlapy.backends.cpu.passes.winograd_plan" not in first
    assert f"{PACKAGE}.conv" in r["after_conv"]  # imported by the first convolution
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_allclose(r["dot"], x @ x + x, rtol=1e-5, atol=1e-6)
    img = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
    w = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)
    want = np.array([[np.sum(img[i:i + 3, j:j + 3] * w) for j in range(6)] for i in range(6)])
    np.testing.assert_allclose(np.asarray(r["conv"])[0, 0], want, rtol=1e-5, atol=1e-6)


def test_the_collector_is_paused_while_compiling_and_restored_after(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path))
    seen = []
    comp = CpuCompiler()
    real = comp._compile

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(comp, "_compile", spy)
    assert gc.isenabled()
    text = DOT.replace("lazy_dot", "lazy_dot_gc")
    x = np.ones((8, 8), np.float32)
    np.testing.assert_allclose(comp.compile(parse(text)).run(x, x), x @ x + x)
    assert seen == [False] and gc.isenabled()
    gc.disable()  # a process that turned it off keeps it off
    try:
        comp.clear_cache()
        comp.compile(parse(text.replace("lazy_dot_gc", "lazy_dot_gc2")))
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()


def test_nested_and_concurrent_pauses_restore_the_collector_once():
    assert gc.isenabled()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other():
        with collector_paused():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread still compiles
    release.set()
    t.join()
    assert gc.isenabled()


def test_the_evaluators_lazy_custom_calls_cover_their_modules_targets():
    """The evaluator's LAPACK rules are imported by the first LAPACK call (control.LAZY_CALLS):
    every target such a module registers has its prefix."""
    import importlib

    from xlapy.hlo.evaluator.control import LAZY_CALLS, XLAPY_CALLS
    from xlapy.hlo.lapack_calls import targets
    for prefix, module in LAZY_CALLS:
        before = set(XLAPY_CALLS)
        importlib.import_module(module)
        mine = {t for t, fn in XLAPY_CALLS.items() if fn.__module__ == module} | (
            set(XLAPY_CALLS) - before)
        assert mine and all(t.startswith(prefix) for t in mine), (module, sorted(mine))
    assert set(targets()) <= set(XLAPY_CALLS)
