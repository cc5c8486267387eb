"""Convolutions one step outside the model rows (issue 17's neighbours): other layouts
(NCHW / OIHW, NCW), strides, a small-feature first layer, kernel and lhs dilation (the
transposed convolution), groups, depthwise, bf16 / f16 and 3-d, each forward and as the
gradient of a sum of squares through it (input and kernel gradients), against JAX's jitted
function in the same process: the two take turns (CPU time and wall time per call, each
the best round's median), results compared, the load average printed beside each row.

    .venv/bin/python benchmarks/conv_neighbours.py [--only NAME[,NAME]] [--rounds N]
                                                   [--calls N] [--no-grad] [--quick]

--quick: 2 rounds of 3 calls (a check that every row runs, not a measurement).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from harness import cpu_wall_median

NHWC, NCHW, NCH, NHC = (("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"),
                        ("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"))
# name: (lhs, rhs, strides, padding, dimension numbers, extra keywords, dtype)
CASES = {
    "conv1d-nch": ((16, 64, 128), (128, 64, 5), (1,), "VALID", NCH, {}, "f32"),
    "conv1d-nhc": ((16, 128, 64), (5, 64, 128), (1,), "SAME", NHC, {}, "f32"),
    "nchw-3x3": ((8, 32, 32, 32), (64, 32, 3, 3), (1, 1), "SAME", NCHW, {}, "f32"),
    "nchw-3x3-s2": ((8, 32, 32, 32), (64, 32, 3, 3), (2, 2), "SAME", NCHW, {}, "f32"),
    "rhs-dilated": ((8, 32, 32, 32), (3, 3, 32, 64), (1, 1), "SAME", NHWC,
                    {"rhs_dilation": (2, 2)}, "f32"),
    "7x7": ((8, 32, 32, 32), (7, 7, 32, 64), (1, 1), "SAME", NHWC, {}, "f32"),
    "stem-7x7-s2": ((8, 64, 64, 3), (7, 7, 3, 64), (2, 2), "SAME", NHWC, {}, "f32"),
    "depthwise-s2": ((8, 32, 32, 64), (3, 3, 1, 64), (2, 2), "SAME", NHWC,
                     {"feature_group_count": 64}, "f32"),
    "grouped-4": ((8, 32, 32, 64), (3, 3, 16, 64), (1, 1), "SAME", NHWC,
                  {"feature_group_count": 4}, "f32"),
    "bf16": ((8, 32, 32, 32), (3, 3, 32, 64), (1, 1), "SAME", NHWC, {}, "bf16"),
    "f16": ((8, 32, 32, 32), (3, 3, 32, 64), (1, 1), "SAME", NHWC, {}, "f16"),
    "3d": ((4, 8, 16, 16, 16), (3, 3, 3, 16, 32), (1, 1, 1), "SAME",
           ("NDHWC", "DHWIO", "NDHWC"), {}, "f32"),
    "lhs-dilated": ((8, 16, 16, 32), (3, 3, 32, 64), (1, 1), ((2, 2), (2, 2)), NHWC,
                    {"lhs_dilation": (2, 2)}, "f32"),
}


def _pair(name, case, grad: bool, rounds: int, calls: int) -> None:
    import jax
    import ml_dtypes

    import xlapy as xp
    import xlapy.lax as xl
    lhs, rhs, strides, pad, dn, extra, t = case
    dt = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[t]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(lhs).astype(dt)
    w = rng.standard_normal(rhs).astype(dt)

    def fn(lax, grad_fn):
        def conv(x, w):
            return lax.conv_general_dilated(x, w, strides, pad, dimension_numbers=dn,
                                            **extra)
        if not grad:
            return conv
        return grad_fn(lambda x, w: (conv(x, w).astype(np.float32) ** 2).sum(),
                       argnums=(0, 1))

    fx, fj = xp.jit(fn(xl, xp.grad)), jax.jit(fn(jax.lax, jax.grad))
    jx, jw = jax.device_put(x), jax.device_put(w)
    got, want = fx(x, w), fj(jx, jw)
    got = got if grad else (got,)
    want = want if grad else (want,)
    err = 0.0
    for g, v in zip(got, want):
        g, v = np.asarray(g, np.float64), np.asarray(v, np.float64)
        diff = np.where(g == v, 0.0, np.abs(g - v))   # equal infinities: no difference
        finite = np.abs(v[np.isfinite(v)])
        err = max(err, float(np.max(diff)) / max(float(finite.max(initial=0.0)), 1e-30))
    fns = {"xlapy": lambda: np.asarray(fx(x, w)[0] if grad else fx(x, w)),
           "jax": lambda: jax.block_until_ready(fj(jx, jw))}
    res = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            res[k].append(cpu_wall_median(f, calls))
    xb, jb = min(res["xlapy"]), min(res["jax"])
    print(f"{name + (' grad' if grad else ''):22} xlapy cpu {xb[0] * 1e3:7.2f} ms wall "
          f"{xb[1] * 1e3:7.2f} | JAX cpu {jb[0] * 1e3:7.2f} wall {jb[1] * 1e3:7.2f} | "
          f"xlapy/JAX cpu {xb[0] / jb[0]:.2f} wall {xb[1] / jb[1]:.2f} | rel. diff {err:.1e}"
          f" | load {os.getloadavg()[0]:.1f}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--no-grad", action="store_true")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.calls = 2, 3
    print(f"load {os.getloadavg()}")
    for name in args.only.split(","):
        for grad in (False,) if args.no_grad else (False, True):
            _pair(name, CASES[name], grad, args.rounds, args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
