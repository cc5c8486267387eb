"""Acceptance: an MLP trained with xp.jit(xp.grad(...)) learns, and matches JAX step by step.

The model: 2 hidden layers (tanh or relu), softmax cross-entropy, on synthetic
3-class data (Gaussian blobs in 8 dimensions, 384 points); plain SGD, batch 32, 50 steps.
The same loop runs in JAX (jax.jit(jax.grad)) from the same initial parameters on the same
batches. Checked:

  - it learns: the loss on the full data set after training is < 0.5 x the initial loss,
    and falls steadily (it rises on at most 1 step in 5, each time by < 5% of the start);
  - it matches JAX: after every step, every parameter agrees with JAX's to a relative
    deviation (max |p - p_jax| / max |p_jax| per array) below 2e-5 (float32 rounding
    differences, e.g. in tanh and in the order of sums, grow slowly over the steps).

The measured deviation is attached to the test report (record_property "max_deviation").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.nn as xnn
import xlapy.numpy as xnp

SIZES = (8, 32, 32, 3)
STEPS, BATCH, LR = 50, 32, 0.1


def _data():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((3, SIZES[0])) * 1.5
    labels = rng.integers(0, 3, 384)
    x = centers[labels] + rng.standard_normal((384, SIZES[0]))
    return x.astype(np.float32), labels.astype(np.int32)


def _init():
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((m, n)).astype(np.float32) * np.float32(np.sqrt(1.0 / m)),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def _batches():
    rng = np.random.default_rng(2)
    return [rng.choice(384, BATCH, replace=False) for _ in range(STEPS)]


def _make(N, nn, act):
    activation = N.tanh if act == "tanh" else nn.relu

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = activation(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return -N.mean(N.sum(nn.log_softmax(logits) * nn.one_hot(y, SIZES[-1]), axis=-1))

    return loss


def _train_jax(act):
    loss = _make(jnp, jax.nn, act)

    @jax.jit
    def step(params, x, y):
        g = jax.grad(loss)(params, x, y)
        return [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, g)]

    x, y = _data()
    params, history = _init(), []
    for idx in _batches():
        params = step(params, x[idx], y[idx])
        history.append([(np.asarray(w), np.asarray(b)) for w, b in params])
    return history


def _train_xlapy(act, backend):
    loss = _make(xnp, xnn, act)

    def step(params, x, y):
        g = xp.grad(loss)(params, x, y)
        return [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, g)]

    step = xp.jit(step, backend=backend)
    full_loss = xp.jit(loss, backend=backend)
    x, y = _data()
    params = _init()
    losses, history = [float(full_loss(params, x, y))], []
    for idx in _batches():
        params = step(params, x[idx], y[idx])
        history.append([(np.asarray(w), np.asarray(b)) for w, b in params])
        losses.append(float(full_loss(params, x, y)))
    return losses, history


def _deviation(ours, theirs) -> float:
    worst = 0.0
    for (w, b), (jw, jb) in zip(ours, theirs):
        for a, ja in ((w, jw), (b, jb)):
            assert a.dtype == np.float32 and a.shape == ja.shape
            worst = max(worst, float(np.max(np.abs(a - ja)) / max(np.max(np.abs(ja)), 1e-6)))
    return worst


_JAX_HISTORY: dict = {}


@pytest.mark.parametrize("act,backend", [("tanh", "cpu"), ("tanh", "interpreter"),
                                         ("relu", "cpu")])
def test_mlp_learns_and_matches_jax(act, backend, record_property):
    losses, history = _train_xlapy(act, backend)
    if act not in _JAX_HISTORY:
        _JAX_HISTORY[act] = _train_jax(act)
    jax_history = _JAX_HISTORY[act]

    # it learns, steadily
    assert losses[-1] < 0.5 * losses[0], f"loss {losses[0]:.4f} -> {losses[-1]:.4f}"
    rises = [(i, losses[i] - losses[i - 1]) for i in range(1, len(losses))
             if losses[i] > losses[i - 1]]
    assert len(rises) <= STEPS // 5 and all(r < 0.05 * losses[0] for _, r in rises), \
        f"the loss rose at steps {rises}: {np.round(losses, 4)}"

    # it matches JAX after every step
    devs = [_deviation(ours, theirs) for ours, theirs in zip(history, jax_history)]
    record_property("max_deviation", max(devs))
    record_property("loss_first_last", (losses[0], losses[-1]))
    for i, d in enumerate(devs):
        assert d < 2e-5, (f"step {i}: parameters deviate from JAX's by {d:.2e} (relative); "
                          f"deviation per step: {np.array(devs)}")
