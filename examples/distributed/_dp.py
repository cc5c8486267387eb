"""The data-parallel loop both examples share: an SGD step whose gradient and loss are
averaged over the processes with lax.pmean, each process training on its shard of every
batch through pmap (one device per process), and the command line (--steps, --out)."""

from __future__ import annotations

import argparse

import numpy as np

import xlapy as xp
from xlapy import lax
from xlapy.tree_util import tree_map


def sgd_step(loss, lr):
    """step(p, x, y) -> (p - lr * mean gradient, mean loss), averaged over axis "batch"."""
    def step(p, x, y):
        g = lax.pmean(xp.grad(loss)(p, x, y), "batch")
        return tree_map(lambda w, gw: w - lr * gw, p, g), lax.pmean(loss(p, x, y), "batch")
    return step


def train(init, batches, step_fn, batch: int, steps: int, digits: int):
    xp.distributed.initialize()
    rank, size = xp.process_index(), xp.process_count()
    if batch % size:
        raise SystemExit(f"the batch of {batch} does not split over {size} processes")
    rng = np.random.default_rng(0)
    params = tree_map(lambda v: v[None], init(rng))  # this process's one device
    step = xp.pmap(step_fn, axis_name="batch")
    shard = slice(rank * batch // size, (rank + 1) * batch // size)
    for i, (x, y) in enumerate(batches(rng, steps)):
        params, value = step(params, x[shard][None], y[shard][None])
        if rank == 0:
            print(f"step {i}: loss {float(value[0]):.{digits}f}")
    return tree_map(lambda v: v[0], params)


def main(train_fn):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--out", help="write the final parameters (rank 0) to this npz")
    ap.add_argument("--small", action="store_true",
                    help="a scaled-down model (the examples read it from sys.argv)")
    args = ap.parse_args()
    params = train_fn(args.steps)
    if args.out and xp.process_index() == 0:
        np.savez(args.out, **params)
