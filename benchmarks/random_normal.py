"""random.normal of 16M f32 (and related samplers) under jit: xlapy against JAX.

    .venv/bin/python benchmarks/random_normal.py [--size 16777216] [--rounds 5]
                                                 [--samplers normal,uniform,bits]

For each sampler both systems take turns: each round times xlapy then JAX (or the reverse,
alternating by round) with harness.measure, after 50 ms idle; printed per sampler are the
best and median times of each system over the rounds and the ratio of the bests
(xlapy / JAX; the issue's target is at most 1.5 for normal). The first calls (trace +
compile + run) are printed as well. Before timing, the script checks that both systems
produced the same bits for the same key.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1 << 24)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--samplers", default="normal,uniform,bits")
    ap.add_argument("--min-time", type=float, default=0.5)
    args = ap.parse_args()

    import jax

    import xlapy as xp
    import xlapy.random as xr
    from harness import fmt_time, measure

    n = args.size
    samplers = {
        "normal": lambda r: lambda k: r.normal(k, (n,)),
        "uniform": lambda r: lambda k: r.uniform(k, (n,)),
        "bits": lambda r: lambda k: r.bits(k, (n,)),
        "bernoulli": lambda r: lambda k: r.bernoulli(k, 0.5, (n,)),
        "truncated_normal": lambda r: lambda k: r.truncated_normal(k, -2.0, 2.0, (n,)),
    }
    xk, jk = xr.PRNGKey(0), jax.random.PRNGKey(0)
    print(f"{n} samples, {args.rounds} rounds, systems alternating")
    for name in args.samplers.split(","):
        ours = xp.jit(samplers[name](xr))
        theirs = jax.jit(samplers[name](jax.random))
        t0 = time.perf_counter()
        a = ours(xk)
        first_x = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = np.asarray(jax.block_until_ready(theirs(jk)))
        first_j = time.perf_counter() - t0
        same = np.array_equal(np.asarray(a).view(np.uint8), b.view(np.uint8))
        runs = {"xlapy": lambda f=ours: f(xk),
                "jax": lambda f=theirs: jax.block_until_ready(f(jk))}
        times = {k: [] for k in runs}
        for r in range(args.rounds):
            order = list(runs) if r % 2 == 0 else list(runs)[::-1]
            for k in order:
                time.sleep(0.05)
                times[k].append(measure(runs[k], min_time=args.min_time / args.rounds))
        bx = min(t.best for t in times["xlapy"])
        bj = min(t.best for t in times["jax"])
        mx = sorted(t.median for t in times["xlapy"])[len(times["xlapy"]) // 2]
        mj = sorted(t.median for t in times["jax"])[len(times["jax"]) // 2]
        print(f"{name:18s} xlapy {fmt_time(bx)} (median {fmt_time(mx)})  "
              f"jax {fmt_time(bj)} (median {fmt_time(mj)})  xlapy/jax {bx / bj:.2f}  "
              f"first call {fmt_time(first_x)} / {fmt_time(first_j)}  "
              f"{'same bits' if same else 'BITS DIFFER'}")


if __name__ == "__main__":
    main()
