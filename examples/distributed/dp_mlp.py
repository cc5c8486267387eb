"""Data-parallel training of the benchmarks' MLP (`make bench`'s "MLP step 784-1024-1024-10
b256": relu, softmax cross-entropy, global batch 256), or with --small an 8-16-1 tanh
regression net: each MPI process takes its shard of every batch, computes its gradient,
and the gradients are averaged with lax.pmean across the processes (an all-reduce), so
every process takes the same SGD step as one process would on the whole batch.

    mpirun -n 2 python examples/distributed/dp_mlp.py [--steps N] [--out PARAMS.npz] [--small]
    python examples/distributed/dp_mlp.py            # one process: the same steps

(as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;
on a machine with fewer cores than processes add --oversubscribe)
"""

from __future__ import annotations

import sys

import _dp  # the shared data-parallel loop (this directory)
import numpy as np

import xlapy.numpy as xnp

SMALL = "--small" in sys.argv
SIZES = (8, 16, 1) if SMALL else (784, 1024, 1024, 10)
BATCH, LR = (32, 0.1) if SMALL else (256, 0.02)


def init(rng):
    p = {}
    for k, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:]), 1):
        p[f"w{k}"] = (rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
        p[f"b{k}"] = np.zeros(b, np.float32)
    return p


def loss(p, x, y):
    n = len(SIZES) - 1
    h = x
    for k in range(1, n):
        h = h @ p[f"w{k}"] + p[f"b{k}"]
        h = xnp.tanh(h) if SMALL else xnp.maximum(h, 0.0)
    z = h @ p[f"w{n}"] + p[f"b{n}"]
    if SMALL:
        return xnp.mean((z - y) ** 2)
    z = z - xnp.max(z, -1, keepdims=True)
    return -xnp.mean(xnp.sum(y * (z - xnp.log(xnp.sum(xnp.exp(z), -1, keepdims=True))), -1))


def batches(rng, steps):
    for _ in range(steps):
        if SMALL:
            x = rng.standard_normal((BATCH, 8)).astype(np.float32)
            yield x, np.sin(x.sum(1, keepdims=True)).astype(np.float32)
        else:   # a learnable labelling of random images: the class of the mean's decile
            x = rng.random((BATCH, 784)).astype(np.float32)
            labels = (x[:, :392].mean(1) * 10).astype(int) % 10
            yield x, np.eye(10, dtype=np.float32)[labels]


sgd_step = _dp.sgd_step(loss, LR)


def train(steps: int):
    return _dp.train(init, batches, sgd_step, BATCH, steps, digits=5)


if __name__ == "__main__":
    _dp.main(train)
