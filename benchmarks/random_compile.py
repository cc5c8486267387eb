"""First compile of the random samplers whose programs are large (gamma's rejection loop
and everything built on it) against JAX's, in one process, with the load average.

    .venv/bin/python benchmarks/random_compile.py [NAME ...]   (default: beta gamma f
                                                                 dirichlet ball)

For each sampler: `jit(f).lower(key).compile()` with every cache off, xlapy then JAX, wall
time and this process's CPU time (all threads): on a shared machine the CPU time is the
figure to compare, the wall time grows with the load. Also the sizes that do not depend on
load: instructions traced and after xlapy's HLO passes. The samples of both must agree
(they are JAX's, bit for bit up to f32 rounding; tests/random checks them exactly).
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np

os.environ["XLAPY_DISABLE_CACHE"] = "1"

f32 = np.float32


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def samplers(random):
    return {
        "beta": lambda k: random.beta(k, 2.0, 3.0, (6,)),
        "gamma": lambda k: random.gamma(k, f32([0.3, 1.0])),
        "f": lambda k: random.f(k, 2.0, 3.0, (6,)),
        "dirichlet": lambda k: random.dirichlet(k, f32([1.0, 2.0, 3.0])),
        "ball": lambda k: random.ball(k, 3, 2, (4,)),
    }


def _timed(lowered):
    t, c = time.perf_counter(), _cpu()
    compiled = lowered.compile()
    return compiled, time.perf_counter() - t, _cpu() - c


def _size(module) -> int:
    return sum(len(c.instructions) for c in module.computations)


def main(names) -> int:
    import jax

    import xlapy as xp
    import xlapy.random as xr
    xs, js = samplers(xr), samplers(jax.random)
    for name in names:
        lowered = xp.jit(xs[name]).lower(xr.PRNGKey(0))
        cx, wx, ux = _timed(lowered)
        cj, wj, uj = _timed(jax.jit(js[name]).lower(jax.random.PRNGKey(0)))
        a, b = np.asarray(cx(xr.PRNGKey(0))), np.asarray(cj(jax.random.PRNGKey(0)))
        if not np.allclose(a, b, rtol=1e-5, atol=1e-6):
            print(f"{name}: samples differ from JAX's: {a} vs {b}")
            return 1
        sizes = f"{_size(lowered.module)} -> {_size(cx.executable.optimized_module)}"
        print(f"{name:10s} xlapy {wx:6.1f} s wall {ux:5.1f} s cpu | jax {wj:5.1f} s wall "
              f"{uj:5.1f} s cpu | cpu ratio {ux / uj:4.1f} | instructions {sizes} | "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["beta", "gamma", "f", "dirichlet", "ball"]))
