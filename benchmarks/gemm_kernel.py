"""xlapy's own gemm (xlapy/backends/cpu/gemm_kernel.py) against NumPy's OpenBLAS on the MLP
training step's eight gemm shapes.

    .venv/bin/python benchmarks/gemm_kernel.py                   # both on all cores
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/gemm_kernel.py --threads 1

All of xlapy's runs come first, then NumPy's: OpenBLAS's threads keep spinning for a while
after a call and would slow down xlapy's pool if the two alternated. Best of 20 calls.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import best  # noqa: E402
from xlapy.backends.cpu import gemm_kernel as gk  # noqa: E402

# (name, M, K, N, A transposed, B transposed)
SHAPES = [("fwd 1", 256, 784, 1024, False, False), ("fwd 2", 256, 1024, 1024, False, False),
          ("dh1 = g2 w2^T", 256, 1024, 1024, False, True),
          ("dW1 = x^T g1", 784, 256, 1024, True, False),
          ("dW2 = h1^T g2", 1024, 256, 1024, True, False),
          ("fwd 3", 256, 1024, 10, False, False), ("dh2 = g3 w3^T", 256, 10, 1024, False, True),
          ("dW3 = h2^T g3", 1024, 256, 10, True, False)]


def call_for(fn, a, b, c, chunks):
    """c = a @ b through the kernel; few columns: c^T = b^T @ a^T instead, as the cpu backend
    calls it (gemm.py)."""
    if c.shape[1] < 2 * gk.NV * gk.lanes("f32", gk.vector_bits()) and c.shape[0] > c.shape[1]:
        a, b, c = b.T, a.T, c.T
    return gk.numpy_call(fn, a, b, c, chunks=chunks)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="chunks (threads) for xlapy's kernel")
    args = ap.parse_args()
    lib, fn = gk.load("f32")
    rng = np.random.default_rng(0)
    cases = []
    for name, m, k, n, ta, tb in SHAPES:
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        a, b = (a.T if ta else a), (b.T if tb else b)
        c = np.empty((m, n), np.float32)
        run = call_for(fn, a, b, c, args.threads)
        run()
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3 * np.sqrt(k))
        cases.append((name, m, k, n, a, b, c, run))
    own = {name: best(run, 20) for name, m, k, n, a, b, c, run in cases}
    blas = {name: best(lambda: np.matmul(a, b, out=c), 20)
            for name, m, k, n, a, b, c, run in cases}
    print(f"{'shape':16s} {'xlapy':>22s} {'NumPy (OpenBLAS)':>22s}")
    for name, m, k, n, *_ in cases:
        flops = 2 * m * n * k
        print(f"{name:16s} {own[name] * 1e3:8.3f} ms {flops / own[name] / 1e9:6.0f} GF/s "
              f"{blas[name] * 1e3:8.3f} ms {flops / blas[name] / 1e9:6.0f} GF/s")
    print(f"{'total':16s} {sum(own.values()) * 1e3:8.2f} ms {'':11s}"
          f"{sum(blas.values()) * 1e3:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
