"""GPU rows: xlapy's gpu backend against JAX on the same GPU (jax-cuda12-plugin).

  python benchmarks/gpu.py [--small]

Workloads: softmax and layernorm+gelu (row reductions with warp shuffles), dense+relu and
dense+relu+softmax (cuBLAS and loop kernels), and the per-call overhead of a jitted call
of one small kernel. Targets (issue 19, H100): every row at most 1.0x JAX-GPU, softmax and
layernorm at most 0.7x, launch overhead at most 10 us per call.

Without a GPU (no cuda-python, driver or device) or without JAX's CUDA plugin it prints
which is missing and exits 0: the rows need the hardware.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import fmt_time, measure
from workloads import make_numpy_like


def _sizes(small: bool) -> dict:
    if small:
        return {"rows": (64, 256), "dense": (64, 128, 32)}
    return {"rows": (8192, 4096), "dense": (4096, 4096, 4096)}


def _inputs(name: str, small: bool):
    rng = np.random.default_rng(0)
    s = _sizes(small)
    if name in ("softmax",):
        return (rng.standard_normal(s["rows"]).astype(np.float32),)
    if name == "layernorm_gelu":
        n, d = s["rows"]
        return (rng.standard_normal((n, d)).astype(np.float32),
                rng.standard_normal(d).astype(np.float32),
                rng.standard_normal(d).astype(np.float32))
    m, k, n = s["dense"]
    return (rng.standard_normal((m, k)).astype(np.float32),
            (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true", help="small sizes (a check that it runs)")
    args = p.parse_args(argv)
    from xlapy.backends.gpu.runtime import cuda
    from xlapy.errors import XlapyError
    try:
        cuda.default_context()
    except XlapyError as e:
        print(f"benchmarks/gpu.py: skipped, no GPU: {e}")
        return 0
    try:
        import jax
        gpu = jax.devices("gpu")[0]
    except Exception as e:
        print(f"benchmarks/gpu.py: skipped, JAX has no GPU (pip install jax-cuda12-plugin): {e}")
        return 0
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    ours, theirs = make_numpy_like(xnp), make_numpy_like(jnp)
    print(f"{'workload':24s} {'xlapy gpu':>12s} {'jax gpu':>12s} {'ratio':>7s}")
    for name in ("softmax", "layernorm_gelu", "dense_relu", "dense_relu_softmax"):
        inputs = _inputs(name, args.small)
        f = xp.jit(ours[name], backend="gpu")
        g = jax.jit(theirs[name], device=gpu)
        dev_inputs = [jax.device_put(a, gpu) for a in inputs]
        np.testing.assert_allclose(np.asarray(f(*inputs)), np.asarray(g(*dev_inputs)),
                                   rtol=2e-3, atol=2e-3)
        t_ours = measure(lambda f=f, a=inputs: f(*a)).best
        t_jax = measure(lambda g=g, a=dev_inputs: g(*a).block_until_ready()).best
        print(f"{name:24s} {fmt_time(t_ours):>12s} {fmt_time(t_jax):>12s} "
              f"{t_ours / t_jax:7.2f}")
    tiny = np.ones(16, np.float32)
    inc = xp.jit(lambda x: x + 1, backend="gpu")
    inc(tiny)
    print(f"{'call overhead (x+1)':24s} {fmt_time(measure(lambda: inc(tiny)).best):>12s}")
    print("(xlapy's times include host<->device copies of inputs and results: its "
          "executables take and return NumPy arrays)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
