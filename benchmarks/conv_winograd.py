"""Winograd convolutions (emitters/conv_winograd.py) against the im2col gemm path, in one
process: each program is compiled twice, with XLAPY_FLAGS --xla_cpu_winograd=true and
=false, and the two are timed taking turns (CPU time and wall time per call, best of each
round's median), with the load average printed beside every figure.

    .venv/bin/python benchmarks/conv_winograd.py [--only NAME[,NAME]] [--rounds N]
                                                 [--threads N]

Rows: every distinct convolution Winograd takes in the ResNet block's and the CNN's
training steps (forward and input gradient; --only resnet-convs / cnn-convs for one), and
the model rows themselves (resnet / cnn, train and infer), with JAX's jitted function
timed in the same rounds (CPU time includes its threads). --threads sets
XLAPY_NUM_THREADS (default 1: xlapy's CPU time is then its wall time).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from harness import cpu_wall_median  # noqa: E402


def _with_flag(on: bool, build):
    saved = os.environ.get("XLAPY_FLAGS", "")
    flag = f"--xla_cpu_winograd={'true' if on else 'false'}"
    os.environ["XLAPY_FLAGS"] = f"{saved} {flag}".strip()
    try:
        return build()
    finally:
        os.environ["XLAPY_FLAGS"] = saved


def ab(name: str, on, off, rounds: int, calls: int, jax_fn=None) -> None:
    """Alternate the callables (and JAX's, when given); print each one's best round (CPU,
    wall)."""
    fns = [("winograd", on), ("gemm", off)] + ([("jax", jax_fn)] if jax_fn else [])
    res = {key: [] for key, _ in fns}
    for _, fn in fns:
        fn()
    for _ in range(rounds):
        for key, fn in fns:
            res[key].append(cpu_wall_median(fn, calls))
    best = {key: min(v) for key, v in res.items()}
    w, g = best["winograd"], best["gemm"]
    line = (f"{name}: winograd cpu {w[0] * 1e3:7.2f} ms wall {w[1] * 1e3:7.2f} ms | "
            f"gemm cpu {g[0] * 1e3:7.2f} ms wall {g[1] * 1e3:7.2f} ms | "
            f"winograd/gemm cpu {w[0] / g[0]:.3f} wall {w[1] / g[1]:.3f}")
    if jax_fn:
        j = best["jax"]
        line += (f" | JAX cpu {j[0] * 1e3:7.2f} ms wall {j[1] * 1e3:7.2f} ms, winograd/JAX "
                 f"cpu {w[0] / j[0]:.3f} wall {w[1] / j[1]:.3f}, gemm/JAX cpu {g[0] / j[0]:.3f}")
    print(f"{line} | load {os.getloadavg()[0]:.1f}", flush=True)


def _conv_row(R, ins, args) -> None:
    from xlapy.backends.base import get_platform
    from xlapy.hlo import parse
    text, comp = R.module_text(ins), get_platform("cpu").compiler
    exe_on = _with_flag(True, lambda: comp.compile(parse(text)))
    exe_off = _with_flag(False, lambda: comp.compile(parse(text)))
    rng = np.random.default_rng(1)
    a = [rng.standard_normal(o.shape.dims).astype(np.float32) for o in ins.operands]
    got, want = (np.asarray(e.run(*a)) for e in (exe_on, exe_off))
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    ab(f"conv {R.describe(ins)} (rel. diff {err:.1e})", lambda: exe_on.run(*a),
       lambda: exe_off.run(*a), args.rounds, args.calls)


def _model_row(title, f, jf, params, inputs, args) -> None:
    import jax

    import xlapy as xp
    fn_on = _with_flag(True, lambda: xp.jit(f).lower(params, inputs).compile())
    fn_off = _with_flag(False, lambda: xp.jit(f).lower(params, inputs).compile())
    jfn = jax.jit(jf)
    jp, ji = jax.device_put(params), jax.device_put(inputs)
    ab(title, lambda: fn_on(params, inputs), lambda: fn_off(params, inputs), args.rounds,
       max(args.calls // 2, 3), lambda: jax.block_until_ready(jfn(jp, ji)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="convs,resnet,cnn")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    os.environ["XLAPY_NUM_THREADS"] = str(args.threads)
    import conv_rates as R
    import jax
    import jax.numpy as jnp
    import model_fns as M

    import xlapy as xp
    import xlapy.numpy as xnp
    from xlapy.backends.cpu.passes.winograd_plan import winograd_plan
    only = args.only.split(",")
    print(f"threads {args.threads}, load {os.getloadavg()}")
    for name in ("resnet", "cnn"):
        if "convs" not in only and f"{name}-convs" not in only:
            continue
        loss, _ = M.models(xnp, xp.lax)[name]
        params, inputs = M.data(name)
        text = xp.jit(M.train_step(xp.grad, loss)).lower(params, inputs).as_text()
        for ins in R.convolutions(text):
            if winograd_plan(ins) is not None:
                _conv_row(R, ins, args)
    for name in ("resnet", "cnn"):
        if name not in only:
            continue
        loss, infer = M.models(xnp, xp.lax)[name]
        jloss, jinfer = M.models(jnp, jax.lax)[name]
        params, inputs = M.data(name)
        for form, f, jf in (("infer", infer, jinfer),
                            ("train", M.train_step(xp.grad, loss),
                             M.train_step(jax.grad, jloss))):
            _model_row(f"{M.TITLES[name]} {form}", f, jf, params, inputs, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
