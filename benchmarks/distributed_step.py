"""Data-parallel step time: the examples' training step on N MPI processes against 1, and the
share of it spent in the gradient all-reduce.

    python benchmarks/distributed_step.py [--model mlp|cnn] [--quick]          # 1 process
    mpirun -n 2 .venv/bin/python benchmarks/distributed_step.py [--model ...]   # 2 processes

(as root add OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; on fewer cores than
processes, --oversubscribe). Rank 0 prints, for the example's step (examples/distributed/
dp_mlp.py or dp_cnn.py, the global batch split over the processes):

  step        the best of --repeat timed steps (after a warm-up step that traces and
              compiles), in ms
  allreduce   the best time of the same pmean over the gradients' pytree alone (the
              communication of one step), in ms, and its share of the step
  bytes       the gradient bytes each step all-reduces

Compare the 1-process and the N-process lines (same machine, same backend). Timings only on
a quiet machine; --quick runs two steps to check that it works.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import xlapy as xp  # noqa: E402
from xlapy import lax  # noqa: E402
from xlapy.tree_util import tree_leaves, tree_map  # noqa: E402


def _example(name: str):
    sys.path.insert(0, str(ROOT / "examples" / "distributed"))  # their shared _dp.py
    path = ROOT / "examples" / "distributed" / f"dp_{name}.py"
    spec = importlib.util.spec_from_file_location(f"dp_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 2 if args.quick else args.repeat
    ex = _example(args.model)
    xp.distributed.initialize()
    rank, size = xp.process_index(), xp.process_count()
    rng = np.random.default_rng(0)
    params = tree_map(lambda v: v[None], ex.init(rng))
    x, y = next(ex.batches(rng, 1))
    shard = slice(rank * ex.BATCH // size, (rank + 1) * ex.BATCH // size)
    xs, ys = x[shard][None], y[shard][None]
    step = xp.pmap(ex.sgd_step, axis_name="batch")
    reduce = xp.pmap(lambda g: lax.pmean(g, "batch"), axis_name="batch")
    step(params, xs, ys)  # warm-up: trace and compile
    reduce(params)
    t_step = _best(lambda: step(params, xs, ys), repeat)
    t_comm = _best(lambda: reduce(params), repeat)
    nbytes = sum(v.nbytes for v in tree_leaves(params))
    if rank == 0:
        print(f"{args.model} processes={size} local_batch={ex.BATCH // size} "
              f"step={1e3 * t_step:.3f} ms allreduce={1e3 * t_comm:.3f} ms "
              f"share={t_comm / t_step:.1%} bytes={nbytes}")


if __name__ == "__main__":
    main()
