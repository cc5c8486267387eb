"""The narrow gemm kernels (xlapy/backends/cpu/emitters/gemm_narrow.py) against OpenBLAS on
products with few output columns (N <= 16), single-threaded.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/narrow_gemm.py            # the grid
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/narrow_gemm.py --quick    # a subset
    ... --t f64 --n 10 --m 100 --k 784                                           # one row

Orientations, as dot_plan.narrow_form sees them:
  dot     C[M,N] = A[M,K] . B[K,N], A and B row-major (x . W): form a
  update  C[M,N] += -0.5 * A . B with A = x^T, x[K,M] row-major, B = g[K,N] row-major (the
          weight update W - 0.5 x^T . g, passes/gemm_update.py): form b

Each shape times three calls, taking turns (so machine load hits them alike), medians of
`--rounds` rounds of 5 calls each: the kernel through ctypes (one pointer argument), the
gemm xlapy's generated code calls otherwise (NumPy's OpenBLAS, through ctypes, its 13
arguments prepared as the program prepares them, run with OpenBLAS's thread count at 1)
and NumPy's own `a @ b` (plus the update's scaling and addition in "update"). `null` is
the same two ctypes calls with M = 0 (each returns at once): what Python adds to each, taken
off both before the ratio `blas/xlapy` (above 1: the kernel is faster), which is what a
compiled program, which calls either without Python, would see.

Measured (2-vCPU Zen 4, shared, f32, the full grid; blas/xlapy ratios, above 1: the kernel
faster; each cell's six values are M = 1 8 32 100 256 1000):

  dot     K = 16                      K = 100
  N= 1    3.0 5.4 4.8 4.9 5.2 5.5   6.2 4.0 2.2 1.1 1.0 0.9
  N= 2    1.6 2.0 2.8 3.0 3.1 3.3   2.3 1.8 1.7 1.3 1.3 1.2
  N= 4    1.0 1.4 1.3 1.5 1.5 1.6   2.5 1.7 1.3 1.1 1.1 1.0
  N= 8    1.9 0.9 1.0 0.8 0.8 0.8   1.8 1.3 1.1 1.1 1.0 1.1
  N=10    1.7 1.1 0.9 0.8 0.7 0.7   1.1 1.2 1.1 1.1 1.2 1.2
  N=12    1.8 0.9 0.7 0.6 0.6 0.6   0.8 0.9 0.9 1.0 1.0 1.5
  N=16    1.3 0.9 0.6 0.5 0.5 0.4   0.8 0.6 0.7 0.7 0.7 0.9
  update  K = 16                      K = 100
  N= 1    1.5 2.4 2.3 1.8 2.0 1.8   1.2 1.5 1.0 1.1 1.2 1.2
  N= 2    0.7 0.9 1.3 0.8 0.8 0.7   0.9 1.1 0.8 0.8 0.8 0.8
  N= 4    0.8 1.3 1.2 1.2 1.2 1.1   1.3 1.3 1.1 1.0 1.1 1.0
  N= 8    0.7 2.1 2.0 1.8 1.6 1.7   1.0 1.4 1.4 1.2 1.5 1.2
  N=10    0.6 2.0 1.9 2.0 2.0 2.1   0.5 1.4 1.3 1.3 1.4 1.3
  N=12    0.7 1.3 1.7 1.6 1.7 1.7   0.4 0.8 1.4 1.3 1.4 2.0
  N=16    0.3 0.7 1.1 0.8 0.8 0.8   0.3 0.6 1.0 0.9 1.0 1.4

  dot     K = 784                     K = 2048
  N= 1    5.9 2.4 1.4 1.1 1.1 1.0   5.3 1.9 1.3 1.1 1.1 3.8
  N= 2    1.0 1.1 1.1 0.9 1.1 3.9   1.0 1.0 1.0 1.1 3.4 3.6
  N= 4    1.1 0.9 1.0 1.0 1.0 3.1   0.9 0.8 0.9 1.0 3.0 3.2
  N= 8    1.1 1.0 1.0 1.0 2.1 2.2   1.1 1.2 1.0 2.0 2.0 2.1
  N=10    0.9 1.2 1.4 1.5 2.2 2.2   0.3 0.5 0.7 1.1 1.1 1.2
  N=12    0.8 0.9 1.0 1.1 1.7 1.8   0.3 0.4 0.4 0.8 0.6 0.8
  N=16    0.6 0.5 0.5 0.6 0.6 0.7   0.2 0.1 0.2 0.2 0.2 0.2
  update  K = 784                     K = 2048
  N= 1    0.5 1.0 0.6 0.9 1.0 1.0   0.4 1.0 0.6 1.0 1.0 4.0
  N= 2    0.5 1.0 0.6 0.9 1.0 3.5   0.5 1.0 0.6 1.0 3.4 3.4
  N= 4    0.7 1.0 0.9 1.0 1.0 3.0   0.6 1.0 1.0 1.0 3.2 2.8
  N= 8    0.6 1.1 1.1 1.1 2.5 2.4   1.0 1.1 1.0 2.2 2.4 2.3
  N=10    0.4 1.3 1.1 1.2 2.4 2.5   0.4 1.2 1.1 2.3 2.5 1.7
  N=12    0.3 0.7 1.3 1.2 2.3 2.2   0.3 0.7 1.3 2.1 2.3 2.3
  N=16    0.3 0.5 1.0 1.3 1.5 1.5   0.3 0.5 1.7 1.4 1.5 1.1

and `--n 5 / 7 / 9 / 11`: dot wins 1.1-3.6 for N 5, 7 and 9 at K 100-784 (N = 11: 0.97-1.2
at M <= 32), update 1.0-3.9 from M = 8 for all four (M = 1: 0.4-1.3). Single values move
by 10-15 % between runs on the shared machine; the 2-4x cells are where M N K passes
OpenBLAS's threading threshold, where NumPy's OpenBLAS gets slower even on one thread
(most of those run on xlapy's own gemm anyway: dot_plan.own_gemm_for). Routed
(dot_plan.narrow_form): dot N 5-7, 9, 10 with M >= 8 and K 100-1024; update N 5-11 with
M >= 8 and N 12 with M >= 32. The MNIST tutorial's two products (`--n 10 --m 100 --k 784`,
`--orient update --n 10 --m 784 --k 100`): x . W 16.3 us against 23.7 (1.39-1.53 over runs),
W - 0.5 x^T . g 16.3 against 23.2 (1.36).
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlapy.backends.cpu.emitters import gemm_narrow as gn
from xlapy.backends.cpu.runtime import blas

NS = (1, 2, 4, 8, 10, 12, 16)
MS = (1, 8, 32, 100, 256, 1000)
KS = (16, 100, 784, 2048)


def _blas_call(t, orient, a, b, c, alpha, beta):
    """A zero-argument ctypes call of OpenBLAS's gemm computing c = alpha a.b + beta c as
    gemm.py emits it (row-major C: C^T = B^T A^T)."""
    addr = blas._numpy_openblas()[("s" if t == "f32" else "d") + "gemm"]
    fn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * 13))(addr)
    m, k = a.shape
    n = b.shape[1]
    ity = ctypes.c_int64
    fty = ctypes.c_float if t == "f32" else ctypes.c_double
    lhs_rm = a.strides[1] == a.itemsize and k > 1
    ta, tb = ctypes.c_char(b"N"), ctypes.c_char(b"N" if lhs_rm else b"T")
    ints = [ity(v) for v in (n, m, k, max(n, 1), max(k if lhs_rm else m, 1), max(n, 1))]
    al, be = fty(alpha), fty(beta)
    ref = ctypes.byref
    args = [ref(ta), ref(tb), ref(ints[0]), ref(ints[1]), ref(ints[2]), ref(al),
            b.ctypes.data, ref(ints[3]), a.ctypes.data, ref(ints[4]), ref(be), c.ctypes.data,
            ref(ints[5])]

    def run():
        fn(*args)
    run.keep = (args, ints, ta, tb, al, be, a, b, c)
    return run


def operands(t, orient, m, k, n, rng):
    dt = np.float32 if t == "f32" else np.float64
    if orient == "dot":
        a = rng.standard_normal((m, k)).astype(dt)
    else:
        a = rng.standard_normal((k, m)).astype(dt).T
    b = rng.standard_normal((k, n)).astype(dt)
    c = rng.standard_normal((m, n)).astype(dt)
    return a, b, c


def _median_rounds(calls, rounds):
    times = [[] for _ in calls]
    for _ in range(rounds):
        for i, f in enumerate(calls):
            t0 = time.perf_counter()
            for _ in range(5):
                f()
            times[i].append((time.perf_counter() - t0) / 5)
    return [statistics.median(x) * 1e6 for x in times]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--t", default="f32", choices=("f32", "f64"))
    p.add_argument("--quick", action="store_true", help="N 1, 10, 16; M 8, 100, 1000; K 16, 784")
    p.add_argument("--orient", choices=("dot", "update"))
    p.add_argument("--n", type=int)
    p.add_argument("--m", type=int)
    p.add_argument("--k", type=int)
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    ns, ms, ks = NS, MS, KS
    if args.quick:
        ns, ms, ks = (1, 10, 16), (8, 100, 1000), (16, 784)
    ns = (args.n,) if args.n else ns
    ms = (args.m,) if args.m else ms
    ks = (args.k,) if args.k else ks
    orients = (args.orient,) if args.orient else ("dot", "update")
    if blas.thread_guard_available():
        ctypes.CFUNCTYPE(None, ctypes.c_int)(blas._openblas_threads()[blas.SET_THREADS])(1)
    rng = np.random.default_rng(0)
    libs = {}
    print(f"{args.t}; times in us (medians); null: the Python call alone (kernel, blas); "
          "ratio blas/xlapy without it")
    for orient in orients:
        form = "a" if orient == "dot" else "b"
        alpha, beta = (1.0, 0.0) if orient == "dot" else (-0.5, 1.0)
        print(f"\n{orient} (form {form})")
        print(f"{'N':>3s} {'M':>5s} {'K':>5s} {'xlapy':>9s} {'blas':>9s} {'numpy':>9s} "
              f"{'blas/xlapy':>11s}")
        for n in ns:
            if (args.t, n, form) not in libs:
                libs[(args.t, n, form)] = gn.load(args.t, n, form)
            fn = libs[(args.t, n, form)][1]
            z = operands(args.t, orient, 0, 1, n, rng)
            null = _median_rounds([gn.numpy_call(fn, *z, alpha, beta),
                                   _blas_call(args.t, orient, *z, alpha, beta)], 2 * args.rounds)
            print(f"{n:3d} {'null':>5s} {'':5s} {null[0]:9.2f} {null[1]:9.2f}")
            for m in ms:
                for k in ks:
                    a, b, c = operands(args.t, orient, m, k, n, rng)
                    c2 = c.copy()
                    mine = gn.numpy_call(fn, a, b, c, alpha, beta)
                    theirs = _blas_call(args.t, orient, a, b, c2, alpha, beta)
                    if orient == "dot":
                        def ref(a=a, b=b):
                            return a @ b
                    else:
                        def ref(a=a, b=b, c=c):
                            return c - 0.5 * (a @ b)
                    x, y, z = _median_rounds([mine, theirs, ref], args.rounds)
                    ratio = max(y - null[1], 1e-3) / max(x - null[0], 1e-3)
                    print(f"{n:3d} {m:5d} {k:5d} {x:9.2f} {y:9.2f} {z:9.2f} {ratio:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
