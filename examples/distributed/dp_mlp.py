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

import _dp  # the shared data-parallel loop (this directory)
import numpy as np

import xlapy.numpy as xnp

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


sgd_step = _dp.sgd_step(loss, LR)


def train(steps: int):
    return _dp.train(init, batches, sgd_step, BATCH, steps, digits=5)


if __name__ == "__main__":
    _dp.main(train)
