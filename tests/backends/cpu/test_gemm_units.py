"""xlapy's own gemm on several threads splits C into more units than chunks (so that a
thread the OS deschedules holds a small part of C, not half of it), each running unit
taking one of the call's `chunks` scratch slices: the unit count, the slices all given back,
the results on every split and with more pool threads than slices, and an oversubscribed
CPU (more threads than cores, beside spinning neighbour processes)."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import threading

import numpy as np
import pytest

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.gemm_params import UNITS_PER_CHUNK
from xlapy.backends.cpu.target import threads_available, vector_bits

pytestmark = pytest.mark.skipif(not threads_available(), reason="needs the thread pool")


@pytest.fixture(scope="module")
def f32_kernel():
    lib, fn = gk.load("f32")
    fn.keep = lib   # the code stays loaded while the function is used
    return fn


def _slots(run) -> ctypes.Array:
    return run.keep[0]


@pytest.mark.parametrize("m,k,n", [(100, 300, 700),    # by columns: 700 / NR slivers
                                   (37, 50, 96),       # by columns, fewer slivers than units
                                   (700, 300, 100),    # by rows: MR-row units
                                   (40, 50, 70)])      # by rows, few rows
@pytest.mark.parametrize("chunks", [2, 3, 8])
def test_units_slices_and_results(f32_kernel, m, k, n, chunks):
    rng = np.random.default_rng(m + n + chunks)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    run = gk.numpy_call(f32_kernel, a, b, c, chunks=chunks)
    for _ in range(5):
        c[:] = np.nan
        run()
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    slots = _slots(run)
    nr = gk.NV * gk.lanes("f32", vector_bits())
    pieces = -(-m // gk.MR) if gk.splits_rows(m, n, chunks) else -(-n // nr)
    assert slots[gk.SLOT["units"]] == min(pieces, chunks * UNITS_PER_CHUNK)
    assert slots[gk.SLOT["slices"]] == 0   # every unit gave its slice back


def test_one_chunk_is_one_unit(f32_kernel):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 500)).astype(np.float32)
    c = np.empty((300, 500), np.float32)
    run = gk.numpy_call(f32_kernel, a, b, c, chunks=1)
    run()
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    assert _slots(run)[gk.SLOT["units"]] == 1 and _slots(run)[gk.SLOT["slices"]] == 0


def test_units_run_on_several_threads(f32_kernel):
    """The epilogue runs on the thread that finished a tile: over some calls, the tiles of
    one call are finished by more than one thread (the pool's worker takes units)."""
    rng = np.random.default_rng(4)
    m, k, n = 48, 64, 1024
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    run = gk.numpy_call(f32_kernel, a, b, c, chunks=2)
    seen = set()

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                      ctypes.c_int64)
    def epi(_ctx, row, col, rows, cols):
        seen.add(threading.get_ident())

    slots = _slots(run)
    slots[gk.SLOT["epi"]] = ctypes.cast(epi, ctypes.c_void_p).value
    for _ in range(200):
        run()
        if len(seen) > 1:
            break
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    assert len(seen) > 1


STRESS = """
import os, sys, time
import numpy as np
from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.gemm_params import UNITS_PER_CHUNK
lib, fn = gk.load("f32")
rng = np.random.default_rng(0)
cases = []
for m, k, n in ((64, 200, 900), (900, 200, 64), (250, 130, 260)):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = a.astype(np.float64) @ b
    for chunks in (2, 4):
        c = np.empty((m, n), np.float32)
        cases.append((gk.numpy_call(fn, a, b, c, chunks=chunks), c, want))
stop, calls, worst = time.monotonic() + float(sys.argv[1]), 0, 0.0
while time.monotonic() < stop:
    for run, c, want in cases:
        c[:] = np.nan
        run()
        worst = max(worst, float(np.max(np.abs(c - want))))
        assert run.keep[0][gk.SLOT["slices"]] == 0
        calls += 1
print("calls", calls, "worst", worst)
"""


def test_oversubscribed_cpu_splits_and_joins(tmp_path):
    """Four pool threads (three workers) on this machine's cores beside two spinning
    neighbour processes: more threads than cores, and more threads than a 2-chunk call has
    slices (a unit waits for a free one). Every call's result is right and no call hangs
    (a lost unit would leave the caller waiting: the deadline)."""
    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    spin = "x = 0\nwhile True:\n    x = (x * 1103515245 + 12345) % 2147483648\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    env = dict(__import__("os").environ, XLAPY_NUM_THREADS="4", XLAPY_CACHE_DIR=str(tmp_path))
    try:
        proc = subprocess.run([sys.executable, str(script), "8"], capture_output=True,
                              text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("a gemm on the oversubscribed pool hung")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert int(words[words.index("calls") + 1]) >= 6   # every case ran at least once
    assert float(words[words.index("worst") + 1]) < 1e-2
