"""Data-parallel training of a small convolutional net (the shape of the model-class
suite's deep-MNIST CNN in benchmarks/model_fns.py, scaled down: conv 3x3x8, max-pool,
conv 3x3x16, max-pool, dense to 10 classes, on 12x12 images). Each MPI process takes its
shard of every batch; the gradients are averaged with lax.pmean (an all-reduce), so N
processes take the same SGD steps as one process on the whole batch.

    mpirun -n 2 python examples/distributed/dp_cnn.py [--steps N] [--out PARAMS.npz]
    python examples/distributed/dp_cnn.py            # one process: the same steps

(as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;
on a machine with fewer cores than processes add --oversubscribe)
"""

from __future__ import annotations

import _dp  # the shared data-parallel loop (this directory)
import numpy as np

import xlapy.numpy as xnp
from xlapy import lax

BATCH, LR, SIDE = 16, 0.1, 12
DN = ("NHWC", "HWIO", "NHWC")


def init(rng):
    def normal(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return {"w1": normal((3, 3, 1, 8), 0.3), "b1": np.full(8, 0.05, np.float32),
            "w2": normal((3, 3, 8, 16), 0.15), "b2": np.full(16, 0.05, np.float32),
            "w3": normal((3 * 3 * 16, 10), 0.1), "b3": np.zeros(10, np.float32)}


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def max_pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")


def logits(p, x):
    h = max_pool(xnp.maximum(conv(x, p["w1"]) + p["b1"], 0.0))
    h = max_pool(xnp.maximum(conv(h, p["w2"]) + p["b2"], 0.0))
    return xnp.reshape(h, (h.shape[0], -1)) @ p["w3"] + p["b3"]


def loss(p, x, y):
    z = logits(p, x)
    z = z - xnp.max(z, -1, keepdims=True)
    lse = xnp.log(xnp.sum(xnp.exp(z), -1, keepdims=True))
    return -xnp.mean(xnp.sum(y * (z - lse), -1))


def batches(rng, steps):
    for _ in range(steps):
        x = rng.random((BATCH, SIDE, SIDE, 1)).astype(np.float32)
        labels = (x[:, :SIDE // 2].mean((1, 2, 3)) * 10).astype(int) % 10  # learnable
        yield x, np.eye(10, dtype=np.float32)[labels]


sgd_step = _dp.sgd_step(loss, LR)


def train(steps: int):
    return _dp.train(init, batches, sgd_step, BATCH, steps, digits=4)


if __name__ == "__main__":
    _dp.main(train)
