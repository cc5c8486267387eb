"""GPU rows: xlapy's gpu backend against JAX on the same GPU (jax with its CUDA plugin).

  python benchmarks/gpu.py [--small] [--emulator] [--plans]

Workloads: softmax and layernorm+gelu (row reductions with warp shuffles), dense+relu and
dense+relu+softmax (cuBLAS and loop kernels), and the per-call overhead of a jitted call
of one small kernel. Targets (issue 19, H100): every row at most 1.0x JAX-GPU, softmax and
layernorm at most 0.7x, launch overhead at most 10 us per call.

Two column pairs, each system timed the same way:
  device   inputs put on the GPU once, results left there; each call waited for
           (xlapy: f(*dev).block_until_ready(); JAX: the same)
  host     NumPy arrays in, NumPy arrays out: every call uploads its inputs and
           downloads its results (xlapy: np.asarray(f(*host)); JAX:
           np.asarray(g(*[jax.device_put(a, gpu) for a in host])))
JAX's dots run at precision float32 (jax_default_matmul_precision), as xlapy's cuBLAS
gemm does (no TF32); one more row times JAX's dense+relu at its default precision.

Without a GPU (no cuda-python, driver or device) or without JAX's CUDA plugin it prints
which is missing and exits 0: the rows need the hardware. --emulator runs the xlapy side
on the host emulator at --small sizes (a check of this script without a GPU; no JAX rows).
--plans prints each workload's kernels (kind, grid, block) and cuBLAS gemms at the sizes
timed, without running anything (no GPU needed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import fmt_time, measure
from workloads import make_numpy_like

WORKLOADS = ("softmax", "layernorm_gelu", "dense_relu", "dense_relu_softmax")


def _sizes(small: bool, emulator: bool = False) -> dict:
    if emulator:  # (the emulator runs a thread per GPU thread: tiny sizes)
        return {"rows": (2, 64), "dense": (4, 8, 4)}
    if small:
        return {"rows": (64, 256), "dense": (64, 128, 32)}
    return {"rows": (8192, 4096), "dense": (4096, 4096, 4096)}


def _inputs(name: str, small: bool, emulator: bool = False):
    rng = np.random.default_rng(0)
    s = _sizes(small, emulator)
    if name in ("softmax",):
        return (rng.standard_normal(s["rows"], np.float32),)
    if name == "layernorm_gelu":
        n, d = s["rows"]
        return (rng.standard_normal((n, d), np.float32),
                rng.standard_normal(d, np.float32), rng.standard_normal(d, np.float32))
    m, k, n = s["dense"]
    return (rng.standard_normal((m, k), np.float32),
            (rng.standard_normal((k, n), np.float32) / np.float32(np.sqrt(k))),
            rng.standard_normal(n, np.float32))


EMULATOR = False


def _time(fn, quick: bool) -> float:
    if EMULATOR:
        return measure(fn, min_time=0, min_runs=1, warmup=0).best
    return measure(fn, min_time=0.05 if quick else 0.25, min_runs=3).best


def _xlapy_gpu(emulator: bool):
    """(backend name, device name), or (None, why not)."""
    if emulator:
        return "gpu-emulator", "host emulator"
    from xlapy.backends.gpu.runtime import cuda
    from xlapy.errors import XlapyError
    try:
        return "gpu", cuda.default_context().name
    except XlapyError as e:
        return None, str(e)


def print_plans(small: bool) -> None:
    import xlapy as xp
    import xlapy.numpy as xnp
    from xlapy.backends.gpu.compiler import emit_program
    from xlapy.backends.gpu.runtime.program import Gemm
    ours = make_numpy_like(xnp)
    for name in WORKLOADS:
        # (zeros at the full sizes: calloc'd pages that tracing never touches)
        args = _inputs(name, True) if small else [np.zeros(s, np.float32)
                                                  for s in _full_shapes(name)]
        program, _ = emit_program(xp.jit(ours[name]).lower(*args).module)
        print(f"{name}:")
        gemms = iter(t for t in program.thunks if isinstance(t, Gemm))
        for k in program.kernels:
            if k.kind == "gemm":
                g = next(gemms)
                print(f"  cuBLAS gemm {g.dtype} m={g.m} n={g.n} k={g.k} batch={g.batch}")
            else:
                print(f"  {k.kind:14s} {k.instruction:24s} grid {k.grid} block {k.block}")


def _full_shapes(name: str) -> list:
    s = _sizes(False)
    if name == "softmax":
        return [s["rows"]]
    if name == "layernorm_gelu":
        return [s["rows"], s["rows"][1:], s["rows"][1:]]
    m, k, n = s["dense"]
    return [(m, k), (k, n), (n,)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true", help="small sizes (a check that it runs)")
    p.add_argument("--emulator", action="store_true",
                   help="xlapy on the host emulator, small sizes, no JAX (no GPU needed)")
    p.add_argument("--plans", action="store_true",
                   help="print the kernels of each workload (no GPU needed) and exit")
    args = p.parse_args(argv)
    if args.plans:
        print_plans(args.small)
        return 0
    global EMULATOR
    EMULATOR = args.emulator
    small = args.small or args.emulator
    t_start = time.perf_counter()
    backend, device_name = _xlapy_gpu(args.emulator)
    if backend is None:
        print(f"benchmarks/gpu.py: skipped, no GPU: {device_name}")
        return 0
    jax = jnp = gpu = None
    if not args.emulator:
        try:
            import jax
            gpu = jax.devices("gpu")[0]
        except Exception as e:
            print(f"benchmarks/gpu.py: skipped, JAX has no GPU (pip install jax-cuda12-plugin "
                  f"or jax[cuda13]): {e}")
            return 0
        import jax.numpy as jnp
        jax.config.update("jax_default_matmul_precision", "float32")

    import xlapy as xp
    import xlapy.numpy as xnp
    ours = make_numpy_like(xnp)
    theirs = make_numpy_like(jnp) if jnp is not None else None
    print(f"device: xlapy {backend} on {device_name}" +
          (f"; JAX on {gpu.device_kind} ({jax.__version__})" if gpu is not None else ""))
    sizes = _sizes(small, args.emulator)
    print(f"sizes: rows {sizes['rows'][0]}x{sizes['rows'][1]}, dense "
          f"{'x'.join(map(str, sizes['dense']))} (m x k x n), f32")
    head = (f"{'workload':22s} {'xlapy dev':>11s} {'jax dev':>11s} {'ratio':>6s}   "
            f"{'xlapy host':>11s} {'jax host':>11s} {'ratio':>6s}")
    print(head)
    xdev = xp.devices(backend)[0]
    for name in WORKLOADS:
        host = _inputs(name, small, args.emulator)
        f = xp.jit(ours[name], backend=backend)
        dev = [xp.device_put(a, xdev) for a in host]
        want = np.asarray(f(*host))
        np.testing.assert_allclose(np.asarray(f(*dev)), want, rtol=1e-5, atol=1e-6)
        t_dev = _time(lambda f=f, a=dev: f(*a).block_until_ready(), small)
        t_host = _time(lambda f=f, a=host: np.asarray(f(*a)), small)
        if theirs is None:
            print(f"{name:22s} {fmt_time(t_dev):>11s} {'-':>11s} {'':6s}   "
                  f"{fmt_time(t_host):>11s} {'-':>11s}")
            continue
        g = jax.jit(theirs[name])
        jdev = [jax.device_put(a, gpu) for a in host]
        np.testing.assert_allclose(want, np.asarray(g(*jdev)), rtol=2e-3, atol=2e-3)
        j_dev = _time(lambda g=g, a=jdev: g(*a).block_until_ready(), small)
        j_host = _time(lambda g=g, a=host: np.asarray(g(*[jax.device_put(x, gpu) for x in a])),
                       small)
        print(f"{name:22s} {fmt_time(t_dev):>11s} {fmt_time(j_dev):>11s} {t_dev / j_dev:6.2f}   "
              f"{fmt_time(t_host):>11s} {fmt_time(j_host):>11s} {t_host / j_host:6.2f}")
        del dev, jdev
    tiny = np.ones(16, np.float32)
    inc = xp.jit(lambda x: x + 1, backend=backend)
    d_tiny = xp.device_put(tiny, xdev)
    inc(d_tiny).block_until_ready()
    t_dev = _time(lambda: inc(d_tiny).block_until_ready(), small)
    t_host = _time(lambda: np.asarray(inc(tiny)), small)
    if gpu is None:
        print(f"{'call overhead (x+1)':22s} {fmt_time(t_dev):>11s} {'-':>11s} {'':6s}   "
              f"{fmt_time(t_host):>11s}")
    else:
        jinc = jax.jit(lambda x: x + 1)
        j_tiny = jax.device_put(tiny, gpu)
        jinc(j_tiny).block_until_ready()
        j_dev = _time(lambda: jinc(j_tiny).block_until_ready(), small)
        j_host = _time(lambda: np.asarray(jinc(jax.device_put(tiny, gpu))), small)
        print(f"{'call overhead (x+1)':22s} {fmt_time(t_dev):>11s} {fmt_time(j_dev):>11s} "
              f"{t_dev / j_dev:6.2f}   {fmt_time(t_host):>11s} {fmt_time(j_host):>11s} "
              f"{t_host / j_host:6.2f}")
        with jax.default_matmul_precision("default"):
            g = jax.jit(theirs["dense_relu"])
            jdev = [jax.device_put(a, gpu) for a in _inputs("dense_relu", small)]
            g(*jdev).block_until_ready()
            t = _time(lambda: g(*jdev).block_until_ready(), small)
        print(f"{'dense_relu, JAX TF32':22s} {'':>11s} {fmt_time(t):>11s}   (JAX's default "
              "precision, for reference)")
    print(f"({time.perf_counter() - t_start:.1f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
