"""How close each convolution of a model row comes to the machine's gemm rate (issue 17):
every distinct convolution of the row's program (the forward ones, and in a training step
the input- and filter-gradient forms autodiff emits), compiled alone and timed in xlapy
and JAX, its GFLOP/s set beside a square f32 gemm's, xlapy's own and OpenBLAS's (NumPy),
measured in the same run.

    .venv/bin/python benchmarks/conv_rates.py [--only NAME[,NAME]] [--quick]

benchmarks/models.py prints these lines under each conv-bearing row.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time

import numpy as np

GEMM_N = 1024      # the square gemm of the machine's rate


def _best(fn, budget: float) -> float:
    fn()
    best, start = float("inf"), time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        best = min(best, t)
        if t0 + t - start > budget:
            return best


def gemm_rates(budget: float = 0.5) -> dict:
    """{"xlapy": GFLOP/s, "openblas": GFLOP/s} of a GEMM_N^3 f32 product (best time)."""
    import xlapy as xp
    rng = np.random.default_rng(0)
    a = rng.standard_normal((GEMM_N, GEMM_N)).astype(np.float32)
    b = rng.standard_normal((GEMM_N, GEMM_N)).astype(np.float32)
    f = xp.jit(lambda x, y: x @ y)
    flops = 2 * GEMM_N ** 3
    return {"xlapy": flops / _best(lambda: f(a, b), budget) / 1e9,
            "openblas": flops / _best(lambda: a @ b, budget) / 1e9}


def convolutions(hlo_text: str) -> list:
    """The distinct convolution instructions of a module's text (first of each signature)."""
    from xlapy.hlo import parse
    seen, out = set(), []
    for comp in parse(hlo_text).computations:
        for ins in comp.instructions:
            if ins.opcode != "convolution":
                continue
            key = _signature(ins)
            if key not in seen:
                seen.add(key)
                out.append(ins)
    return out


def _signature(ins) -> str:
    text = ins.to_string()
    text = re.sub(r", metadata=\{.*\}$", "", text)
    return re.sub(r"convolution\([^)]*\)", "convolution", text.split(" = ", 1)[1])


def conv_flops(ins) -> int:
    """Multiply-adds x 2: each output element sums over the kernel's input features and
    window (rhs elements per output feature)."""
    rhs, out = ins.operands[1].shape, ins.shape
    o = ins.attrs["dim_labels"].kernel_output_feature
    return 2 * out.size * (rhs.size // rhs.dims[o])


def module_text(ins) -> str:
    lhs, rhs = (o.shape for o in ins.operands)
    body = _signature(ins).replace("convolution", "convolution(%p0, %p1)", 1)
    return (f"HloModule conv_rate\n\nENTRY %main (p0: {lhs}, p1: {rhs}) -> {ins.shape} {{\n"
            f"  %p0 = {lhs} parameter(0)\n  %p1 = {rhs} parameter(1)\n"
            f"  ROOT %c = {body}\n}}\n")


def _jax_conv(ins):
    """The same convolution as a jitted JAX function, or None (kernel reversal, which
    lax.conv_general_dilated does not take)."""
    import jax
    from jax import lax
    a, w = ins.attrs, ins.attrs["window"]
    if any(w.rhs_reversal):
        return None
    text = re.search(r"dim_labels=(\S+?)(,|$)", ins.to_string()).group(1)
    lhs_l, rest = text.split("_")
    rhs_l, out_l = rest.split("->")
    nsp = len(w.size)

    def spec(labels, a_, b_):
        return (labels.index(a_), labels.index(b_)) + tuple(labels.index(str(s))
                                                             for s in range(nsp))
    dn = lax.ConvDimensionNumbers(spec(lhs_l, "b", "f"), spec(rhs_l, "o", "i"),
                                  spec(out_l, "b", "f"))
    fn = functools.partial(
        lax.conv_general_dilated, window_strides=tuple(w.stride),
        padding=tuple(zip(w.pad_low, w.pad_high)), lhs_dilation=tuple(w.lhs_dilate),
        rhs_dilation=tuple(w.rhs_dilate), dimension_numbers=dn,
        feature_group_count=a.get("feature_group_count", 1),
        batch_group_count=a.get("batch_group_count", 1))
    return jax.jit(fn)


def describe(ins) -> str:
    lhs, rhs = (o.shape for o in ins.operands)
    text = _signature(ins)
    labels = re.search(r"dim_labels=(\S+?)(,|$)", text).group(1)
    window = re.search(r"window=\{([^}]*)\}", text).group(1)
    return f"{lhs.dims}x{rhs.dims} {labels} {window}"


def measure(ins, budget: float) -> dict:
    """{"xlapy": s, "jax": s or None, "flops": n, "check": max relative difference}."""
    import jax

    from xlapy.backends.base import flatten, get_platform
    from xlapy.hlo import parse
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(o.shape.dims).astype(np.float32) for o in ins.operands]
    exe = get_platform("cpu").compiler.compile(parse(module_text(ins)))
    times = {"xlapy": _best(lambda: exe.run(*args), budget), "jax": None}
    got = np.asarray(flatten(exe.run(*args))[0])
    jf = _jax_conv(ins)
    check = None
    if jf is not None:
        ja = [jax.device_put(x) for x in args]
        times["jax"] = _best(lambda: jax.block_until_ready(jf(*ja)), budget)
        want = np.asarray(jf(*ja))
        check = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-6))
    return dict(times, flops=conv_flops(ins), check=check)


def rate_lines(hlo_text: str, budget: float, rates: dict) -> list[tuple[str, dict]]:
    """(printed line, result) of every distinct convolution of the module text."""
    from xlapy.backends.cpu.passes.winograd_plan import winograd_plan
    out = []
    for ins in convolutions(hlo_text):
        r = measure(ins, budget)
        gf = r["flops"] / r["xlapy"] / 1e9
        # Winograd does fewer multiply-adds: its rate is the direct method's flops per second
        how = " (Winograd: direct-method flops)" if winograd_plan(ins) is not None else ""
        parts = [f"    conv {describe(ins)}: xlapy {r['xlapy'] * 1e3:7.3f} ms {gf:6.1f} GFLOP/s"
                 f"{how} = {gf / rates['xlapy']:4.2f} of xlapy's gemm, "
                 f"{gf / rates['openblas']:4.2f} of OpenBLAS's"]
        if r["jax"]:
            parts.append(f"JAX {r['jax'] * 1e3:7.3f} ms ({r['flops'] / r['jax'] / 1e9:6.1f} "
                         f"GFLOP/s), xlapy/JAX {r['xlapy'] / r['jax']:4.2f}")
        if r["check"] is not None and r["check"] > 1e-4:
            parts.append(f"CHECK FAILED: differs from JAX by {r['check']:.2g} (relative)")
        out.append(("; ".join(parts), dict(r, conv=describe(ins), gflops=gf)))
    return out


def gemm_line(rates: dict) -> str:
    return (f"machine gemm rate ({GEMM_N}^3 f32, this run): xlapy {rates['xlapy']:.0f} "
            f"GFLOP/s, OpenBLAS {rates['openblas']:.0f} GFLOP/s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated model names (cnn,resnet,mobilenet)")
    ap.add_argument("--quick", action="store_true", help="shorter timing")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    import model_fns as M

    import xlapy as xp
    import xlapy.numpy as xnp
    budget = 0.2 if args.quick else 0.6
    names = args.only.split(",") if args.only else ["cnn", "resnet", "mobilenet"]
    for name in names:
        loss, infer = M.models(xnp, xp.lax)[name]
        params, inputs = M.data(name)
        for form, f in (("train", M.train_step(xp.grad, loss)), ("infer", infer)):
            rates = gemm_rates(budget)   # again for each row: a spell of load shifts both
            print(f"{M.TITLES[name]} {form}; {gemm_line(rates)}")
            for text, _ in rate_lines(xp.jit(f).lower(params, inputs).as_text(), budget,
                                      rates):
                print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
