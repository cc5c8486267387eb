"""A CPU-bound neighbour process for measuring under load (issue 17's busy-machine mode).

    with neighbour():      # one process spinning on pure-Python arithmetic until the block ends
        ...

It stands for another job on a shared machine: it takes one core's worth of time from
whichever core the scheduler gives it, so that threads which busy-wait (OpenBLAS's, a
thread pool's) lose their time slices to it as they would beside a real neighbour.
`benchmarks/run.py --busy` and `benchmarks/models.py --busy` run their suites beside it.

Run as a script it compares rows of `make bench` (benchmarks/run.py's workloads) quiet and
beside the neighbour, xlapy and JAX taking turns, in wall time and in CPU time (all of the
process's threads: a thread that spins waiting is counted, as the neighbour feels it):

    .venv/bin/python benchmarks/busy.py [--only NAME[,NAME]] [--rounds 6] [--budget 0.3]
                                        [--modes quiet,busy] [--quick] [--cores 0,1]
                                        [--models]

--models times the model-class suite's rows (benchmarks/models.py: each workload's training
step and inference) instead of run.py's.

--cores pins this process and the neighbour to those cores (as `taskset -c 0,1` would):
on a larger machine that is otherwise idle, a 2-core machine with one other job and
nothing else, which an oversubscribed shared machine cannot give (its own load moves the
wall ratios by more than the effect measured). xlapy and JAX size their thread pools by
the cores they may run on (XLAPY_NUM_THREADS, if set, wins).

For each row and mode it prints the median over rounds of each system's median wall and CPU
time per call and the xlapy / JAX ratios of both, then the ratios of the 10th and 90th
percentiles of all the calls' wall times pooled over the rounds (p10: how fast each system
gets when the scheduler favours it; p90: its slow calls). Beside the neighbour one call's
time depends on where the scheduler puts it, so a best call says little: the percentiles
say whether two systems' distributions differ.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

# spins until its parent is gone (a benchmark killed without running its finally: blocks)
_SPIN = ("import os\nparent = os.getppid()\nx = 0\nwhile os.getppid() == parent:\n"
         "    for _ in range(100000):\n        x = (x * 1103515245 + 12345) % 2147483648\n")


@contextlib.contextmanager
def neighbour(processes: int = 1):
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(processes)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
            p.wait()


def per_call(fn, budget: float) -> tuple[float, float, list]:
    """(median wall seconds, CPU seconds per call, every call's wall seconds) of fn called for
    about `budget` seconds (CPU time of every thread of this process, divided by the number
    of calls)."""
    import gc
    import statistics
    import time
    fn()
    walls = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        c0, start = time.process_time(), time.perf_counter()
        while len(walls) < 3 or time.perf_counter() - start < budget:
            t0 = time.perf_counter()
            fn()
            walls.append(time.perf_counter() - t0)
        cpu = (time.process_time() - c0) / len(walls)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(walls), cpu, walls


def percentile(values: list, q: float) -> float:
    """The q-th percentile (0-100) of values, by linear interpolation between order
    statistics."""
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def compare(rows, modes=("quiet", "busy"), rounds: int = 6, budget: float = 0.3, out=print):
    """rows: [(name, inputs, {system: fn})]; {(name, mode): {system: (wall, cpu, p10, p90)}}
    (medians over rounds of the median wall and the CPU per call; percentiles of all calls'
    wall times)."""
    import statistics
    import time
    results = {}
    for name, inputs, fns in rows:
        for mode in modes:
            ctx = neighbour() if mode == "busy" else contextlib.nullcontext()
            samples = {s: [] for s in fns}
            with ctx:
                time.sleep(0.1)
                for r in range(rounds):
                    for s in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                        time.sleep(0.05)
                        samples[s].append(per_call(lambda f=fns[s], i=inputs: f(*i),
                                                        budget / rounds))
            med = {}
            for s, v in samples.items():
                calls = [t for _, _, walls in v for t in walls]
                med[s] = (statistics.median(w for w, _, _ in v),
                          statistics.median(c for _, c, _ in v),
                          percentile(calls, 10), percentile(calls, 90))
            results[(name, mode)] = med
            text = "  ".join(f"{s} {w * 1e3:8.3f} ms wall {c * 1e3:8.3f} ms CPU"
                             for s, (w, c, _, _) in med.items())
            if "jax" in med and "xlapy" in med:
                x, j = med["xlapy"], med["jax"]
                text += (f"  xlapy/jax wall {x[0] / j[0]:5.2f} CPU {x[1] / j[1]:5.2f}"
                         f" p10 {x[2] / j[2]:5.2f} p90 {x[3] / j[3]:5.2f}")
            out(f"{name:34s} {mode:5s}  {text}", flush=True)
    return results


def main(argv=None) -> int:
    import argparse
    import pathlib
    here = pathlib.Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    sys.path.insert(0, str(here.parent))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated substrings of workload names")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--budget", type=float, default=0.3, help="seconds per system per row")
    ap.add_argument("--modes", default="quiet,busy")
    ap.add_argument("--quick", action="store_true", help="run.py's smaller sizes")
    ap.add_argument("--cores", help="comma-separated core numbers to run on (and the neighbour)")
    ap.add_argument("--models", action="store_true",
                    help="the model-class suite's rows (benchmarks/models.py)")
    args = ap.parse_args(argv)
    if args.cores:   # before xlapy, JAX or NumPy's BLAS size their thread pools
        import os
        os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
    only = args.only.split(",") if args.only else None
    if args.models:
        from models import build_rows
        rows = [(r["name"], (), {s: f for s, f in r["fns"].items() if s in ("xlapy", "jax")})
                for r in build_rows(args.quick, with_torch=False, only=only)]
    else:
        from run import build
        rows = [(name, inputs, {s: f for s, f in fns.items() if s in ("xlapy", "jax")})
                for name, _, inputs, _, fns in build(args.quick, with_torch=False)
                if not only or any(s in name for s in only)]
    compare(rows, tuple(args.modes.split(",")), args.rounds, args.budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
