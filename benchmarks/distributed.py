"""All-reduce across MPI processes: xlapy's path against mpi4py's Allreduce on NumPy arrays.

    mpirun -n 2 .venv/bin/python benchmarks/distributed.py [--quick] [--sizes-mb 1,4,16,64]

(as root add OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; on fewer cores than
processes, --oversubscribe). For each size, rank 0 prints the best of five times of:

  mpi4py      comm.Allreduce(x, y, op=SUM) on float32 NumPy arrays (buffers, no pickling)
  xlapy       one all-reduce instruction run by the interpreter with the MPI rendezvous
              (backends/interpreter/mpi.py: Ibarrier + a pickled allgather of the operands,
              then the reduction in NumPy) - the reference path, the only one built so far
  bandwidth   bytes / time for each, and the ratio xlapy / mpi4py

The issue's target (>= 0.9x mpi4py) is for the cpu path that hands arena buffers to MPI,
which is not built: this script measures how far the reference path is from it. It is
timed only on a quiet machine; --quick runs 1 MB and 4 MB once to check that it works.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

HLO = """HloModule allreduce
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[{n}]) -> f32[{n}] {
  %x = f32[{n}] parameter(0)
  ROOT %r = f32[{n}] all-reduce(%x), replica_groups={}, to_apply=%add
}
"""


def best(fn, comm, rounds):
    times = []
    for _ in range(rounds):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        comm.Barrier()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes-mb", default="1,4,16,64")
    args = ap.parse_args()
    from mpi4py import MPI

    from xlapy.backends.interpreter import mpi
    from xlapy.hlo import parse
    from xlapy.hlo.evaluator import Evaluator
    comm = MPI.COMM_WORLD
    sizes = [1, 4] if args.quick else [int(s) for s in args.sizes_mb.split(",")]
    rounds = 1 if args.quick else 5
    if comm.rank == 0:
        print(f"{comm.size} processes; all-reduce (sum) of float32 arrays, best of {rounds}")
        print(f"{'MB':>5} {'mpi4py ms':>10} {'GB/s':>7} {'xlapy ms':>10} {'GB/s':>7} "
              f"{'ratio':>6}")
    out: dict = {}
    for mb in sizes:
        n = mb * (1 << 20) // 4
        x = np.full(n, comm.rank + 1, np.float32)
        y = np.empty_like(x)
        t_mpi = best(lambda x=x, y=y: comm.Allreduce(x, y, op=MPI.SUM), comm, rounds)
        module = parse(HLO.replace("{n}", str(n)))
        ev = Evaluator()
        mpi.attach(ev, comm)
        t_x = best(lambda x=x, ev=ev, m=module: out.__setitem__("r", ev.evaluate(m, [x])),
                   comm, rounds)
        want = comm.size * (comm.size + 1) / 2
        if not (np.all(y == want) and np.all(out["r"] == want)):
            print(f"rank {comm.rank}: wrong all-reduce result", file=sys.stderr)
            return 1
        if comm.rank == 0:
            gb = mb / 1024
            print(f"{mb:>5} {1e3 * t_mpi:>10.2f} {gb / t_mpi:>7.2f} {1e3 * t_x:>10.2f} "
                  f"{gb / t_x:>7.2f} {t_mpi / t_x:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
