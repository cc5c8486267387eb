"""xlapy's thread pool: results, concurrency, fork safety, and the GIL being released."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse

BIG = """HloModule big
ENTRY e {
  x = f32[2000,1000] parameter(0)
  y = f32[2000,1000] parameter(1)
  m = f32[2000,1000] multiply(x, y)
  ROOT t = f32[2000,1000] tanh(m)
}
"""
ROWSUM = """HloModule rowsum
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4000,300] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4000] reduce(x, z), dimensions={1}, to_apply=add
}
"""


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2000, 1000)).astype(np.float32), rng.standard_normal(
        (2000, 1000)).astype(np.float32)


def test_parallel_kernels_match_interpreter(monkeypatch):
    monkeypatch.setenv("XLAPY_NUM_THREADS", "2")
    x, y = _inputs()
    exe = get_platform("cpu").compiler.compile(parse(BIG))
    # the kernel really runs on the pool (one kernel: through launch.py's xlapy_launch)
    assert exe.spec.launch is not None or any(b"xlapy_parallel_for" in o
                                              for o in exe.spec.objects)
    want = np.tanh(x.astype(np.float64) * y).astype(np.float32)
    for _ in range(20):  # many jobs in a row: generations, chunk claims, wakeups
        np.testing.assert_allclose(exe.run(x, y), want, rtol=4e-7, atol=1e-7)
    r = np.random.default_rng(1).standard_normal((4000, 300)).astype(np.float32)
    rs = get_platform("cpu").compiler.compile(parse(ROWSUM))
    np.testing.assert_allclose(rs.run(r), r.sum(1), rtol=1e-4, atol=1e-4)


def test_concurrent_callers_get_correct_results(monkeypatch):
    monkeypatch.setenv("XLAPY_NUM_THREADS", "2")
    exe = get_platform("cpu").compiler.compile(parse(BIG))
    errors = []

    def work(seed):
        x, y = _inputs(seed)
        want = np.tanh(x.astype(np.float64) * y).astype(np.float32)
        for _ in range(5):
            got = exe.run(x, y)
            if not np.allclose(got, want, rtol=4e-7, atol=1e-7):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_native_code_releases_the_gil(monkeypatch):
    monkeypatch.setenv("XLAPY_NUM_THREADS", "1")
    exe = get_platform("cpu").compiler.compile(parse(BIG))
    x, y = _inputs()
    exe.run(x, y)
    ticks = []
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0)

    t = threading.Thread(target=counter)
    t.start()
    time.sleep(0.01)
    before = len(ticks)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.3:
        exe.run(x, y)
    stop.set()
    t.join()
    assert len(ticks) - before > 100  # the other Python thread ran meanwhile


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pool_works_in_a_forked_child(cpu_check, tmp_path):
    cpu_check.in_forked_child(tmp_path, f"""
os.environ["XLAPY_NUM_THREADS"] = "2"
os.environ["XLAPY_CACHE_DIR"] = {str(tmp_path)!r}
from xlapy.backends.base import get_platform
from xlapy.hlo import parse
exe = get_platform("cpu").compiler.compile(parse('''{BIG}'''))
x = np.ones((2000, 1000), np.float32)
exe.run(x, x)
""", "ok = np.allclose(exe.run(x, x), np.tanh(1.0))")


def test_jobs_of_different_sizes_under_contention_never_hang(tmp_path):
    """Regression: a worker still looping on a finished job could compare-and-swap the old
    claim word after the caller had written the next job's fields (before publishing it),
    run a chunk of the new job twice and push `done` past the chunk count, so the caller
    waited forever. It showed with a 2-chunk job followed by a many-chunk job while
    OpenBLAS's own spinning workers kept descheduling xlapy's (about one run in two of this
    loop of 15,000 calls hung before the fix). The loop runs in a child process for at most
    15 s of calls in `make test` (so a loaded machine runs fewer, not slower;
    XLAPY_STRESS_SECONDS=45 for the full 15,000); a hang shows as the deadline."""
    seconds = float(os.environ.get("XLAPY_STRESS_SECONDS", "15"))
    script = tmp_path / "stress.py"
    script.write_text(f"""
import os, numpy as np
os.environ["XLAPY_NUM_THREADS"] = "2"
os.environ["XLAPY_CACHE_DIR"] = {str(tmp_path)!r}
import xlapy as xp, xlapy.numpy as xnp
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 300000)).astype(np.float32)
y = rng.standard_normal((1000, 1000)).astype(np.float32)
a = rng.standard_normal((256, 256)).astype(np.float32)
def f(x, y):
    s = xnp.sum(x * x, -1)             # a row reduction of 2 rows: a job of 2 chunks
    return xnp.tanh(y) * s[0] + s[1]   # then an elementwise job of many chunks
g = xp.jit(f)
want = np.tanh(y) * np.sum(x * x, -1)[0] + np.sum(x * x, -1)[1]
import time
stop = time.monotonic() + {seconds}   # at most 15,000 calls; fewer on a loaded machine
i = 0
while i < 15000 and time.monotonic() < stop:
    out = g(x, y)
    if i % 3 == 0:
        a @ a                          # OpenBLAS's threads wake up and spin
    i += 1
scale = float(np.sum(x * x))           # |out| is at most about this: absolute tolerance
print("max-error", float(np.max(np.abs(out - want))) / scale)
""")
    try:
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=seconds + 105)
    except subprocess.TimeoutExpired:
        pytest.fail("the thread pool hung (the caller waited for a chunk count never reached)")
    assert proc.returncode == 0, proc.stderr
    err = float(proc.stdout.split("max-error")[1])
    assert err < 1e-4


def test_worker_keeps_its_stack_slots_in_the_entry_block():
    """Regression: the worker's spin counter was allocated in its job loop, where LLVM keeps
    an alloca dynamic (only entry-block ones are promoted or made static): the worker's stack
    grew by a slot per job it woke for, until it overflowed after some hundred thousand
    jobs."""
    import llvmlite.binding as llvm
    from xlapy.backends.cpu import codegen
    from xlapy.backends.cpu.runtime import threadpool
    for triple in (None, "aarch64-unknown-linux-gnu"):
        mod = llvm.parse_assembly(threadpool.build_ir(triple))
        if triple is None:  # and after -O3 as the JIT compiles it
            mod = codegen.parse_ir(str(mod))
            codegen.optimize(mod, "O3")
        blocks = list(mod.get_function("xlapy_pool_worker").blocks)
        allocas = [[i.opcode for i in blk.instructions].count("alloca") for blk in blocks]
        assert allocas[0] >= 1 and not any(allocas[1:]), allocas
