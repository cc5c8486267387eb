"""Recurrent cells around models.py's LSTM row (issue 17): stacked and single-layer LSTMs
of several widths and batches, and a GRU, each a lax.scan over the sequence, as a training
step (gradient of the loss, SGD update) and as inference, xlapy against JAX in one process.

    .venv/bin/python benchmarks/rnn_cells.py [--quick] [--only NAME[,NAME]] [--rounds N]

The systems take turns (a round of each, alternating which goes first), and every round
records both the wall time and the process's CPU time per call (time.process_time: all of
its threads), so that on a loaded machine the CPU times still compare the work done: xlapy
runs a scan's small kernels on the calling thread, JAX spreads a step over its threads
(more CPU time, less wall time on an idle machine). Printed per row: best wall time and the
median CPU time over all batches of calls for each system, the ratios, and the load average
when the row ran.
Results are checked against JAX's.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from model_fns import stacked_scan, train_step  # noqa: E402

f32 = np.float32

# name: (cell, width, layers, steps, batch)
CONFIGS = {
    "lstm 3x60 T50 b8": ("lstm", 60, 3, 50, 8),    # models.py's row
    "lstm 1x128 T50 b8": ("lstm", 128, 1, 50, 8),
    "lstm 1x256 T50 b8": ("lstm", 256, 1, 50, 8),
    "lstm 2x60 T50 b1": ("lstm", 60, 2, 50, 1),
    "lstm 1x100 T50 b32": ("lstm", 100, 1, 50, 32),
    "gru 2x60 T50 b8": ("gru", 60, 2, 50, 8),
    "gru 1x128 T50 b32": ("gru", 128, 1, 50, 32),
}


def params_for(cell: str, width: int, layers: int, rng) -> list:
    gates = 4 if cell == "lstm" else 3
    out = []
    for _ in range(layers):
        s = 1 / np.sqrt(width)
        out += [(s * rng.standard_normal((width, gates * width))).astype(f32),
                (s * rng.standard_normal((width, gates * width))).astype(f32),
                np.zeros(gates * width, f32)]
    return out


def model(xnp, lax, cell: str, width: int, layers: int):
    """(loss(params, inputs), infer(params, inputs)) of a stacked LSTM or GRU."""

    def sigmoid(x):
        return 1.0 / (1.0 + xnp.exp(-x))

    def lstm_cell(p, h, c, x):
        wx, wh, b = p
        z = x @ wx + h @ wh + b
        i, f, g, o = (z[:, k * width:(k + 1) * width] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * xnp.tanh(g)
        return sigmoid(o) * xnp.tanh(c), c

    def gru_cell(p, h, c, x):
        wx, wh, b = p
        zx, zh = x @ wx + b, h @ wh
        r = sigmoid(zx[:, :width] + zh[:, :width])
        u = sigmoid(zx[:, width:2 * width] + zh[:, width:2 * width])
        n = xnp.tanh(zx[:, 2 * width:] + r * zh[:, 2 * width:])
        return (1.0 - u) * n + u * h, c

    step_fn = lstm_cell if cell == "lstm" else gru_cell

    def run(p, xs, h0):
        return stacked_scan(lax, step_fn, p, layers, xs, h0)

    def loss(p, inp):
        h, ys = run(p, inp[0], inp[1])
        return xnp.mean(xnp.square(h)) + xnp.mean(ys)

    def infer(p, inp):
        return run(p, inp[0], inp[1])[0]

    return loss, infer


def timed(fn, seconds: float) -> list[tuple[float, float]]:
    """(wall seconds per call, CPU seconds per call) of each of 5 batches of calls."""
    fn()
    n = 1
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-6)
    n = max(1, int(seconds / 5 / one))
    out = []
    for _ in range(5):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            fn()
        out.append(((time.perf_counter() - t0) / n, (time.process_time() - c0) / n))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing")
    ap.add_argument("--only", help="comma-separated substrings of row names")
    ap.add_argument("--rounds", type=int, default=4, help="rounds of turns per row")
    args = ap.parse_args(argv)
    os.environ.setdefault("XLAPY_DISABLE_CACHE", "1")
    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    from models import check

    seconds = 0.15 if args.quick else 0.5
    only = args.only.split(",") if args.only else None
    bad = 0
    print(f"{'row':28s} {'xlapy wall':>10s} {'cpu':>8s} {'jax wall':>9s} {'cpu':>8s}"
          f" {'wall x/j':>8s} {'cpu x/j':>7s}  load")
    for name, (cell, width, layers, steps, batch) in CONFIGS.items():
        for form in ("train", "infer"):
            title = f"{name} {form}"
            if only and not any(s in title for s in only):
                continue
            rng = np.random.default_rng(0)
            params = params_for(cell, width, layers, rng)
            inputs = [rng.standard_normal((steps, batch, width)).astype(f32),
                      rng.standard_normal((batch, width)).astype(f32)]
            xl_loss, xl_infer = model(xnp, xp.lax, cell, width, layers)
            jx_loss, jx_infer = model(jnp, jax.lax, cell, width, layers)
            if form == "train":
                xf, jf = xp.jit(train_step(xp.grad, xl_loss)), jax.jit(train_step(jax.grad,
                                                                                 jx_loss))
            else:
                xf, jf = xp.jit(xl_infer), jax.jit(jx_infer)
            jp, ji = [jax.device_put(a) for a in params], [jax.device_put(a) for a in inputs]
            fns = {"xlapy": (lambda f, p, i: lambda: f(p, i))(xf, params, inputs),
                   "jax": (lambda f, p, i: lambda: jax.block_until_ready(f(p, i)))(jf, jp, ji)}
            batches = {"xlapy": [], "jax": []}
            for r in range(args.rounds):
                for system in (("xlapy", "jax") if r % 2 == 0 else ("jax", "xlapy")):
                    time.sleep(0.05)
                    batches[system] += timed(fns[system], seconds / args.rounds)
            # best wall time; the median CPU time of all batches (a loaded machine's
            # preemptions and cache thrashing move single batches far more than the code)
            res = {k: (min(w for w, _ in v), float(np.median([c for _, c in v])))
                   for k, v in batches.items()}
            msg = check(fns["xlapy"](), fns["jax"](), title)
            bad += bool(msg)
            (xw, xc), (jw, jc) = res["xlapy"], res["jax"]
            print(f"{title:28s} {xw * 1e3:8.3f}ms {xc * 1e3:6.3f}ms {jw * 1e3:7.3f}ms "
                  f"{jc * 1e3:6.3f}ms {xw / jw:8.2f} {xc / jc:7.2f}  "
                  f"{os.getloadavg()[0]:.1f}" + (f"  CHECK FAILED: {msg}" if msg else ""),
                  flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
