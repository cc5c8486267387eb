"""Costs around running compiled code that the README, fpmode.py, output_pool.py and
runtime/loader.py cite.

    .venv/bin/python benchmarks/runtime_costs.py

1. Subnormals: the MNIST SGD step of `make bench` (batch 100, 784 -> 10), us per step (best
   of 5 loops of 1000 steps), with one fixed batch and with batches cycling through a
   6000 x 784 array, compiled with --xla_cpu_ftz=true (the default: subnormals flushed, as
   XLA's CPU runtime does) and =false (IEEE). With fresh batches the step's softmax
   underflows into subnormals.
2. Fresh memory: a 32 MB NumPy array written once per page (the page faults of a fresh
   output), 25 times after 50 ms pauses: median and maximum; against output_pool.take of a
   dropped 32 MB output.
3. Loads: loader.LoadedObject of a small object with the engine prepared in the background
   against one built on the spot (loader._new_engine), medians of 20.
"""
import os
import statistics
import sys
import time

os.environ["XLAPY_DISABLE_CACHE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from workloads import grad_steps, make_numpy_like, one_hot


def subnormals() -> None:
    rng = np.random.default_rng(1)
    data = rng.random((6000, 784)).astype(np.float32)
    labels = one_hot(rng, data.shape[0], 10)
    step, _ = grad_steps(xp.grad, make_numpy_like(xnp)["xent"])
    for ftz in ("true", "false"):
        os.environ["XLAPY_FLAGS"] = f"--xla_cpu_ftz={ftz}"
        f = xp.jit(step)
        f(np.zeros((784, 10), np.float32), np.zeros(10, np.float32), data[:100], labels[:100])
        for moving in (False, True):
            best = None
            for _ in range(5):
                w, b = np.zeros((784, 10), np.float32), np.zeros(10, np.float32)
                t0 = time.perf_counter()
                for i in range(1000):
                    lo = (i % 59) * 100 if moving else 0
                    w, b = f(w, b, data[lo:lo + 100], labels[lo:lo + 100])
                t = (time.perf_counter() - t0) / 1000 * 1e6
                best = t if best is None else min(best, t)
            print(f"MNIST step, --xla_cpu_ftz={ftz}, "
                  f"{'batches cycling through 6000 rows' if moving else 'one fixed batch'}: "
                  f"{best:.1f} us")
    os.environ["XLAPY_FLAGS"] = ""


def fresh_memory() -> None:
    import gc
    from xlapy.backends.cpu.runtime import output_pool
    n = 32 << 20
    fresh, recycled = [], []
    for _ in range(25):
        gc.collect()
        time.sleep(0.05)
        t0 = time.perf_counter()
        a = np.empty(n, np.uint8)
        a[::4096] = 1
        fresh.append((time.perf_counter() - t0) * 1e3)
        output_pool.keep(a)
        del a
        t0 = time.perf_counter()
        a = output_pool.take((n,), np.uint8)
        a[::4096] = 1
        recycled.append((time.perf_counter() - t0) * 1e3)
        output_pool.clear()
        del a
    print(f"32 MB output: fresh memory median {statistics.median(fresh):.2f} ms, max "
          f"{max(fresh):.2f}; recycled (output_pool) median {statistics.median(recycled):.2f} ms")


def loads() -> None:
    from xlapy.backends.cpu import codegen
    from xlapy.backends.cpu.runtime import loader
    obj = codegen.compile_to_object('define i64 @"f"() {\n  ret i64 1\n}\n')
    loader.LoadedObject(obj)
    prepared, built = [], []
    for _ in range(20):
        loader._spare.result()                    # the background build has finished
        t0 = time.perf_counter()
        loader.LoadedObject(obj)
        prepared.append((time.perf_counter() - t0) * 1e3)
        loader._spare.result()
        saved, loader._take_engine = loader._take_engine, loader._new_engine
        try:
            t0 = time.perf_counter()
            loader.LoadedObject(obj)
            built.append((time.perf_counter() - t0) * 1e3)
        finally:
            loader._take_engine = saved
    print(f"load of a small object: prepared engine {statistics.median(prepared):.2f} ms, "
          f"engine built on the spot {statistics.median(built):.2f} ms (medians of 20)")


if __name__ == "__main__":
    subnormals()
    fresh_memory()
    loads()
