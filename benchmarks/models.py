"""The model-class suite (issue 17): the five workloads of benchmarks/model_fns.py, each as
a training step (gradient of the loss for every parameter, SGD update) and in its
inference form, against JAX and, when installed, torch eager and torch.compile.

    .venv/bin/python benchmarks/models.py [--quick] [--only NAME[,NAME]] [--no-torch]
                                           [--busy]

Every row is timed with the systems taking turns (run.run_times), after a first-call
measurement (trace + compile + run, median of five cold calls as in run.py), and its
results are checked against JAX's (xlapy and torch alike) after the timing, so that the
first call is a real one. `make bench` runs this suite after the main rows
(benchmarks/run.py); alone it prints its rows. Each conv-bearing row also prints how many
GFLOP/s its convolutions and dots reach (the flops counted from the HLO JAX lowers), and
under it a line per distinct convolution of the row (benchmarks/conv_rates.py): timed
alone in xlapy and JAX, its GFLOP/s as a fraction of the machine's gemm rate (a square f32
gemm, xlapy's own and OpenBLAS's) measured in the same run. --busy runs everything beside a
CPU-bound neighbour process (benchmarks/busy.py).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import model_fns as M  # noqa: E402
from harness import first_call, fmt_time  # noqa: E402

FORMS = ("train", "infer")
# results checked against JAX: relative to the largest magnitude of each output
RTOL = 2e-3


def _flat(tree):
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _flat(t)]
    return [np.asarray(tree)]


def check(got, want, what: str) -> str:
    """'' when every output matches, else a message naming the first mismatch."""
    g, w = _flat(got), _flat(want)
    if len(g) != len(w):
        return f"{what}: {len(g)} outputs, JAX has {len(w)}"
    for k, (a, b) in enumerate(zip(g, w)):
        if a.shape != b.shape:
            return f"{what}: output {k} has shape {a.shape}, JAX's {b.shape}"
        scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-6)
        err = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
        if not np.isfinite(err) or err > RTOL * scale:
            return f"{what}: output {k} differs by {err:.3g} (scale {scale:.3g})"
    return ""


def flops_of(jitted, args) -> float:
    """Flops of the convolutions and dots JAX compiles for this function (its cost
    analysis), for the GFLOP/s column; 0 when unavailable."""
    try:
        ca = jitted.lower(*args).compile().cost_analysis()
        if isinstance(ca, list):
            ca = ca[0]
        return float(ca.get("flops", 0.0))
    except Exception:  # a column only: any failure leaves it empty
        return 0.0


def build_rows(quick: bool = False, with_torch: bool = True, only=None):
    """[(row name, model, form, params, inputs, {system: fn(params, inputs)})]"""
    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    xl_models = M.models(xnp, xp.lax)
    jx_models = M.models(jnp, jax.lax)
    tmods = None
    if with_torch:
        from torch_models import torch_models
        tmods = torch_models()
    rows = []
    for name in M.BUILDERS:
        for form in FORMS:
            title = f"{M.TITLES[name]} {form}"
            if only and not any(s in title for s in only):
                continue
            params, inputs = M.data(name)
            xl_loss, xl_infer = xl_models[name]
            jx_loss, jx_infer = jx_models[name]
            if form == "train":
                xf = xp.jit(M.train_step(xp.grad, xl_loss))
                jf = jax.jit(M.train_step(jax.grad, jx_loss))
            else:
                xf, jf = xp.jit(xl_infer), jax.jit(jx_infer)
            jp = [jax.device_put(a) for a in params]
            ji = [jax.device_put(a) for a in inputs]
            fns = {"xlapy": (lambda f, p, i: lambda: f(p, i))(xf, params, inputs),
                   "jax": (lambda f, p, i: lambda: jax.block_until_ready(f(p, i)))(jf, jp, ji)}
            if tmods is not None and name in tmods:
                fns.update(tmods[name](form, params, inputs))
            rows.append(dict(name=title, model=name, form=form, fns=fns, jitted=jf,
                             jargs=(jp, ji), hlo=xf.lower(params, inputs).as_text()))
    return rows


def run_rows(rows, budget: float, run_times, resets: dict, out=print):
    """Times every row (first calls, then the systems taking turns), checks the results
    against JAX's and returns result dicts as run.py reports them."""
    results = []
    for r in rows:
        fns = r["fns"]
        row = {"name": r["name"], "issue": "17", "times": {}, "first_call": {},
               "suite": "models"}
        for system, fn in fns.items():
            if system in ("xlapy", "jax", "torch"):
                calls = first_call(fn, reset=resets.get(system))
                row["first_call"][system] = statistics.median(calls)
                row.setdefault("first_call_samples", {})[system] = calls
        row["cpu"] = {}
        row["times"] = run_times(fns, (), budget, cpu=row["cpu"])
        want = fns["jax"]()
        errors = []
        for system, fn in fns.items():
            if system != "jax":
                msg = check(fn(), want, f"{r['name']} {system}")
                if msg:
                    errors.append(msg)
        row["check"] = "; ".join(errors) or "ok"
        flops = flops_of(r["jitted"], r["jargs"])
        if flops:
            row["flops"] = flops
        results.append(row)
        out(line(row))
        if r.get("hlo") and "convolution(" in r["hlo"]:
            # each convolution alone, against the machine's gemm rate in this run
            # (the gemm rate measured again for each row: a spell of load shifts both)
            import conv_rates
            rates = conv_rates.gemm_rates(min(budget, 0.5))
            out("  " + conv_rates.gemm_line(rates))
            row["gemm_rates"] = rates
            row["convs"] = []
            for text, conv in conv_rates.rate_lines(r["hlo"], min(budget, 0.5), rates):
                out(text)
                row["convs"].append(conv)
    return results


def line(row) -> str:
    t = row["times"]
    parts = [f"{row['name']:44s}"] + [f"{s} {fmt_time(v)}" for s, v in t.items()]
    if "jax" in t and "xlapy" in t:
        parts.append(f"xlapy/jax {t['xlapy'] / t['jax']:5.2f}")
    c = row.get("cpu", {})
    if "jax" in c and "xlapy" in c:
        parts.append(f"CPU {c['xlapy'] / c['jax']:5.2f}")
    if row.get("flops"):
        parts.append(f"xlapy {row['flops'] / t['xlapy'] / 1e9:5.0f} GFLOP/s")
    fc = row.get("first_call", {})
    if "xlapy" in fc and "jax" in fc:
        parts.append(f"first call {fmt_time(fc['xlapy']).strip()} / "
                     f"{fmt_time(fc['jax']).strip()}")
    if row.get("check") != "ok":
        parts.append(f"CHECK FAILED: {row.get('check')}")
    return "  ".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing")
    ap.add_argument("--only", help="comma-separated substrings of row names")
    ap.add_argument("--no-torch", action="store_true", help="skip torch even when installed")
    ap.add_argument("--busy", action="store_true",
                    help="run beside a CPU-bound neighbour process (benchmarks/busy.py)")
    ap.add_argument("--budget", type=float, default=None, help="seconds of timing per row")
    args = ap.parse_args(argv)
    import tempfile
    os.environ["XLAPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="xlapy-bench-cache-")
    os.environ["XLAPY_DISABLE_CACHE"] = "1"
    from run import run_times
    import jax

    import xlapy as xp
    resets = {"xlapy": xp.clear_caches, "jax": jax.clear_caches}
    rows = build_rows(args.quick, not args.no_torch,
                      args.only.split(",") if args.only else None)
    budget = args.budget or (0.5 if args.quick else 1.5)
    if args.busy:
        from busy import neighbour
        with neighbour():
            results = run_rows(rows, budget, run_times, resets)
    else:
        results = run_rows(rows, budget, run_times, resets)
    bad = [r for r in results if r["check"] != "ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
