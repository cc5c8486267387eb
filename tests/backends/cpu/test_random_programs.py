"""Random fused programs: the cpu backend against the reference interpreter.

Each seed builds a small program from elementwise ops, row and column reductions broadcast
back, transposes, slices and concatenations, with one to three outputs that are arrays, row
maxima, column sums (which column fusion may merge with their producers) or totals; the
gradient variant differentiates a scalar made of them plus a matmul. These combinations are
what the fusion passes rewrite, so they are where a fusion bug would show.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

UNARY = [xnp.exp, xnp.tanh, xnp.abs, xnp.negative, lambda a: a * a,
         lambda a: xnp.maximum(a, 0), xnp.sin, lambda a: xnp.log1p(xnp.abs(a)),
         lambda a: xnp.sqrt(xnp.abs(a) + 1), xnp.cos]
BINARY = [xnp.add, xnp.subtract, xnp.multiply, xnp.maximum, xnp.minimum,
          lambda a, b: a / (xnp.abs(b) + 1), lambda a, b: xnp.where(a > b, a, b * 2)]
SHAPES = [(8, 1024), (3, 600), (257, 33), (64, 512), (5, 2048), (130, 7), (1, 700)]


def _expr(rng: random.Random, depth: int):
    r = rng.random()
    if depth == 0 or r < 0.15:
        k = rng.randrange(3)
        return lambda ins: ins[k]
    if r < 0.35:
        u, g = rng.choice(UNARY), _expr(rng, depth - 1)
        return lambda ins: u(g(ins))
    if r < 0.65:
        op, g1, g2 = rng.choice(BINARY), _expr(rng, depth - 1), _expr(rng, depth - 1)
        return lambda ins: op(g1(ins), g2(ins))
    if r < 0.8:
        axis = rng.randrange(2)
        red = rng.choice([xnp.sum, xnp.max, xnp.mean, xnp.min])
        g1, g2 = _expr(rng, depth - 1), _expr(rng, depth - 1)
        return lambda ins: g2(ins) - red(g1(ins), axis=axis, keepdims=True)
    g = _expr(rng, depth - 1)
    if r < 0.9:
        return lambda ins: xnp.transpose(xnp.transpose(g(ins)) * 1.5)
    return lambda ins: xnp.concatenate([g(ins)[:, 1:], g(ins)[:, :1]], axis=1)


def _program(rng: random.Random):
    n = rng.randrange(1, 4)
    exprs = [_expr(rng, rng.randrange(1, 5)) for _ in range(n)]
    kinds = [rng.choice(["array", "column sums", "row maxima", "total"]) for _ in range(n)]

    def f(a, b, c):
        out = []
        for g, kind in zip(exprs, kinds):
            v = g((a, b, c))
            out.append({"array": lambda v: v, "column sums": lambda v: xnp.sum(v, axis=0),
                        "row maxima": lambda v: xnp.max(v, axis=1),
                        "total": lambda v: xnp.sum(v)}[kind](v))
        return tuple(out)
    return f


def _check(seed: int, gradient: bool):
    rng = random.Random(seed)
    shape = rng.choice(SHAPES)
    program = f = _program(rng)
    nr = np.random.default_rng(seed)
    args = [nr.standard_normal(shape).astype(np.float32) for _ in range(3)]
    if gradient:
        w = float(args[2][0, 0])

        def scalar(a, b, c):
            outs = program(a, b, c)
            return (sum(xnp.sum(o * o) * 0.001 for o in outs)
                    + xnp.sum((a @ xnp.transpose(b))[:2]) * w)
        f = xp.grad(scalar, argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # overflow in exp of random data, on both sides
        want = xp.jit(f, backend="interpreter")(*args)
        got = xp.jit(f)(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        scale = max(1.0, float(np.nanmax(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4 * scale, equal_nan=True,
                                   err_msg=f"seed {seed}, shape {shape}")


@pytest.mark.parametrize("seed", range(40))
def test_random_program(seed):
    _check(seed, gradient=False)


@pytest.mark.parametrize("seed", range(100, 115))
def test_random_program_gradient(seed):
    _check(seed, gradient=True)
