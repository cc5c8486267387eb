"""Attention inference blocks of several shapes, xlapy against JAX (issue 17: batched dots
on transposed views, the softmax between them).

    .venv/bin/python benchmarks/attention.py [--quick] [--only SUBSTRING]

Each row: layernorm, Q/K/V projections, per-head scores, softmax, weighted sum, output
projection and residual (benchmarks/model_fns.py's block with its head count, sequence
length, width and batch as parameters). xlapy and JAX take turns in one process; each
prints the median over rounds of wall and CPU time per call (CPU: all of the process's
threads, time.process_time) and the xlapy / JAX ratios of both. Results are compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

# (batch, sequence, width, heads)
SHAPES = [(4, 256, 256, 4), (1, 64, 256, 4), (1, 1024, 256, 4), (2, 512, 512, 8),
          (4, 128, 128, 2), (1, 256, 768, 12)]


def block(np_, heads):
    def layernorm(x, g, b):
        mu = np_.mean(x, -1, keepdims=True)
        var = np_.mean(np_.square(x - mu), -1, keepdims=True)
        return (x - mu) / np_.sqrt(var + 1e-5) * g + b

    def attention(p, x):
        g, b, wq, wk, wv, wo = p
        bsz, seq, width = x.shape
        dh = width // heads
        h = layernorm(x, g, b)

        def split(t):
            return np_.transpose(np_.reshape(t, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
        s = np_.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(dh).astype(np.float32)
        s = s - np_.max(s, -1, keepdims=True)
        e = np_.exp(s)
        a = e / np_.sum(e, -1, keepdims=True)
        o = np_.einsum("bhqk,bhkd->bhqd", a, v)
        o = np_.reshape(np_.transpose(o, (0, 2, 1, 3)), (bsz, seq, width))
        return x + o @ wo
    return attention


def data(batch, seq, width, rng):
    f32 = np.float32
    p = [np.ones(width, f32), np.zeros(width, f32)] + \
        [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(f32) for _ in range(4)]
    return p, rng.standard_normal((batch, seq, width)).astype(f32)


def per_call(fn, calls: int) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.process_time() - c0) / calls, (time.perf_counter() - w0) / calls


def main(argv=None) -> int:
    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--only", help="substring of a row name")
    args = ap.parse_args(argv)
    rounds = 5 if args.quick else 15
    rng = np.random.default_rng(0)
    for batch, seq, width, heads in SHAPES:
        name = f"attention b{batch} s{seq} w{width} h{heads}"
        if args.only and args.only not in name:
            continue
        p, x = data(batch, seq, width, rng)
        xf = xp.jit(block(xnp, heads))
        jf = jax.jit(block(jnp, heads))
        jp, jx = [jax.device_put(a) for a in p], jax.device_put(x)
        got, want = np.asarray(xf(p, x)), np.asarray(jf(jp, jx))
        err = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
        fns = {"xlapy": lambda: xf(p, x),  # noqa: B023 (timed in this iteration)
               "jax": lambda: jax.block_until_ready(jf(jp, jx))}  # noqa: B023
        t0 = time.perf_counter()
        fns["jax"]()
        calls = max(2, min(50, int(0.05 / max(time.perf_counter() - t0, 1e-6))))
        res = {k: ([], []) for k in fns}
        for f in fns.values():
            f()
        for _ in range(rounds):
            for k, f in fns.items():
                c, w = per_call(f, calls)
                res[k][0].append(c)
                res[k][1].append(w)
        med = {k: (statistics.median(c), statistics.median(w)) for k, (c, w) in res.items()}
        (xc, xw), (jc, jw) = med["xlapy"], med["jax"]
        print(f"{name:34s} xlapy {xw * 1e3:8.2f} ms wall {xc * 1e3:8.2f} ms CPU  "
              f"jax {jw * 1e3:8.2f} ms wall {jc * 1e3:8.2f} ms CPU  "
              f"xlapy/jax wall {xw / jw:5.2f} CPU {xc / jc:5.2f}  max rel err {err:.1e}",
              flush=True)
        if err > 1e-4:
            print(f"  RESULTS DIFFER ({err:.1e})", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
