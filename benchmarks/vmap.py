"""vmap(f) against the hand-batched program, under jit (the acceptance target: at most 1.1x
the hand-batched time).

    .venv/bin/python benchmarks/vmap.py [--quick] [--budget SECONDS] [--jax]

Workloads (float32):
  mlp forward       a 784-512-512-10 tanh MLP on one example, vmapped over a batch of 256,
                    against the same MLP written for a batch (x @ W + b on a matrix)
  per-example grad  vmap(grad(loss)) of a 256-128-10 MLP over 128 examples (the gradient
                    of every parameter per example: [128, 256, 128] for the first layer),
                    against the hand-derived batched backward pass (einsum outer products)
  batched matvec    vmap(lambda x: W @ x) for a 1024x1024 W and 512 vectors, against X @ W.T
Both programs of a row are jitted and take turns in five rounds (benchmarks/run.py's
run_times); the table gives the best time of each and the ratio. With --jax, jax.vmap of
the same function is timed beside them (JAX's own vmap against its hand-batched program).
--check compares the results and the optimized programs (same number of dots, no loops) and
exits; tests/frontend/test_vmap_programs.py runs it with --quick's sizes.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

f32 = np.float32


def mlp_params(rng, sizes):
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(f32), np.zeros(b, f32))
            for a, b in zip(sizes[:-1], sizes[1:])]


def mlp(N, params, x):
    """One example (or, written the same way, a batch: x @ W broadcasts over rows)."""
    for w, b in params[:-1]:
        x = N.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(N, params, x, y):
    out = mlp(N, params, x)
    return ((out - y) ** 2).sum()


def per_example_grads_by_hand(N, params, X, Y):
    """The gradient of loss for every example, derived by hand for a whole batch."""
    acts, h = [X], X
    for w, b in params[:-1]:
        h = N.tanh(h @ w + b)
        acts.append(h)
    w, b = params[-1]
    delta = 2 * (h @ w + b - Y)                                # [B, out]
    grads = []
    for k in range(len(params) - 1, -1, -1):
        w, _ = params[k]
        grads.append((N.einsum("bi,bj->bij", acts[k], delta), delta))
        if k:
            delta = (delta @ w.T) * (1 - acts[k] ** 2)
    return grads[::-1]


class Api:
    """The functions a workload is written with: xlapy's or JAX's."""

    def __init__(self, system: str):
        if system == "jax":
            import jax
            import jax.numpy as jnp
            self.np, self.vmap, self.grad, self.jit = jnp, jax.vmap, jax.grad, jax.jit
        else:
            import xlapy as xp
            import xlapy.numpy as xnp
            self.np, self.vmap, self.grad, self.jit = xnp, xp.vmap, xp.grad, xp.jit


def workloads(quick: bool) -> dict:
    """{name: (vmapped(api), by_hand(api), inputs)}: two builders of the same function."""
    rng = np.random.default_rng(0)
    B, sizes = (32, [64, 32, 32, 10]) if quick else (256, [784, 512, 512, 10])
    p = mlp_params(rng, sizes)
    X = rng.standard_normal((B, sizes[0])).astype(f32)
    rows = {"mlp forward": (
        lambda A: A.vmap(lambda params, x: mlp(A.np, params, x), in_axes=(None, 0)),
        lambda A: lambda params, X: mlp(A.np, params, X), (p, X))}

    Bg, gsizes = (16, [32, 16, 10]) if quick else (128, [256, 128, 10])
    pg = mlp_params(rng, gsizes)
    Xg = rng.standard_normal((Bg, gsizes[0])).astype(f32)
    Yg = rng.standard_normal((Bg, gsizes[-1])).astype(f32)
    rows["per-example grad"] = (
        lambda A: A.vmap(A.grad(lambda params, x, y: loss(A.np, params, x, y)),
                         in_axes=(None, 0, 0)),
        lambda A: lambda params, X, Y: per_example_grads_by_hand(A.np, params, X, Y),
        (pg, Xg, Yg))

    n, Bm = (64, 16) if quick else (1024, 512)
    Wm = rng.standard_normal((n, n)).astype(f32)
    Xm = rng.standard_normal((Bm, n)).astype(f32)
    rows["batched matvec"] = (lambda A: A.vmap(lambda w, x: w @ x, in_axes=(None, 0)),
                              lambda A: lambda w, X: X @ w.T, (Wm, Xm))
    return rows


def _leaves(tree):
    from xlapy.frontend import pytree
    return [np.asarray(x) for x in pytree.flatten(tree)[0]]


def check(quick: bool = True) -> list[str]:
    """Results of vmap(f) and the hand-batched program agree, and their optimized programs
    have the same number of dots and no loop. Returns a line per workload."""
    A = Api("xlapy")
    lines = []
    for name, (vm, hand, args) in workloads(quick).items():
        fv, fh = A.jit(vm(A)), A.jit(hand(A))
        for a, b in zip(_leaves(fv(*args)), _leaves(fh(*args))):
            np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4, err_msg=name)
        counts = [_opcodes(f.lower(*args).compile().as_text()) for f in (fv, fh)]
        for c in counts:
            assert c.get("while", 0) == 0 and c.get("conditional", 0) == 0, (name, c)
        assert counts[0].get("dot", 0) == counts[1].get("dot", 0), (name, counts)
        lines.append(f"{name}: dots {counts[0].get('dot', 0)} / {counts[1].get('dot', 0)}, "
                     f"instructions {sum(counts[0].values())} / {sum(counts[1].values())}")
    return lines


def _opcodes(text: str) -> dict:
    import re
    counts: dict = {}
    entry = text[text.index("ENTRY"):]
    for m in re.finditer(r"= \S+ ([a-z\-]+)\(", entry):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds per system per row")
    ap.add_argument("--jax", action="store_true", help="time jax.vmap and JAX's hand version")
    ap.add_argument("--check", action="store_true", help="compare results and programs only")
    args = ap.parse_args(argv)
    if args.check:
        for line in check(args.quick):
            print(line)
        return 0
    from harness import fmt_time
    from run import run_times
    A = Api("xlapy")
    J = Api("jax") if args.jax else None
    budget = 0.2 if args.quick else args.budget
    print(f"{'workload':18} {'vmap(f)':>11} {'by hand':>11} {'ratio':>6}"
          + (f" {'jax vmap':>11} {'jax hand':>11} {'ratio':>6}" if args.jax else ""))
    for name, (vm, hand, inputs) in workloads(args.quick).items():
        fns = {"vmap": A.jit(vm(A)), "hand": A.jit(hand(A))}
        if J is not None:
            fns["jax vmap"] = J.jit(vm(J))
            fns["jax hand"] = J.jit(hand(J))
        for f in fns.values():
            jax_block(f(*inputs))
        t = run_times({k: (lambda *a, f=f: jax_block(f(*a))) for k, f in fns.items()},
                      inputs, budget)
        line = (f"{name:18} {fmt_time(t['vmap'])} {fmt_time(t['hand'])} "
                f"{t['vmap'] / t['hand']:6.2f}")
        if args.jax:
            line += (f" {fmt_time(t['jax vmap'])} {fmt_time(t['jax hand'])} "
                     f"{t['jax vmap'] / t['jax hand']:6.2f}")
        print(line, flush=True)
    return 0


def jax_block(out):
    """Wait for JAX's asynchronous results (xlapy's are ready when returned)."""
    for leaf in _leaves_any(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return out


def _leaves_any(tree):
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves_any(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves_any(t)]
    return [tree]


if __name__ == "__main__":
    sys.exit(main())
