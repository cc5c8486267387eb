"""The seed's model for ahead-of-time compilation: a 3-deep, 60-wide stacked LSTM whose
weights are constants of the program (no arguments for them).

  lstm(xs)  xs: f32[STEPS, INPUT], one sequence -> f32[STEPS, WIDTH], the top layer's output
            at each step (state starts at zero)

Each layer's step is one product [x, h] . W (W: (in + 60) x 240, the four gates side by
side) plus a bias, then the gates: i, f, o = sigmoid, g = tanh, c' = f c + i g,
h' = o tanh(c'). The steps run in a scan (one loop, not 16 copies of the body).
"""

from __future__ import annotations

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax

DEPTH, WIDTH, INPUT, STEPS = 3, 60, 60, 16


def weights(seed: int = 0) -> list:
    """[(W, b)] per layer, W: (in + WIDTH, 4 WIDTH), uniform in +-1/sqrt(WIDTH) as Keras."""
    rng = np.random.default_rng(seed)
    out, width_in = [], INPUT
    for _ in range(DEPTH):
        s = 1 / np.sqrt(WIDTH)
        w = rng.uniform(-s, s, (width_in + WIDTH, 4 * WIDTH)).astype(np.float32)
        b = rng.uniform(-s, s, (4 * WIDTH,)).astype(np.float32)
        b[WIDTH:2 * WIDTH] += 1.0   # forget-gate bias 1
        out.append((w, b))
        width_in = WIDTH
    return out


WEIGHTS = weights()


def cell(x, h, c, w, b):
    z = xnp.concatenate([x, h]) @ w + b
    i, f, g, o = (z[k * WIDTH:(k + 1) * WIDTH] for k in range(4))
    c = xp.nn.sigmoid(f) * c + xp.nn.sigmoid(i) * xnp.tanh(g)
    return xp.nn.sigmoid(o) * xnp.tanh(c), c


def lstm(xs):
    zeros = xnp.zeros((WIDTH,), np.float32)

    def step(state, x):
        new = []
        for (h, c), (w, b) in zip(state, WEIGHTS):
            h, c = cell(x, h, c, w, b)
            new.append((h, c))
            x = h
        return tuple(new), x

    _, ys = lax.scan(step, tuple((zeros, zeros) for _ in range(DEPTH)), xs)
    return ys


def example_input(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((STEPS, INPUT)).astype(np.float32)


def reference(xs: np.ndarray) -> np.ndarray:
    """The same model in NumPy (float64), for checking."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    state = [(np.zeros(WIDTH), np.zeros(WIDTH)) for _ in range(DEPTH)]
    ys = []
    for x in xs.astype(np.float64):
        for k, (w, b) in enumerate(WEIGHTS):
            h, c = state[k]
            z = np.concatenate([x, h]) @ w + b
            i, f, g, o = (z[j * WIDTH:(j + 1) * WIDTH] for j in range(4))
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
            state[k] = (h, c)
            x = h
        ys.append(x)
    return np.array(ys)
