"""The seeds' TF 1.x softmax tutorial timed as a user times it: `time python
examples/mnist_softmax.py [--xla]` (1000 steps), a fresh process per run, the executor
and XLA taking turns (pairs, the order alternating), with each cache state:

    warm   the program cache (XLAPY_CACHE_DIR) and the runtime cache hold this model
    cold   an empty program cache (a new XLAPY_CACHE_DIR per run); the runtime's own objects
           (trampoline, thread pool, launcher, gemm kernels: options.runtime_cache_dirs)
           cached with the installation, as after any earlier run of xlapy
    fresh  both empty: the first run after installing (--fresh adds it)

    .venv/bin/python benchmarks/compat_softmax_time.py [--pairs 8] [--steps 1000] [--fresh]
                                                       [--states warm,cold] [--no-warm-up]
                                                       [--json PATH]

Each run reports wall, user and system seconds (/usr/bin/time), the 1-minute load average
when it started, and the example's own "phases" lines: where the wall and CPU time went
from the script's first line (importing xlapy, the warm-up import of the compiler, reading
the data, building the graph, the training steps with writing the last one's trace, the
evaluation); "outside" is the rest, the interpreter's start and exit.

Per state the summary gives the medians of each mode and, the measure that matters, the
median of the paired differences XLA - executor with their range (min, max) and in how
many pairs XLA was faster; then the same per phase. A pair's two runs follow each other,
so a spell of load hits both alike; still, on a shared machine (load average above the
number of cores) wall times mean little: compare the CPU seconds, which suffer less. The
children may write .pyc files (PYTHONDONTWRITEBYTECODE is dropped), as a user's
installation has them; OpenBLAS runs on one thread, so its spinning threads do not count.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIME = "/usr/bin/time"


PHASES = ("outside", "import", "warm-up", "data", "graph", "steps", "eval", "end")


def phases_of(text: str, wall: float, cpu: float) -> dict:
    """{"wall" | "CPU": {phase: seconds}} from the example's "phases" lines; "outside" is
    what the process spent beyond them (the interpreter's start and exit)."""
    phases = {}
    for what, total in (("wall", wall), ("CPU", cpu)):
        line = re.search(rf"phases \({what} ms\): (.*)", text).group(1)
        ms = {k.strip(): float(v) for k, v in re.findall(r"([a-z][a-z -]*) ([0-9.]+)", line)}
        ph = {k: ms[k] / 1e3 for k in PHASES if k != "outside"}
        ph["outside"] = total - ms["total"] / 1e3
        phases[what] = ph
    return phases


def one_run(xla: bool, programs: str, runtime: str, steps: int, out_dir: str,
            warm_up: bool = True) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", XLAPY_CACHE_DIR=programs,
               XLAPY_RUNTIME_CACHE_DIR=runtime)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("XLAPY_DISABLE_CACHE", None)
    load = os.getloadavg()[0]
    cmd = [TIME, "-f", "@time %e %U %S", sys.executable, "examples/mnist_softmax.py",
           "--steps", str(steps), "--out_dir", out_dir] + (["--xla"] if xla else []) + (
               [] if warm_up else ["--no_warm_up"])
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    wall, user, sys_ = (float(v) for v in re.search(r"@time (\S+) (\S+) (\S+)", text).groups())
    first = float(re.search(r"first two steps ([0-9.]+) ms", text).group(1))
    acc = float(re.search(r"test accuracy ([0-9.]+)", text).group(1))
    phases = phases_of(text, wall, user + sys_)
    return {"wall": wall, "cpu": user + sys_, "first_ms": first, "load": load,
            "accuracy": acc, "phases": phases}


def _spread(values: list) -> str:
    return f"{statistics.median(values):+.3f} [{min(values):+.3f}, {max(values):+.3f}]"


def summarize(runs: dict, steps: int) -> None:
    print(f"\n{steps} steps; seconds; XLA - executor: median of the paired differences "
          "[min, max]:")
    for state, pairs in runs.items():
        if not pairs:
            continue
        loads = [p[k]["load"] for p in pairs for k in ("exec", "xla")]
        print(f"{state} ({len(pairs)} pairs, load average {min(loads):.2f}-{max(loads):.2f} "
              f"on {os.cpu_count()} cores):")
        for m in ("wall", "cpu"):
            e = [p["exec"][m] for p in pairs]
            x = [p["xla"][m] for p in pairs]
            wins = sum(b < a for a, b in zip(e, x))
            print(f"  {m:5s} executor {statistics.median(e):.3f}  XLA {statistics.median(x):.3f}"
                  f"  difference {_spread([b - a for a, b in zip(e, x)])}  XLA faster in "
                  f"{wins}/{len(pairs)}")
        for what in ("wall", "CPU"):
            print(f"  phases ({what}):")
            for ph in PHASES:
                e = [p["exec"]["phases"][what][ph] for p in pairs]
                x = [p["xla"]["phases"][what][ph] for p in pairs]
                diff = _spread([b - a for a, b in zip(e, x)])
                print(f"    {ph:8s} executor {statistics.median(e):.3f}  XLA "
                      f"{statistics.median(x):.3f}  difference {diff}")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=8)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--fresh", action="store_true", help="also time first runs after install")
    p.add_argument("--states", default="warm,cold",
                   help="comma-separated cache states (warm, cold, fresh)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="run the example with --no_warm_up: the compiler's import is not "
                        "taken before the timing, so only the XLA runs pay it (as in a "
                        "script without the example's warm-up)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    warm_up = not args.no_warm_up
    if not os.path.exists(TIME):
        sys.exit(f"{TIME} is needed (Debian: apt-get install time)")
    states = [s for s in args.states.split(",") if s]
    if args.fresh and "fresh" not in states:
        states.append("fresh")
    unknown = set(states) - {"warm", "cold", "fresh"}
    if unknown:
        sys.exit(f"unknown cache state(s): {', '.join(sorted(unknown))}")
    runs: dict = {s: [] for s in states}
    with tempfile.TemporaryDirectory() as tmp:
        warm_programs, warm_runtime = f"{tmp}/programs", f"{tmp}/runtime"
        for xla in (False, True):  # fill the warm caches (and write the .pyc files)
            one_run(xla, warm_programs, warm_runtime, 3, f"{tmp}/out", warm_up)
        for i in range(args.pairs):
            for state in states:
                pair = {}
                for xla in ((False, True) if i % 2 == 0 else (True, False)):
                    with tempfile.TemporaryDirectory(dir=tmp) as empty:
                        programs = warm_programs if state == "warm" else f"{empty}/programs"
                        runtime = f"{empty}/runtime" if state == "fresh" else warm_runtime
                        pair["xla" if xla else "exec"] = one_run(
                            xla, programs, runtime, args.steps, f"{tmp}/out", warm_up)
                runs[state].append(pair)
                e, x = pair["exec"], pair["xla"]
                print(f"{state:5s} pair {i + 1}: executor {e['wall']:.2f} s wall "
                      f"{e['cpu']:.2f} s CPU (load {e['load']:.2f}) | XLA {x['wall']:.2f} s "
                      f"wall {x['cpu']:.2f} s CPU, first two steps {x['first_ms']:.0f} ms "
                      f"(load {x['load']:.2f})", flush=True)
    summarize(runs, args.steps)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(runs, indent=1))
    return runs


if __name__ == "__main__":
    main()
