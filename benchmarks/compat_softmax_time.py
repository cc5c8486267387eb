"""The seeds' TF 1.x softmax tutorial timed as a user times it: `time python
examples/mnist_softmax.py [--xla]` (1000 steps), a fresh process per run, the executor
and XLA taking turns (pairs, the order alternating), with each cache state:

    warm   the program cache (XLAPY_CACHE_DIR) and the runtime cache hold this model
    cold   an empty program cache (a new XLAPY_CACHE_DIR per run); the runtime's own objects
           (trampoline, thread pool, launcher, gemm kernels: options.runtime_cache_dirs)
           cached with the installation, as after any earlier run of xlapy
    fresh  both empty: the first run after installing (--fresh adds it)

    .venv/bin/python benchmarks/compat_softmax_time.py [--pairs 5] [--steps 1000] [--fresh]
                                                       [--json PATH]

Each run reports wall, user and system seconds (/usr/bin/time), the example's own "first
two steps" (XLA compiles in the second) and the 1-minute load average when it started:
the machine may be shared, and a busy one makes wall times meaningless (the CPU seconds
suffer less). All runs are printed, then per state the medians and in how many pairs XLA
was faster. The children may write .pyc files (PYTHONDONTWRITEBYTECODE is dropped), as a
user's installation has them; OpenBLAS runs on one thread, so its spinning threads do not
count.
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


def one_run(xla: bool, programs: str, runtime: str, steps: int, out_dir: str) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", XLAPY_CACHE_DIR=programs,
               XLAPY_RUNTIME_CACHE_DIR=runtime)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("XLAPY_DISABLE_CACHE", None)
    load = os.getloadavg()[0]
    cmd = [TIME, "-f", "@time %e %U %S", sys.executable, "examples/mnist_softmax.py",
           "--steps", str(steps), "--out_dir", out_dir] + (["--xla"] if xla else [])
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    wall, user, sys_ = (float(v) for v in re.search(r"@time (\S+) (\S+) (\S+)", text).groups())
    first = float(re.search(r"first two steps ([0-9.]+) ms", text).group(1))
    acc = float(re.search(r"test accuracy ([0-9.]+)", text).group(1))
    return {"wall": wall, "cpu": user + sys_, "first_ms": first, "load": load,
            "accuracy": acc}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--fresh", action="store_true", help="also time first runs after install")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if not os.path.exists(TIME):
        sys.exit(f"{TIME} is needed (Debian: apt-get install time)")
    states = ["warm", "cold"] + (["fresh"] if args.fresh else [])
    runs: dict = {s: [] for s in states}
    with tempfile.TemporaryDirectory() as tmp:
        warm_programs, warm_runtime = f"{tmp}/programs", f"{tmp}/runtime"
        for xla in (False, True):  # fill the warm caches (and write the .pyc files)
            one_run(xla, warm_programs, warm_runtime, 3, f"{tmp}/out")
        for i in range(args.pairs):
            for state in states:
                pair = {}
                for xla in ((False, True) if i % 2 == 0 else (True, False)):
                    with tempfile.TemporaryDirectory(dir=tmp) as empty:
                        programs = warm_programs if state == "warm" else f"{empty}/programs"
                        runtime = f"{empty}/runtime" if state == "fresh" else warm_runtime
                        pair["xla" if xla else "exec"] = one_run(
                            xla, programs, runtime, args.steps, f"{tmp}/out")
                runs[state].append(pair)
                e, x = pair["exec"], pair["xla"]
                print(f"{state:5s} pair {i + 1}: executor {e['wall']:.2f} s wall "
                      f"{e['cpu']:.2f} s CPU (load {e['load']:.2f}) | XLA {x['wall']:.2f} s "
                      f"wall {x['cpu']:.2f} s CPU, first two steps {x['first_ms']:.0f} ms "
                      f"(load {x['load']:.2f})", flush=True)
    print(f"\nmedians of {args.pairs} pairs, {args.steps} steps (seconds):")
    for state, pairs in runs.items():
        med = {k: {m: statistics.median(p[k][m] for p in pairs) for m in ("wall", "cpu")}
               for k in ("exec", "xla")}
        wins = sum(p["xla"]["wall"] < p["exec"]["wall"] for p in pairs)
        cpu_wins = sum(p["xla"]["cpu"] < p["exec"]["cpu"] for p in pairs)
        print(f"{state:5s} executor {med['exec']['wall']:.2f} wall {med['exec']['cpu']:.2f} "
              f"CPU | XLA {med['xla']['wall']:.2f} wall {med['xla']['cpu']:.2f} CPU | XLA "
              f"faster in {wins}/{len(pairs)} pairs by wall, {cpu_wins}/{len(pairs)} by CPU")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(runs, indent=1))
    return runs


if __name__ == "__main__":
    main()
