"""Many threads and processes at once: each program is traced and compiled once however many
threads ask for it, results are right and bitwise the same everywhere, and forking while
another thread compiles never leaves a child hung. Every wait has a deadline, so a deadlock
fails the test instead of stopping the suite."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.base import get_platform

DEADLINE = 300  # seconds for any one wait


def _stats():
    s = get_platform("cpu").compiler.stats
    return s["compiles"] + s["disk_hits"]


def _run_threads(n, target):
    """Start n threads on target(k) together; re-raise the first error; fail on a hang."""
    errors = []
    start = threading.Barrier(n)

    def body(k):
        try:
            start.wait(DEADLINE)
            target(k)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    end = time.monotonic() + DEADLINE
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "threads still running: a deadlock"
    if errors:
        raise errors[0]


def test_32_threads_1000_calls_one_compile():
    traces = []

    @xp.jit
    def f(x):
        traces.append(1)
        return x * np.float32(3) + np.float32(1)

    before = _stats()
    wrong = []

    def calls(k):
        x = np.arange(64, dtype=np.float32) + k
        want = x * np.float32(3) + np.float32(1)
        for _ in range(1000):
            if not np.array_equal(f(x), want):
                wrong.append(k)

    _run_threads(32, calls)
    assert len(traces) == 1
    assert _stats() - before == 1
    assert wrong == []


def test_8_threads_8_shapes_one_compile_each():
    traces = []

    @xp.jit
    def g(x):
        traces.append(x.shape)
        return xnp.sum(x * x, axis=0)

    before = _stats()

    def calls(k):  # two threads per shape
        x = np.full((k % 8 + 1, 5), k % 8 + 1, np.float32)
        for _ in range(20):
            np.testing.assert_array_equal(g(x), np.full(5, (k % 8 + 1) ** 3, np.float32))

    _run_threads(16, calls)
    assert sorted(traces) == [(n, 5) for n in range(1, 9)]
    assert _stats() - before == 8


def test_two_threads_compiling_one_module_compile_once():
    from xlapy.hlo import parse
    text = ("HloModule once\nENTRY e {\n  p = f32[16] parameter(0)\n  c = f32[] constant(7)\n"
            "  b = f32[16] broadcast(c), dimensions={}\n  ROOT r = f32[16] multiply(p, b)\n}\n")
    compiler = get_platform("cpu").compiler
    compiler.clear_cache()
    before = _stats()
    exes = [None] * 6
    _run_threads(6, lambda k: exes.__setitem__(k, compiler.compile(parse(text))))
    assert _stats() - before == 1
    assert all(e is exes[0] for e in exes)


def test_100_forks_while_compiling_none_hangs():
    """A thread compiles new programs without pause while the main thread forks 100 times;
    each child compiles and runs a program of its own (LLVM in the child: once 13 of 52
    children hung on llvmlite's lock, held at fork time by the parent's compiling thread)."""
    stop = threading.Event()
    compiled = []

    def compiling():
        i = 0
        while not stop.is_set():
            i += 1
            f = xp.jit(lambda x, i=i: x * np.float32(i) + np.float32(0.5))
            assert f(np.ones(3, np.float32))[0] == i + 0.5
            compiled.append(i)

    t = threading.Thread(target=compiling, daemon=True)
    t.start()
    children = {}
    try:
        while not compiled:
            time.sleep(0.01)
        for n in range(100):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (fork with threads: Python, JAX if loaded)
                pid = os.fork()
            if pid == 0:  # the child: compile and run, then leave at once
                code = 1
                try:
                    h = xp.jit(lambda x, n=n: x - np.float32(n))
                    code = 0 if h(np.zeros(2, np.float32))[1] == -n else 3
                finally:
                    os._exit(code)
            children[pid] = n
            time.sleep(0.005 * (n % 7))  # fork at varying points of the compilation
    finally:
        stop.set()
    t.join(DEADLINE)
    end = time.monotonic() + DEADLINE
    status = {}
    while len(status) < len(children) and time.monotonic() < end:
        for pid in children:
            if pid not in status:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status[pid] = st
        time.sleep(0.05)
    hung = [pid for pid in children if pid not in status]
    for pid in hung:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not t.is_alive()
    assert hung == [], f"{len(hung)} of 100 children hung"
    failed = {children[p]: st for p, st in status.items() if st != 0}
    assert failed == {}, f"children exited with {failed}"
    assert len(compiled) > 1  # the parent went on compiling across the forks


_PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import xlapy as xp, xlapy.numpy as xnp

    def program(x, w):
        h = xnp.tanh(x @ w)
        return (xnp.sum(h * h, axis=1), xnp.max(xnp.exp(h), axis=0), xnp.cumsum(h, axis=1),
                xnp.sum(xnp.sin(x) * x))  # (192,000 elements: summed by several threads)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 2000)).astype(np.float32)
    w = rng.standard_normal((2000, 64)).astype(np.float32) / 40
    outs = [np.asarray(o) for o in xp.jit(program)(x, w)]
    np.savez(sys.argv[1], *outs)
""")


def test_results_bitwise_identical_across_runs_and_processes(tmp_path):
    """The same program and inputs give the same bits in every run here and in two fresh
    processes: one compiling it, one loading it from the disk cache."""
    script = tmp_path / "program.py"
    script.write_text(_PROGRAM)
    env = dict(os.environ)
    env["XLAPY_CACHE_DIR"] = str(tmp_path / "cache")
    runs = []
    env.pop("XLAPY_DISABLE_CACHE", None)
    for n in range(2):
        out = tmp_path / f"out{n}.npz"
        subprocess.run([sys.executable, str(script), str(out)], env=env, check=True,
                       timeout=DEADLINE)
        runs.append(np.load(out))
    ns = {}
    exec(_PROGRAM.split("rng =")[0], ns)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 2000)).astype(np.float32)
    w = rng.standard_normal((2000, 64)).astype(np.float32) / 40
    f = xp.jit(ns["program"])
    here = [[np.asarray(o) for o in f(x, w)] for _ in range(3)]
    for k, want in enumerate(here[0]):
        for other in here[1:]:
            assert other[k].tobytes() == want.tobytes()
        for r in runs:
            assert r[f"arr_{k}"].tobytes() == want.tobytes()


_SHARER = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    warnings.simplefilter("error")   # a discarded (damaged, half-written) entry would warn
    import xlapy as xp
    from xlapy.backends.base import get_platform
    from xlapy.hlo import parse

    compiler = get_platform("cpu").compiler
    for rep in range(int(sys.argv[1])):
        for i in range(4):
            text = (f"HloModule shared{i}\\nENTRY e {{\\n  p = f32[8] parameter(0)\\n"
                    f"  c = f32[] constant({i + 2})\\n  b = f32[8] broadcast(c), dimensions={{}}\\n"
                    "  ROOT r = f32[8] multiply(p, b)\\n}\\n")
            compiler.clear_cache()
            exe = compiler.compile(parse(text))
            assert (exe.run(np.ones(8, np.float32)) == i + 2).all()
    print(compiler.stats["compiles"], compiler.stats["disk_hits"])
""")


def test_disk_cache_shared_by_processes_writing_and_reading(tmp_path):
    """Four processes compile the same modules into one cache directory at once, again and
    again (so one writes an entry while another reads it): no one ever sees a partial entry
    and every result is right."""
    script = tmp_path / "share.py"
    script.write_text(_SHARER)
    env = dict(os.environ, XLAPY_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("XLAPY_DISABLE_CACHE", None)
    procs = [subprocess.Popen([sys.executable, str(script), "6"], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=DEADLINE)
        assert p.returncode == 0, err[-2000:]
        results.append(tuple(int(v) for v in out.split()))
    assert sum(c for c, _ in results) >= 4  # someone compiled each module ...
    assert sum(c + d for c, d in results) == 4 * 6 * 4  # ... and the rest loaded it
    assert sum(d for _, d in results) > 0


def test_an_entry_rewritten_while_read_is_always_whole(tmp_path):
    from xlapy.backends.cpu import cache_file
    path = tmp_path / "entry.xlapy"
    blobs = [[bytes([k]) * (50_000 + 1000 * k)] for k in range(4)]
    cache_file.write(path, "test", "k", {"n": 0}, blobs[0])
    stop = threading.Event()

    def writer():
        k = 0
        while not stop.is_set():
            k += 1
            cache_file.write(path, "test", "k", {"n": k % 4}, blobs[k % 4])

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        for _ in range(500):
            meta, got = cache_file.read(path, "test", "k")
            assert got == blobs[meta["n"]]
    finally:
        stop.set()
        t.join(DEADLINE)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


@pytest.mark.parametrize("n", [2])
def test_clear_caches_while_other_threads_call(n):
    f = xp.jit(lambda x: x + np.float32(n))

    def calls(k):
        x = np.full(4, k, np.float32)
        for i in range(200):
            if k == 0 and i % 20 == 0:
                xp.clear_caches()
            np.testing.assert_array_equal(f(x), x + np.float32(n))

    _run_threads(6, calls)
