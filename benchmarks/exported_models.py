"""Exported models: HLO modules that TensorFlow (and JAX) programs exported for XLA's own CPU
benchmarks, run by xlapy and by XLA (jaxlib) on the same text, results compared.

    .venv/bin/python benchmarks/exported_models.py [PATH ...] [--runs N] [--seed S]

XLA keeps such modules in its repository under xla/backends/cpu/benchmarks/hlo
(graphsage_tf.hlo: a graph network; ssd_mobilenet_tf.hlo: a MobileNet-SSD with bf16
convolutions; stable_diffusion_tf_bf16_bs1.hlo; ...). They are not part of xlapy: copy the
files you want into a directory and pass it (or the files), or put them in the cache
directory ($XLAPY_EXPORTED_MODELS, default ~/.cache/xlapy/exported_models). With no module
found the script says so and exits 0.

Their weights are elided (`constant({...})`): fill_elided() replaces each with seeded random
values of the constant's type (floats: N(0, 1/fan_in) rounded to the type, the same text for
both systems; integers: small non-negative values, which are valid gather indices), and the
entry parameters get seeded random inputs (integer ones in [0, 10)). For each module: parse,
compile and first-run time per system, then the best of N runs, the systems alternating,
and the outputs compared (a bf16 model within a few percent of the output's scale).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import xla_hlo  # noqa: E402

_ELIDED = re.compile(r"\b(pred|[sfu]\d+|bf16)\[([\d,]*)\](?:\{[\d,]*\})?\s+constant\(\{\.\.\.\}\)")
_POOL = 4096


def cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("XLAPY_EXPORTED_MODELS")
                        or pathlib.Path.home() / ".cache" / "xlapy" / "exported_models")


def _dtype(t: str):
    import ml_dtypes
    return {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32,
            "f64": np.float64}.get(t)


def fill_elided(text: str, seed: int = 0) -> str:
    """The module text with every elided constant ({...}) given seeded random values."""
    rng = np.random.default_rng(seed)
    pools: dict = {}

    def words(t: str, dims: list[int]) -> np.ndarray:
        n = int(np.prod(dims)) if dims else 1
        if t == "pred":
            return np.where(rng.random(n) < 0.5, "true", "false")
        dt = _dtype(t)
        if dt is None:   # integers: small, non-negative (indices stay in range)
            return np.array(["0", "1", "2", "3"])[rng.integers(0, 4, n)]
        # floats: exact values of the type times a power of two near 1/sqrt(fan in), so
        # that every formatted value reads back as itself in both systems
        fan_in = int(np.prod(dims[:-1])) if len(dims) > 1 else 1
        key = (t, round(np.log2(np.sqrt(max(fan_in, 1)))))
        if key not in pools:
            v = rng.standard_normal(_POOL).astype(dt).astype(np.float64) * 2.0 ** -key[1]
            pools[key] = np.char.mod("%.17g", v) if t == "f64" else \
                np.char.mod("%.9g", v.astype(np.float32))
        return pools[key][rng.integers(0, _POOL, n)]

    def nest(w: np.ndarray, dims: list[int]) -> str:
        if not dims:
            return w[0]
        if len(dims) == 1:
            return "{" + ",".join(w) + "}"
        rows = w.reshape(-1, dims[-1])
        inner = ["{" + ",".join(r) + "}" for r in rows]
        for d in reversed(dims[1:-1]):
            inner = ["{" + ",".join(inner[k:k + d]) + "}" for k in range(0, len(inner), d)]
        return "{" + ",".join(inner) + "}"

    def repl(m: re.Match) -> str:
        t = m.group(1)
        dims = [int(d) for d in m.group(2).split(",") if d]
        head = m.group(0)[:m.group(0).rindex("constant(")]
        return f"{head}constant({nest(words(t, dims), dims)})"

    return _ELIDED.sub(repl, text)


def inputs_for(module, seed: int = 1) -> list:
    """Seeded random arguments for the entry parameters (xlapy's parsed module)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in module.entry.parameters:
        s = p.shape
        if s.is_tuple:
            raise SystemExit(f"module {module.name}: tuple parameters are not supported here")
        t = s.element_type
        if t.is_float:
            out.append(rng.standard_normal(s.dims).astype(s.dtype))
        elif t.is_pred:
            out.append(rng.random(s.dims) < 0.5)
        else:
            out.append(rng.integers(0, 10, s.dims).astype(s.dtype))
    return out


def _leaves(result) -> list:
    if isinstance(result, (list, tuple)):
        return [np.asarray(r) for leaf in result for r in _leaves(leaf)]
    return [np.asarray(result)]


def compare(got: list, want: list, bf16: bool) -> str:
    """'ok' or what differs: each output within rtol of the output's largest magnitude."""
    if len(got) != len(want):
        return f"{len(got)} outputs against XLA's {len(want)}"
    tol = 3e-2 if bf16 else 1e-4
    for k, (g, w) in enumerate(zip(got, want)):
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape} against XLA's {w.shape}"
        if not np.array_equal(np.isnan(g64), np.isnan(w64)):
            return f"output {k}: NaNs differ"
        scale = max(np.nanmax(np.abs(w64)) if w64.size else 0.0, 1e-30)
        err = np.nanmax(np.abs(g64 - w64)) / scale if w64.size else 0.0
        if err > tol:
            return f"output {k}: max error {err:.2e} of the output's scale (tolerance {tol})"
    return "ok"


def run_model(text: str, name: str, runs: int = 5, seed: int = 0) -> dict:
    import xlapy
    from xlapy.backends.base import get_platform
    from xlapy.hlo import parse
    text = fill_elided(text, seed)
    row = {"name": name, "MB": len(text) / 1e6, "xlapy": {}, "xla": {}}
    xlapy.clear_caches()
    t0 = time.perf_counter()
    module = parse(text, name)
    t1 = time.perf_counter()
    exe = get_platform("cpu").compiler.compile(module)
    t2 = time.perf_counter()
    args = inputs_for(module, seed + 1)
    got = _leaves(exe.run(*args))
    t3 = time.perf_counter()
    row["xlapy"] = {"parse": t1 - t0, "compile": t2 - t1, "first run": t3 - t2}
    t0 = time.perf_counter()
    xm = xla_hlo.parse(text)
    t1 = time.perf_counter()
    xexe = xla_hlo.compile(xm)
    t2 = time.perf_counter()
    bufs = xla_hlo.put(args)
    want = xla_hlo.run(xexe, bufs)
    t3 = time.perf_counter()
    row["xla"] = {"parse": t1 - t0, "compile": t2 - t1, "first run": t3 - t2}
    row["values"] = sum(int(np.prod(i.shape.dims)) for c in module.computations
                        for i in c.instructions if i.opcode == "constant"
                        and not i.shape.is_tuple)
    row["check"] = compare(got, want, bf16="bf16" in text)
    best = {"xlapy": float("inf"), "xla": float("inf")}
    for r in range(runs):
        order = [("xlapy", lambda: exe.run(*args)),
                 ("xla", lambda: [np.asarray(o) for o in xla_hlo.run(xexe, bufs)])]
        for sys_name, fn in (order if r % 2 == 0 else order[::-1]):
            t = time.perf_counter()
            fn()
            best[sys_name] = min(best[sys_name], time.perf_counter() - t)
    row["run"] = best
    return row


def line(row: dict) -> str:
    xp, xl, run = row["xlapy"], row["xla"], row["run"]
    return (f"{row['name']} ({row['MB']:.1f} MB, {row['values'] / 1e6:.2f} M constant "
            f"values): parse xlapy {xp['parse']:.2f} s / XLA {xl['parse']:.2f} s; compile "
            f"{xp['compile']:.2f} / {xl['compile']:.2f} s; run {run['xlapy'] * 1e3:.2f} / "
            f"{run['xla'] * 1e3:.2f} ms = {run['xlapy'] / run['xla']:.2f}x XLA; "
            f"check {row['check']}")


def warm_up() -> None:
    """Each system's one-time start-up before the first model: XLA's CPU client; xlapy's
    runtime and gemm kernels of every type (built once per process, loaded from the disk
    cache in normal use; the cache is off here, so that the models compile)."""
    from xlapy.backends.base import get_platform
    from xlapy.hlo import parse
    lines = ["HloModule warm_up", "", "ENTRY main {", "  p = f32[96,96] parameter(0)"]
    for t in ("f32", "bf16", "f16", "f64"):
        lines += [f"  c_{t} = {t}[96,96] convert(p)",
                  f"  d_{t} = {t}[96,96] dot(c_{t}, c_{t}), lhs_contracting_dims={{1}}, "
                  "rhs_contracting_dims={0}",
                  f"  r_{t} = f32[96,96] convert(d_{t})"]
    lines += ["  ROOT t = (f32[96,96], f32[96,96], f32[96,96], f32[96,96]) "
              "tuple(r_f32, r_bf16, r_f16, r_f64)", "}", ""]
    text = "\n".join(lines)
    x = np.ones((96, 96), np.float32)
    get_platform("cpu").compiler.compile(parse(text)).run(x)
    xla_hlo.run(xla_hlo.compile(xla_hlo.parse(text)), xla_hlo.put([x]))


def find_modules(paths: list[str]) -> list[pathlib.Path]:
    found = []
    for p in map(pathlib.Path, paths or [cache_dir()]):
        if p.is_dir():
            found += sorted(p.glob("*.hlo"))
        elif p.is_file():
            found.append(p)
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="module files or directories of *.hlo")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.environ["XLAPY_DISABLE_CACHE"] = "1"
    modules = find_modules(args.paths)
    if not modules:
        print(f"no exported modules found (looked in {', '.join(args.paths) or cache_dir()}); "
              "copy XLA's xla/backends/cpu/benchmarks/hlo/*.hlo there to run them")
        return 0
    warm_up()
    failed = 0
    for path in modules:
        try:
            row = run_model(path.read_text(), path.name, args.runs, args.seed)
        except Exception as e:  # (report each model and go on)
            print(f"{path.name}: FAILED: {type(e).__name__}: {str(e)[:500]}", flush=True)
            failed += 1
            continue
        print(line(row), flush=True)
        failed += row["check"] != "ok"
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
