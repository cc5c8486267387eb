"""Data-parallel training of a small MLP: each MPI process takes its shard of every batch,
computes its gradient, and the gradients are averaged with lax.pmean across the processes
(an all-reduce), so every process takes the same SGD step as one process would on the
whole batch.

    mpirun -n 2 python examples/distributed/dp_mlp.py [--steps N] [--out PARAMS.npz]
    python examples/distributed/dp_mlp.py            # one process: the same steps

(as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;
on a machine with fewer cores than processes add --oversubscribe)
"""

from __future__ import annotations

import argparse

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax
from xlapy.tree_util import tree_map

BATCH, LR = 32, 0.1


def init(rng):
    return {"w1": (rng.standard_normal((8, 16)) * 0.3).astype(np.float32),
            "b1": np.zeros(16, np.float32),
            "w2": (rng.standard_normal((16, 1)) * 0.3).astype(np.float32),
            "b2": np.zeros(1, np.float32)}


def loss(p, x, y):
    h = xnp.tanh(x @ p["w1"] + p["b1"])
    return xnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def batches(rng, steps):
    for _ in range(steps):
        x = rng.standard_normal((BATCH, 8)).astype(np.float32)
        yield x, np.sin(x.sum(1, keepdims=True)).astype(np.float32)


def sgd_step(p, x, y):
    g = lax.pmean(xp.grad(loss)(p, x, y), "batch")
    return tree_map(lambda w, gw: w - LR * gw, p, g), lax.pmean(loss(p, x, y), "batch")


def train(steps: int):
    xp.distributed.initialize()
    rank, size = xp.process_index(), xp.process_count()
    if BATCH % size:
        raise SystemExit(f"the batch of {BATCH} does not split over {size} processes")
    rng = np.random.default_rng(0)
    params = tree_map(lambda v: v[None], init(rng))  # this process's one device
    step = xp.pmap(sgd_step, axis_name="batch")
    shard = slice(rank * BATCH // size, (rank + 1) * BATCH // size)
    for i, (x, y) in enumerate(batches(rng, steps)):
        params, value = step(params, x[shard][None], y[shard][None])
        if rank == 0:
            print(f"step {i}: loss {float(value[0]):.5f}")
    return tree_map(lambda v: v[0], params)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--out", help="write the final parameters (rank 0) to this npz")
    args = ap.parse_args()
    params = train(args.steps)
    if args.out and xp.process_index() == 0:
        np.savez(args.out, **params)


if __name__ == "__main__":
    main()
