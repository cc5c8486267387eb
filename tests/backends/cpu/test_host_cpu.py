"""XLAPY_HOST_CPU (backends/cpu/target.py): the JIT generates code for a named CPU instead of
this machine's, so another machine's code paths (AVX2 only, AVX-512 preferring 256-bit
vectors) run and are checked here; a name or feature LLVM does not know is refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from xlapy.backends.cpu import target

PROGRAM = textwrap.dedent("""
    import json
    import numpy as np
    import xlapy as xp, xlapy.numpy as xnp
    from xlapy.backends.cpu import target
    rng = np.random.default_rng(0)
    a = rng.standard_normal((37, 21)).astype(np.float32)
    b = rng.standard_normal((21, 9)).astype(np.float32)
    f = xp.jit(lambda a, b: (xnp.tanh(a @ b).sum(0), xnp.sort(a, axis=1)[:, -1],
                             xnp.concatenate([a, a * 2], axis=1).max(1)))
    got = [np.asarray(g, np.float64) for g in f(a, b)]
    want = [np.tanh(a.astype(np.float64) @ b).sum(0), np.sort(a, axis=1)[:, -1],
            np.concatenate([a, a * 2], axis=1).max(1)]
    ok = all(np.allclose(g, w, rtol=1e-4, atol=1e-4) for g, w in zip(got, want))
    print(json.dumps({"cpu": target.host().cpu, "features": target.host().features,
                      "bits": target.vector_bits(), "ok": bool(ok)}))
""")


def _run(value: str):
    env = dict(os.environ, XLAPY_HOST_CPU=value, XLAPY_DISABLE_CACHE="1")
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=300)


def _host_has(feature: str) -> bool:
    return f"+{feature}" in target.host().features.split(",")


@pytest.mark.parametrize("cpu, needs, bits", [("haswell", "avx2", 256),
                                              ("skylake-avx512", "avx512bw", 256),
                                              ("icelake-server", "avx512vbmi2", 512)])
def test_code_for_another_cpu_runs_and_agrees(cpu, needs, bits):
    if os.environ.get("XLAPY_HOST_CPU") or not _host_has(needs):
        pytest.skip(f"this machine has no {needs} (or XLAPY_HOST_CPU is set already)")
    r = _run(cpu)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"cpu": cpu, "features": "", "bits": bits, "ok": True}


def test_features_follow_the_cpu_name():
    if os.environ.get("XLAPY_HOST_CPU") or not _host_has("avx512f"):
        pytest.skip("this machine has no AVX-512 (or XLAPY_HOST_CPU is set already)")
    r = _run("icelake-server,-avx512f")
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["features"] == "-avx512f" and out["bits"] == 256 and out["ok"]


@pytest.mark.parametrize("value, message", [
    ("pentium-9000", "pentium-9000 is not a CPU LLVM knows"),
    ("haswell,avx2", "'avx2' is not '\\+name' or '-name'"),
    ("haswell,+no-such-feature", "'\\+no-such-feature' is not"),
])
def test_unknown_names_are_refused(value, message):
    r = _run(value)
    assert r.returncode != 0
    assert "XlapyError" in r.stderr and f"XLAPY_HOST_CPU={value}" in r.stderr
    assert re.search(message, r.stderr), r.stderr[-1000:]
