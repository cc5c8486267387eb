"""Data-parallel training of the model-class suite's deep-MNIST CNN (benchmarks/model_fns.py:
conv 5x5x32, max-pool, conv 5x5x64, max-pool, dense 3136x1024, dense 1024x10, on 28x28
images, global batch 50), or with --small a scaled-down net of the same shape (conv 3x3x8,
conv 3x3x16, dense to 10 classes, 12x12 images, batch 16). Each MPI process takes its
shard of every batch; the gradients are averaged with lax.pmean (an all-reduce), so N
processes take the same SGD steps as one process on the whole batch.

    mpirun -n 2 python examples/distributed/dp_cnn.py [--steps N] [--out PARAMS.npz] [--small]
    python examples/distributed/dp_cnn.py            # one process: the same steps

(as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;
on a machine with fewer cores than processes add --oversubscribe)
"""

from __future__ import annotations

import sys

import _dp  # the shared data-parallel loop (this directory)
import numpy as np

import xlapy.numpy as xnp
from xlapy import lax

DN = ("NHWC", "HWIO", "NHWC")
# (side, kernel, features of the two convs, dense width or None, batch, learning rate)
MODELS = {"deep-mnist": (28, 5, (32, 64), 1024, 50, 0.005),
          "small": (12, 3, (8, 16), None, 16, 0.1)}
SIDE, K, (F1, F2), DENSE, BATCH, LR = MODELS["small" if "--small" in sys.argv else "deep-mnist"]


def init(rng):
    def normal(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    flat = (SIDE // 4) ** 2 * F2
    p = {"w1": normal((K, K, 1, F1), K * K), "b1": np.full(F1, 0.05, np.float32),
         "w2": normal((K, K, F1, F2), K * K * F1), "b2": np.full(F2, 0.05, np.float32)}
    if DENSE:
        p.update(w3=normal((flat, DENSE), flat), b3=np.full(DENSE, 0.05, np.float32),
                 w4=normal((DENSE, 10), DENSE), b4=np.zeros(10, np.float32))
    else:
        p.update(w3=normal((flat, 10), flat), b3=np.zeros(10, np.float32))
    return p


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def max_pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")


def logits(p, x):
    h = max_pool(xnp.maximum(conv(x, p["w1"]) + p["b1"], 0.0))
    h = max_pool(xnp.maximum(conv(h, p["w2"]) + p["b2"], 0.0))
    h = xnp.reshape(h, (h.shape[0], -1)) @ p["w3"] + p["b3"]
    if DENSE:
        h = xnp.maximum(h, 0.0) @ p["w4"] + p["b4"]
    return h


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
