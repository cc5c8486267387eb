"""The thread pool beside a busy neighbour: a worker the OS deschedules while it holds a
unit of a job holds only that unit (the caller and the other workers take every other one
from the shared counter), results do not depend on which thread ran which unit or on the
thread count, and the default thread count follows the cores the process may run on."""

import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from xlapy.backends.cpu.options import default_num_threads, usable_cores
from xlapy.backends.cpu.runtime import threadpool

KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
PARALLEL_FOR = ctypes.CFUNCTYPE(None, KERNEL, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def _run_with_a_stalled_worker(threads: int, n: int, chunk: int):
    """Runs a job of n iterations in chunks of `chunk` on a pool of `threads` threads, whose
    first worker to claim a unit stalls in it (as if the OS had descheduled it) until every
    other unit is done. Returns (out, runs, finished_without_it): out[i] = 3 i + 1 written
    by the kernel, runs[(start, end)] = the threads that ran that range."""
    p = threadpool.pool(threads)
    if p is None or p.workers < 1:
        pytest.skip("no thread pool here (no futex)")
    caller = threading.get_ident()
    out = np.zeros(n, np.int64)
    runs: dict = {}
    done = threading.Condition()
    state = {"stalled": None, "others_done": 0, "finished_without_it": False,
             "caller_waited": False}
    units = -(-n // chunk)

    def kernel(ctx, start, end):
        me = threading.get_ident()
        with done:
            runs.setdefault((start, end), []).append(me)
            stall = me != caller and state["stalled"] is None
            if stall:
                state["stalled"] = me
                done.notify_all()
        if me == caller and not state["caller_waited"]:
            # the caller's first unit: wait (bounded) for a worker to claim one, so that
            # the job really has a unit held by a stalled worker
            state["caller_waited"] = True
            with done:
                done.wait_for(lambda: state["stalled"] is not None, timeout=20)
        out[start:end] = 3 * np.arange(start, end) + 1
        with done:
            if stall:
                state["finished_without_it"] = done.wait_for(
                    lambda: state["others_done"] == units - 1, timeout=20)
            else:
                state["others_done"] += 1
                done.notify_all()

    fn = KERNEL(kernel)
    PARALLEL_FOR(p.parallel_for)(fn, None, n, chunk)
    # (a new pool's workers join its first job, even when they first run after it was
    # published: before, such a worker took the job's wake-up as seen and sat it out)
    assert state["stalled"] is not None, "no worker joined the job within 20 s"
    return out, runs, state


@pytest.mark.parametrize("threads,n,chunk", [(2, 64, 1), (3, 100, 3), (4, 257, 8)])
def test_a_stalled_worker_holds_only_the_unit_it_claimed(threads, n, chunk):
    out, runs, state = _run_with_a_stalled_worker(threads, n, chunk)
    # every unit ran exactly once, the ranges tiling [0, n) as the chunking says
    assert sorted(runs) == [(s, min(s + chunk, n)) for s in range(0, n, chunk)]
    assert all(len(who) == 1 for who in runs.values())
    np.testing.assert_array_equal(out, 3 * np.arange(n) + 1)
    # the stalled worker held one unit; the others finished every other one meanwhile
    assert len([r for r, who in runs.items() if who[0] == state["stalled"]]) == 1
    assert state["finished_without_it"]


DENSE = """
import os, sys, numpy as np
os.environ["XLAPY_NUM_THREADS"] = sys.argv[1]
import xlapy as xp, xlapy.numpy as xnp
rng = np.random.default_rng(0)
a = rng.standard_normal((300, 200)).astype(np.float32)
w = rng.standard_normal((200, 700)).astype(np.float32)
b = rng.standard_normal((700,)).astype(np.float32)
x = rng.standard_normal((1 << 20,)).astype(np.float32)
f = xp.jit(lambda a, w, b: xnp.maximum(a @ w + b, 0))      # gemm with a fused epilogue
g = xp.jit(lambda a, w: (a @ w).T @ a)                       # tall product, split by rows
h = xp.jit(lambda x: (xnp.sum(x), xnp.tanh(x)))              # reduction and elementwise
outs = [f(a, w, b), g(a, w)] + list(h(x))
for _ in range(5):   # the same bits on every call, whichever thread took which unit
    again = [f(a, w, b), g(a, w)] + list(h(x))
    assert all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(outs, again))
np.savez(sys.argv[2], *[np.asarray(o) for o in outs])
"""


def test_results_are_the_same_bits_with_any_thread_count(tmp_path):
    """Gemms large enough for the pool (split in units claimed at run time, a scratch slice
    each), a reduction and an elementwise kernel: bit-identical with 1, 2, 3 and 4
    threads and over repeated calls."""
    script = tmp_path / "dense.py"
    script.write_text(DENSE)
    env = dict(os.environ, XLAPY_CACHE_DIR=str(tmp_path / "cache"))
    got = []
    for threads in (1, 2, 3, 4):
        path = tmp_path / f"out{threads}.npz"
        proc = subprocess.run([sys.executable, str(script), str(threads), str(path)],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        got.append(np.load(path))
    for key in got[0].files:
        for threads, other in zip((2, 3, 4), got[1:]):
            assert np.array_equal(got[0][key], other[key]), (key, threads)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_default_thread_count_follows_the_cpu_affinity(monkeypatch):
    """Under taskset or a container's cpuset the pool gets as many threads as the process
    may use cores, not the machine's core count (15 workers pinned to 2 cores with a
    neighbour made the MLP step 1.27x JAX's time instead of 0.95x: docs/benchmarks.md)."""
    monkeypatch.delenv("XLAPY_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_SIZE", raising=False)
    monkeypatch.delenv("MPI_LOCALNRANKS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5})
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert usable_cores() == 3
    assert default_num_threads() == 3
    monkeypatch.setenv("XLAPY_NUM_THREADS", "5")
    assert default_num_threads() == 5
