"""Writes benchmark results as Markdown, JSON and an SVG bar chart (no plotting library
needed: the chart is a few rectangles)."""

from __future__ import annotations

import datetime
import json
import pathlib

from harness import fmt_time

SYSTEMS = ("xlapy", "numpy", "jax", "numexpr", "torch", "torch.softmax")


def write_reports(out: pathlib.Path, limits: dict, results: list, quick: bool) -> None:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    busy = limits.get("busy")
    load = limits.get("load_average")
    (out / "benchmarks.json").write_text(json.dumps(
        {"date": stamp, "quick": quick, "machine": limits, "results": results}, indent=1))
    lines = [
        "# Benchmarks",
        "",
        f"Measured {stamp} with `make bench` (`.venv/bin/python benchmarks/run.py"
        f"{' --quick' if quick else ''}{' --busy' if busy else ''}`) on {limits['cpu']}, "
        f"{limits['cores']} cores"
        + (f", load average {load[0]:.1f} at the start and {load[1]:.1f} at the end"
           if load else "")
        + (" (every row run beside a CPU-bound neighbour process, benchmarks/busy.py: "
           "one core's worth of another job)" if busy else "") + ". Machine "
        f"limits measured in the same run: copy bandwidth {limits['copy_bandwidth_GBps']:.1f} "
        f"GB/s (read + write of a {'64' if quick else '256'} MB array, copied by all cores "
        "at once), gemm "
        f"{limits['gemm_GFLOPs']:.0f} GFLOP/s (NumPy's BLAS). Times are the best of repeated "
        "calls (first call excluded), taken in five rounds in which the systems run in turn "
        "(after 50 ms idle each, so that another system's spinning worker threads are "
        "gone), so that a spell of machine load slows all of them; ratios below 1 mean "
        "xlapy is faster. JAX gets its "
        "inputs already on its device (CPU buffers). First call = trace + compile + run with "
        "no compiled program to reuse: the median of 5 such calls, the first into an empty "
        "cache and the others after clearing each system's caches (`xlapy.clear_caches()`, "
        "`jax.clear_caches()`; xlapy's disk cache off), each after 0.15 s idle; torch.compile "
        "once. From the second of those calls on, xlapy's outputs reuse the memory of the "
        "previous call's dropped result (`output_pool.py` recycles dropped results across "
        "programs, as when an edited function is run again) instead of page-faulting fresh "
        "memory in; the last column is each system's first sample alone (xlapy's into fresh "
        "memory). CPU xlapy/JAX: the ratio of CPU time per call (every thread of the "
        "process, spinning ones included; the least of the five rounds). "
        "All after each system's one-time start-up, which is timed "
        "on its own before the rows (a jitted 256x256 matmul): "
        + ", ".join(f"{k[:-3].replace('_', ' ')} {v:.0f} ms" for k, v in limits.items()
                    if k.endswith("_start_up_ms"))
        + " (xlapy's includes building its thread pool and gemm kernel, which a user's "
        "machine does once and then loads from the disk cache). Where xlapy beats "
        "the bandwidth bound (ratio below 1), the 64 MB inputs are partly served from the "
        "last-level cache.",
        "",
        "| workload | issue | xlapy | NumPy | JAX | xlapy/JAX | CPU xlapy/JAX | xlapy/NumPy | "
        "xlapy/bw bound | first call xlapy | first call JAX | first calls xlapy/JAX | "
        "1st of 5: xlapy / JAX |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    models = [r for r in results if r.get("suite") == "models"]
    big = [r for r in results if r.get("suite") == "big_constants"]
    results = [r for r in results if r.get("suite") not in ("models", "big_constants")]
    for r in results:
        t = r["times"]
        cells = [r["name"], r.get("issue", "")]
        for s in ("xlapy", "numpy", "jax"):
            cells.append(fmt_time(t[s]).strip() if s in t else "")
        cells.append(f"{t['xlapy'] / t['jax']:.2f}" if "jax" in t and "xlapy" in t else "")
        c = r.get("cpu", {})
        cells.append(f"{c['xlapy'] / c['jax']:.2f}" if "jax" in c and "xlapy" in c else "")
        cells.append(f"{t['xlapy'] / t['numpy']:.2f}" if "numpy" in t and "xlapy" in t else "")
        bb = r.get("bandwidth_bound")
        cells.append(f"{t['xlapy'] / bb:.2f}" if bb else "")
        fc = r.get("first_call", {})
        cells.append(fmt_time(fc["xlapy"]).strip() if "xlapy" in fc else "")
        cells.append(fmt_time(fc["jax"]).strip() if "jax" in fc else "")
        cells.append(f"{fc['xlapy'] / fc['jax']:.2f}" if "jax" in fc and "xlapy" in fc else "")
        samples = r.get("first_call_samples", {})
        cells.append(" / ".join(fmt_time(samples[k][0]).strip() for k in ("xlapy", "jax")
                                if samples.get(k)))
        lines.append("| " + " | ".join(cells) + " |")
    others = ("numexpr", "torch", "torch.softmax")
    extra = [r for r in results if any(s in r["times"] for s in others)]
    if extra:
        lines += ["", "Other systems where installed (numexpr; torch = torch.compile with the "
                  "default inductor backend; torch.softmax = the hand-fused kernel, eager):", "",
                  "| workload | xlapy | numexpr | torch | torch.softmax | xlapy/best other | "
                  "first call torch |", "|---|---|---|---|---|---|---|"]
        for r in extra:
            t = r["times"]
            cells = [r["name"], fmt_time(t["xlapy"]).strip()]
            cells += [fmt_time(t[s]).strip() if s in t else "" for s in others]
            best = min(t[s] for s in others if s in t)
            cells.append(f"{t['xlapy'] / best:.2f}")
            fc = r.get("first_call", {})
            cells.append(fmt_time(fc["torch"]).strip() if "torch" in fc else "")
            lines.append("| " + " | ".join(cells) + " |")
    if models:
        lines += _model_table(models, limits)
    if big:
        lines += _big_constants_table(big)
    lines += ["", "![time relative to JAX](benchmarks.svg)", ""]
    (out / "benchmarks.md").write_text("\n".join(lines))
    (out / "benchmarks.svg").write_text(_svg(results))


def _big_constants_table(rows: list) -> list:
    """Big programs (benchmarks/big_constants.py): parse, compile, first run against XLA."""
    out = ["", "## Big programs: constants (issue 17)", "",
           "`benchmarks/big_constants.py` (`make bench` runs the 1M-value row; the script "
           "takes 10M too): an HLO module whose weights are f32 literals, parsed, compiled "
           "and run once by xlapy and by XLA (jaxlib on the same text), the best of 2 "
           "rounds, results compared. Literal reader: xlapy's scanner alone on the largest "
           "literal.", "",
           "| module | MB of text | parse xlapy / XLA | compile xlapy / XLA | "
           "first run xlapy / XLA | parse + compile xlapy/XLA | literal reader |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        xp, xl = r["times"]["xlapy"], r["times"]["xla"]
        ratio = (xp["parse"] + xp["compile"]) / (xl["parse"] + xl["compile"])
        out.append(f"| {r['name']} | {r['text_MB']:.0f} | "
                   + " | ".join(f"{fmt_time(xp[k]).strip()} / {fmt_time(xl[k]).strip()}"
                                for k in ("parse", "compile", "first run"))
                   + f" | {ratio:.2f} | {r['scan_values_per_s'] / 1e6:.1f} M values/s "
                   f"({r.get('scan_values_per_cpu_s', 0) / 1e6:.1f} per CPU s) |")
    return out


def _model_table(rows: list, limits: dict) -> list:
    """The model-class suite (benchmarks/models.py): training steps and inference forms."""
    systems = ("xlapy", "jax", "torch eager", "torch")
    out = ["", "## Model classes (issue 17)", "",
           "`benchmarks/models.py` (also run by `make bench`): each workload of "
           "`benchmarks/model_fns.py` as a training step (gradient of the loss for every "
           "parameter and an SGD update) and in its inference form; torch eager and "
           "torch.compile where installed, on the same inputs. Every result is checked "
           "against JAX's (check column). GFLOP/s: the flops of the convolutions and dots "
           "(JAX's cost analysis of the same function) per xlapy's time, beside the "
           f"machine's gemm rate of {limits['gemm_GFLOPs']:.0f} GFLOP/s"
           + (" (all rows run beside a CPU-bound neighbour process)" if limits.get("busy")
              else "") + ".", "",
           "| workload | xlapy | JAX | torch eager | torch.compile | xlapy/JAX | xlapy GFLOP/s | "
           "first call xlapy | first call JAX | check |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t, fc = r["times"], r.get("first_call", {})
        cells = [r["name"]] + [fmt_time(t[s]).strip() if s in t else "" for s in systems]
        cells.append(f"{t['xlapy'] / t['jax']:.2f}" if "jax" in t else "")
        cells.append(f"{r['flops'] / t['xlapy'] / 1e9:.0f}" if r.get("flops") else "")
        cells += [fmt_time(fc[s]).strip() if s in fc else "" for s in ("xlapy", "jax")]
        cells.append(r.get("check", ""))
        out.append("| " + " | ".join(cells) + " |")
    return out


def _svg(results: list) -> str:
    rows = [r for r in results if "jax" in r["times"] and "xlapy" in r["times"]]
    w, bar_h, gap, left = 760, 16, 10, 260
    h = 40 + len(rows) * (2 * bar_h + gap)
    scale = (w - left - 40) / max([2.0] + [r["times"]["numpy"] / r["times"]["jax"]
                                           for r in rows if "numpy" in r["times"]]
                                  + [r["times"]["xlapy"] / r["times"]["jax"] for r in rows])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="16">time relative to JAX (shorter is faster; line = JAX)</text>']
    y = 30
    x1 = left + scale
    for r in rows:
        t = r["times"]
        out.append(f'<text x="{left - 6}" y="{y + bar_h}" text-anchor="end">'
                   f'{_esc(r["name"])}</text>')
        for k, (s, color) in enumerate((("xlapy", "#2b7bb9"), ("numpy", "#bbbbbb"))):
            if s not in t:
                continue
            v = t[s] / t["jax"]
            out.append(f'<rect x="{left}" y="{y + k * bar_h}" width="{v * scale:.1f}" '
                       f'height="{bar_h - 2}" fill="{color}"/>')
            out.append(f'<text x="{left + v * scale + 4:.1f}" y="{y + k * bar_h + bar_h - 4}">'
                       f'{s} {v:.2f}</text>')
        y += 2 * bar_h + gap
    out.append(f'<line x1="{x1:.1f}" y1="24" x2="{x1:.1f}" y2="{h - 6}" stroke="#d33"/>')
    out.append("</svg>")
    return "\n".join(out)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
