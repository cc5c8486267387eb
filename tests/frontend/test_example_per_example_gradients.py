"""examples/per_example_gradients.py (DP-SGD with vmap(grad)) trains, and its jitted step
equals the step computed one example at a time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import xlapy as xp

PATH = Path(__file__).resolve().parents[2] / "examples" / "per_example_gradients.py"


def _load():
    spec = importlib.util.spec_from_file_location("per_example_gradients", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_trains():
    history = _load().main(steps=40, batch=32, log=lambda *a: None)
    (_, loss0, _), (_, loss1, acc1) = history[0], history[-1]
    assert loss1 < 0.5 * loss0 and acc1 > 0.8


def test_step_equals_the_loop_over_examples():
    ex = _load()
    rng = np.random.default_rng(1)
    x, labels = ex.make_data(rng, 16)
    params = ex.init_params(rng, [8, 6, 4])
    noises = [(np.zeros_like(w), np.zeros_like(b)) for w, b in params]
    got = ex.make_step(lr=0.5, clip=0.3, noise=0.0)(params, x, labels, noises)
    grads = [ex.clipped(xp.grad(ex.loss)(params, x[i], labels[i]), 0.3) for i in range(16)]
    for k, (w, b) in enumerate(params):
        gw = np.mean([np.asarray(g[k][0]) for g in grads], axis=0)
        gb = np.mean([np.asarray(g[k][1]) for g in grads], axis=0)
        np.testing.assert_allclose(got[k][0], w - 0.5 * gw, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[k][1], b - 0.5 * gb, rtol=1e-5, atol=1e-6)
