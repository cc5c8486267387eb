"""xlapy's own gemm (xlapy/backends/cpu/gemm_kernel.py) against NumPy's OpenBLAS on the MLP
training step's eight gemm shapes.

    .venv/bin/python benchmarks/gemm_kernel.py                   # both on all cores
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/gemm_kernel.py --threads 1

All of xlapy's runs come first, then NumPy's: OpenBLAS's threads keep spinning for a while
after a call and would slow down xlapy's pool if the two alternated. Best of 20 calls.

    .venv/bin/python benchmarks/gemm_kernel.py --sequence [--compare OTHER_gemm_kernel.py]

runs the eight gemms back to back with one shared workspace, as inside the training step,
where each gemm finds its operands in the other core's cache or further away (a gemm
repeated in a hot loop keeps them in its own core's cache), and prints per-gemm medians of
40 rounds. --compare loads a second version of gemm_kernel.py (say `git show
HEAD~1:xlapy/backends/cpu/gemm_kernel.py > /tmp/old.py`) and alternates the two in each
round: an A/B that machine load cannot bias. No NumPy here (its threads would disturb it).
--shapes dense takes shapes with more rows than columns instead (make bench's dense layer
first), which the kernel splits by rows on several threads; with the default table too,
where --compare FILE adds FILE's kernel as a column (the two taking turns in hot loops).

    .venv/bin/python benchmarks/gemm_kernel.py --pair

the backward pass's two independent big gemms (dW2 = h1^T g2 and dh1 = g2 W2^T), both split
over the cores one after the other, against running them at the same time on one core
each (a second Python thread; the ctypes call releases the GIL), alternating, 40 rounds.

    .venv/bin/python benchmarks/gemm_kernel.py --build

the kernel's one-time build, without the disk cache: generating its IR, then LLVM.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import best
from xlapy.backends.cpu.emitters import gemm_kernel as gk

# (name, M, K, N, A transposed, B transposed)
SHAPES = [("fwd 1", 256, 784, 1024, False, False), ("fwd 2", 256, 1024, 1024, False, False),
          ("dh1 = g2 w2^T", 256, 1024, 1024, False, True),
          ("dW1 = x^T g1", 784, 256, 1024, True, False),
          ("dW2 = h1^T g2", 1024, 256, 1024, True, False),
          ("fwd 3", 256, 1024, 10, False, False), ("dh2 = g3 w3^T", 256, 10, 1024, False, True),
          ("dW3 = h2^T g3", 1024, 256, 10, True, False)]


def call_for(fn, a, b, c, chunks, mod=gk):
    """c = a @ b through the kernel; few columns: c^T = b^T @ a^T instead, as the cpu backend
    calls it (gemm.py swapped_for: not when the direct phase of `mod`, the kernel's module,
    takes the product as it is)."""
    m, n = c.shape
    rows_contiguous = all(x.strides[1] == x.itemsize for x in (a, b, c))
    direct = n > 1 and getattr(mod, "direct_call", lambda *_: False)(
        "f32", m, n, gk.vector_bits(), rows_contiguous)
    if not direct and gk.swaps("f32", m, n, gk.vector_bits()):
        a, b, c = b.T, a.T, c.T
    return gk.numpy_call(fn, a, b, c, chunks=chunks)


# more rows than columns: split by rows on several threads (gemm_kernel.splits_rows); the
# first is make bench's dense layer
DENSE_SHAPES = [("dense 1024x784x512", 1024, 784, 512, False, False),
                ("1024x784x256", 1024, 784, 256, False, False),
                ("1024x784x64", 1024, 784, 64, False, False),
                ("4096x1024x1024", 4096, 1024, 1024, False, False)]
SHAPE_SETS = {"mlp": SHAPES, "dense": DENSE_SHAPES}


def operands(rng, shapes=SHAPES):
    out = []
    for name, m, k, n, ta, tb in shapes:
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        out.append((name, (a.T if ta else a), (b.T if tb else b), np.empty((m, n), np.float32)))
    return out


def _version(path):
    """(module, ctypes function, loaded object) of a gemm_kernel.py file."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"gemm_kernel_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lib, fn = mod.load("f32")
    return mod, fn, lib


def sequence(args) -> int:
    import time
    rng = np.random.default_rng(0)
    ops = operands(rng, SHAPE_SETS[args.shapes])
    paths = [gk.__file__] + ([args.compare] if args.compare else [])
    versions = [_version(p) for p in paths]
    ws = np.empty(64 << 20, np.uint8)  # one workspace for all, as in a program's arena
    runs = []
    for mod, fn, _ in versions:
        calls = []
        for _name, a, b, c in ops:
            run = call_for(fn, a, b, c, args.threads, mod)
            run.keep[0][mod.SLOT["ws"]] = ws.ctypes.data
            calls.append(run)
        runs.append(calls)
    times = np.zeros((len(runs), len(ops), 40))
    for r in range(times.shape[2]):
        for v, calls in enumerate(runs):
            for i, run in enumerate(calls):
                t = time.perf_counter()
                run()
                times[v, i, r] = time.perf_counter() - t
    med = np.median(times, axis=2) * 1e3
    print(f"{'shape':16s}" + "".join(f"{os.path.basename(p)[-22:]:>24s}" for p in paths))
    for i, (name, *_rest) in enumerate(ops):
        print(f"{name:16s}" + "".join(f"{med[v, i]:21.3f} ms" for v in range(len(runs))))
    print(f"{'total':16s}" + "".join(f"{med[v].sum():21.3f} ms" for v in range(len(runs))))
    return 0


def pair(args) -> int:
    import threading
    import time
    rng = np.random.default_rng(0)
    ops = {name: (a, b, c) for name, a, b, c in operands(rng)}
    lib, fn = gk.load("f32")
    names = ("dW2 = h1^T g2", "dh1 = g2 w2^T")
    split = [call_for(fn, *ops[n], args.threads) for n in names]
    whole = [call_for(fn, *ops[n], 1) for n in names]
    go, done = threading.Event(), threading.Event()

    def worker():
        while True:
            go.wait()
            go.clear()
            whole[0]()
            done.set()
    threading.Thread(target=worker, daemon=True).start()

    def together():
        go.set()
        whole[1]()
        done.wait()
        done.clear()
    runs = {"one after the other, split over the cores": lambda: [r() for r in split],
            "at the same time, one core each": together}
    times = {k: [] for k in runs}
    for _ in range(40):
        for k, run in runs.items():
            t = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t)
    for k, ts in times.items():
        print(f"{k:42s} median {np.median(ts) * 1e3:.3f} ms")
    return 0


def build() -> int:
    import time
    from xlapy.backends.cpu import codegen, target
    target.init_llvm()
    for t in ("f32", "f64"):
        t0 = time.perf_counter()
        text = gk.build_ir.__wrapped__(gk.vector_bits(), t)
        t1 = time.perf_counter()
        codegen.compile_to_object(text, pipeline="light")
        t2 = time.perf_counter()
        print(f"{t}: IR {(t1 - t0) * 1e3:.0f} ms, LLVM {(t2 - t1) * 1e3:.0f} ms")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="chunks (threads) for xlapy's kernel")
    ap.add_argument("--sequence", action="store_true",
                    help="the eight gemms back to back, medians of 40 rounds")
    ap.add_argument("--compare", metavar="FILE",
                    help="another gemm_kernel.py to alternate with (with --sequence, or "
                         "as a column of the hot-loop table)")
    ap.add_argument("--shapes", choices=sorted(SHAPE_SETS), default="mlp",
                    help="the MLP step's eight gemms (default) or shapes with more rows than "
                         "columns (the dense layer's)")
    ap.add_argument("--pair", action="store_true",
                    help="two independent gemms: split one after the other vs concurrently")
    ap.add_argument("--build", action="store_true", help="time the kernel's one-time build")
    args = ap.parse_args()
    if args.sequence:
        return sequence(args)
    if args.pair:
        return pair(args)
    if args.build:
        return build()
    lib, fn = gk.load("f32")
    rng = np.random.default_rng(0)
    cases = []
    shapes = SHAPE_SETS[args.shapes]
    for (name, a, b, c), (_, m, k, n, _ta, _tb) in zip(operands(rng, shapes), shapes):
        run = call_for(fn, a, b, c, args.threads)
        run()
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3 * np.sqrt(k))
        cases.append((name, m, k, n, a, b, c, run))
    other = {}
    if args.compare:  # the two kernels take turns: five rounds of best-of-4 each
        _, fn2, _lib2 = _version(args.compare)
        runs2 = {name: call_for(fn2, a, b, c, args.threads)
                 for name, m, k, n, a, b, c, run in cases}
        own = {name: 1.0 for name, *_ in cases}
        other = dict(own)
        for _ in range(5):
            for name, *_, run in cases:
                own[name] = min(own[name], best(run, 4))
                other[name] = min(other[name], best(runs2[name], 4))
    else:
        own = {name: best(run, 20) for name, m, k, n, a, b, c, run in cases}
    blas = {name: best(lambda: np.matmul(a, b, out=c), 20)  # noqa: B023 (timed at once)
            for name, m, k, n, a, b, c, run in cases}

    def cell(t, flops):
        return f"{t * 1e3:8.3f} ms {flops / t / 1e9:6.0f} GF/s"
    head = f"{os.path.basename(args.compare)[-22:]:>22s} " if other else ""
    print(f"{'shape':16s} {'xlapy':>22s} {head}{'NumPy (OpenBLAS)':>22s}")
    for name, m, k, n, *_ in cases:
        flops = 2 * m * n * k
        print(f"{name:16s} {cell(own[name], flops)} "
              + (f"{cell(other[name], flops)} " if other else "") + cell(blas[name], flops))
    print(f"{'total':16s} {sum(own.values()) * 1e3:8.2f} ms {'':11s}"
          + (f"{sum(other.values()) * 1e3:8.2f} ms {'':11s}" if other else "")
          + f"{sum(blas.values()) * 1e3:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
