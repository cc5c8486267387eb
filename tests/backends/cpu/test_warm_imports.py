"""A process whose programs all come from the disk cache never imports the compiler's passes
and emitters (compiler._code_generator): about half of the cpu backend's import time. The
runtime symbols an emitter module provides are still registered before such a program is
loaded (compiler.EMITTER_SYMBOLS), and the code generation switches of modules not yet
imported still key the cache with the values those modules give them."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np

from xlapy.backends.cpu import compiler
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.hlo import parse

ROOT = pathlib.Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys
import numpy as np
from xlapy.backends.base import get_platform
from xlapy.hlo import parse
text, n = sys.argv[1], int(sys.argv[2])
comp = get_platform("cpu").compiler
x = np.arange(n * n, dtype=np.float32).reshape(n, n) / (n * n)
out = np.asarray(comp.compile(parse(text)).run(x, x))
loaded = sorted(m for m in sys.modules if m.startswith(("xlapy.backends.cpu.emitters",
                "xlapy.backends.cpu.passes", "xlapy.passes")))
print(json.dumps({"stats": comp.stats, "loaded": loaded,
                  "ok": bool(np.allclose(out, x @ x + x, rtol=1e-5, atol=1e-5))}))
"""


def _text(n: int) -> str:
    return (f"HloModule warm{n}\nENTRY e {{\n  a = f32[{n},{n}] parameter(0)\n"
            f"  b = f32[{n},{n}] parameter(1)\n"
            f"  d = f32[{n},{n}] dot(a, b), lhs_contracting_dims={{1}}, "
            f"rhs_contracting_dims={{0}}\n  ROOT r = f32[{n},{n}] add(d, a)\n}}\n")


def _child(tmp_path, n: int, gemm: str) -> dict:
    env = {"XLAPY_CACHE_DIR": str(tmp_path / "programs"),
           "XLAPY_RUNTIME_CACHE_DIR": str(tmp_path / "runtime"), "XLAPY_GEMM": gemm,
           "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, _text(n), str(n)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_warm_cache_hit_loads_no_passes_or_emitters(tmp_path):
    first = _child(tmp_path, 8, "blas")
    assert first["ok"] and first["stats"]["compiles"] == 1
    assert "xlapy.backends.cpu.emitters.program" in first["loaded"]
    second = _child(tmp_path, 8, "blas")
    assert second["ok"] and second["stats"] == {"memory_hits": 0, "disk_hits": 1, "compiles": 0}
    assert second["loaded"] == []


def test_a_cached_program_calling_xlapys_own_gemm_registers_it(tmp_path):
    first = _child(tmp_path, 48, "xlapy")
    assert first["ok"] and first["stats"]["compiles"] == 1
    second = _child(tmp_path, 48, "xlapy")
    assert second["ok"] and second["stats"]["disk_hits"] == 1
    assert "xlapy.backends.cpu.emitters.gemm_kernel" in second["loaded"]


def test_every_emitter_module_registering_runtime_symbols_is_listed():
    listed = {name for _, name in compiler.EMITTER_SYMBOLS}
    emitters = ROOT / "xlapy" / "backends" / "cpu" / "emitters"
    registering = {f"xlapy.backends.cpu.emitters.{p.stem}" for p in emitters.glob("*.py")
                   if re.search(r"^\s*register_lazy\(", p.read_text(encoding="utf-8"), re.M)}
    assert registering and registering <= listed


def test_the_reduce_switches_key_with_their_module_values(monkeypatch):
    from xlapy.backends.llvm import elemental_reduce
    for _, name, default in compiler.REDUCE_SWITCHES:
        assert getattr(elemental_reduce, name) == default, name
    c, m = CpuCompiler(), parse(_text(4))
    plain = c.fingerprint(m, 2, 100_000)
    for _, name, default in compiler.REDUCE_SWITCHES:
        with monkeypatch.context() as mp:
            mp.setattr(elemental_reduce, name, 8 if name == "LANES" else not default)
            assert c.fingerprint(m, 2, 100_000) != plain, name
    assert c.fingerprint(m, 2, 100_000) == plain
    np.testing.assert_equal(len(plain), 64)
