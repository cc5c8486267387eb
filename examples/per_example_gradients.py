"""Per-example gradients with vmap(grad): differentially private SGD on a small classifier.

    .venv/bin/python examples/per_example_gradients.py [--steps 300] [--batch 64]

DP-SGD (Abadi et al., 2016) needs every example's gradient on its own: each one is clipped
to an L2 norm of at most `clip`, the clipped gradients are summed, Gaussian noise of scale
`noise * clip` is added and the result averaged. `vmap(grad(loss))` computes the whole
batch of per-example gradients in one program (batched matrix products, no loop over the
examples), and jit compiles the step, clipping and update included, into one module.

The data are two Gaussian blobs per class in 8 dimensions (four classes), so the example
needs no download; the script prints the loss and accuracy as training goes.
"""

from __future__ import annotations

import argparse

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.nn import log_softmax


def init_params(rng, sizes):
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
             np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = xnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, label):
    """The cross-entropy of ONE example (x: [features], label: an int)."""
    return -log_softmax(predict(params, x))[label]


def clipped(g, clip):
    """One example's gradient (a list of (dW, db)), scaled to an L2 norm of at most clip."""
    norm = xnp.sqrt(sum(xnp.sum(dw * dw) + xnp.sum(db * db) for dw, db in g))
    scale = xnp.minimum(1.0, clip / (norm + 1e-12))
    return [(dw * scale, db * scale) for dw, db in g]


def make_step(lr, clip, noise):
    per_example = xp.vmap(xp.grad(loss), in_axes=(None, 0, 0))

    @xp.jit
    def step(params, x, labels, noises):
        grads = per_example(params, x, labels)                  # each leaf: [batch, ...]
        grads = xp.vmap(lambda g: clipped(g, clip))(grads)      # clip every example
        n = x.shape[0]
        new = []
        for (w, b), (gw, gb), (nw, nb) in zip(params, grads, noises):
            gw = (xnp.sum(gw, axis=0) + noise * clip * nw) / n
            gb = (xnp.sum(gb, axis=0) + noise * clip * nb) / n
            new.append((w - lr * gw, b - lr * gb))
        return new
    return step


@xp.jit
def evaluate(params, x, labels):
    logits = predict(params, x)
    nll = -xnp.mean(xnp.take_along_axis(log_softmax(logits), labels[:, None], axis=1))
    return nll, xnp.mean(xnp.argmax(logits, axis=1) == labels)


def make_data(rng, n, dim=8, classes=4):
    centres = rng.standard_normal((classes, 2, dim)) * 2.5
    labels = rng.integers(0, classes, n)
    blob = rng.integers(0, 2, n)
    x = centres[labels, blob] + rng.standard_normal((n, dim))
    return x.astype(np.float32), labels.astype(np.int32)


def main(steps=300, batch=64, lr=0.5, clip=1.0, noise=0.5, seed=0, log=print):
    rng = np.random.default_rng(seed)
    x, labels = make_data(rng, 2048)
    params = init_params(rng, [8, 32, 4])
    step = make_step(lr, clip, noise)
    history = []
    for i in range(steps + 1):
        if i % max(steps // 5, 1) == 0:
            nll, acc = evaluate(params, x, labels)
            history.append((i, float(nll), float(acc)))
            log(f"step {i:4d}  loss {float(nll):.3f}  accuracy {float(acc):.3f}")
        if i == steps:
            break
        idx = rng.integers(0, len(x), batch)
        noises = [(rng.standard_normal(w.shape).astype(np.float32),
                   rng.standard_normal(b.shape).astype(np.float32)) for w, b in params]
        params = step(params, x[idx], labels[idx], noises)
    return history


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    main(a.steps, a.batch)
