"""vmap(f) is the batched program one would write by hand, not a loop: under jit it
compiles to the same optimized HLO as the hand-batched function (instruction for
instruction, metadata aside), and its graph holds one dot_general with a batch dimension
where f has one dot."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.frontend.core import ShapedArray
from xlapy.frontend.graph import make_graph

f32 = np.float32
RNG = np.random.default_rng(0)


def _program(fn, *args) -> str:
    text = xp.jit(fn).lower(*args).compile().as_text()
    text = re.sub(r", metadata=\{[^}]*\}", "", text)
    return text[text.index("ENTRY"):].split("\n", 1)[1]


def _mlp(params, x):
    for w, b in params[:-1]:
        x = xnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


PARAMS = [(RNG.standard_normal((8, 16)).astype(f32), RNG.standard_normal(16).astype(f32)),
          (RNG.standard_normal((16, 4)).astype(f32), RNG.standard_normal(4).astype(f32))]
X = RNG.standard_normal((5, 8)).astype(f32)
M = RNG.standard_normal((6, 8)).astype(f32)
A3 = RNG.standard_normal((5, 3, 8)).astype(f32)

SAME_PROGRAM = {
    "mlp forward": (xp.vmap(_mlp, in_axes=(None, 0)), _mlp, (PARAMS, X)),
    "matrix @ batched vector": (xp.vmap(lambda m, v: m @ v, in_axes=(None, 0)),
                                lambda m, V: V @ m.T, (M, X)),
    "batched vector @ matrix": (xp.vmap(lambda v, m: v @ m.T, in_axes=(0, None)),
                                lambda V, m: V @ m.T, (X, M)),
    "batched matrix products": (xp.vmap(lambda a, v: a @ v), lambda A, V: xnp.einsum(
        "bij,bj->bi", A, V), (A3, X)),
    "row softmax": (xp.vmap(lambda v: xnp.exp(v - v.max()) / xnp.exp(v - v.max()).sum()),
                    lambda V: xnp.exp(V - V.max(1, keepdims=True))
                    / xnp.exp(V - V.max(1, keepdims=True)).sum(1, keepdims=True), (X,)),
}


@pytest.mark.parametrize("name", list(SAME_PROGRAM))
def test_vmap_compiles_to_the_hand_batched_program(name):
    vm, hand, args = SAME_PROGRAM[name]
    assert _program(vm, *args) == _program(hand, *args)
    np.testing.assert_allclose(xp.jit(vm)(*args), xp.jit(hand)(*args), rtol=1e-5, atol=1e-6)


def _prims(fn, *avals):
    graph, _, _ = make_graph(fn, list(avals))
    return [e.prim.name for e in graph.eqns]


def test_per_example_gradients_are_batched_dots_not_loops():
    loss = lambda w, x, y: ((xnp.tanh(x @ w) - y) ** 2).sum()
    per_example = xp.vmap(xp.grad(loss), in_axes=(None, 0, 0))
    graph, _, _ = make_graph(per_example, [ShapedArray((8, 4), f32), ShapedArray((5, 8), f32),
                                           ShapedArray((5, 4), f32)])
    prims = [e.prim.name for e in graph.eqns]
    assert not {"while", "scan", "cond"} & set(prims)
    # forward x @ w, the cotangent of x (dead, removed when compiled) and the per-example
    # outer products x^T ct: the only one with a batch dimension
    dots = [e.params["dimension_numbers"] for e in graph.eqns if e.prim.name == "dot_general"]
    assert len(dots) == 3
    assert [dn[1] for dn in dots].count(((0,), (0,))) == 1
    assert sum(1 for dn in dots if dn[1] != ((), ())) == 1


def test_batched_operands_of_a_dot_become_one_batch_dimension():
    prims = _prims(xp.vmap(lambda a, b: a @ b), ShapedArray((5, 3, 4), f32),
                   ShapedArray((5, 4, 2), f32))
    assert prims == ["dot_general"]


def test_batched_conv_folds_into_the_convolution_batch():
    k = RNG.standard_normal((4, 3, 2, 2)).astype(f32)
    imgs = RNG.standard_normal((6, 3, 5, 5)).astype(f32)
    one = lambda x: xlax.conv_general_dilated(x[None], k, (1, 1), "SAME")[0]
    prims = _prims(xp.vmap(one), ShapedArray(imgs.shape, f32))
    assert prims.count("conv_general_dilated") == 1 and "while" not in prims
    hand = lambda X: xlax.conv_general_dilated(X, k, (1, 1), "SAME")
    np.testing.assert_allclose(xp.jit(xp.vmap(one))(imgs), xp.jit(hand)(imgs), rtol=1e-5,
                               atol=1e-5)


def test_dynamic_slice_with_batched_starts_is_a_gather():
    prims = _prims(xp.vmap(lambda x, i: xlax.dynamic_slice(x, (i,), (2,))),
                   ShapedArray((5, 6), f32), ShapedArray((5,), np.int32))
    assert "gather" in prims and "dynamic_slice" not in prims and "while" not in prims


def test_batched_cond_predicate_is_a_select():
    prims = _prims(xp.vmap(lambda p, x: xlax.cond(p, xnp.sin, xnp.cos, x)),
                   ShapedArray((5,), np.bool_), ShapedArray((5, 3), f32))
    assert "cond" not in prims and "select" in prims


def test_the_vmap_benchmark_runs_and_its_programs_match():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vmap.py"
    spec = importlib.util.spec_from_file_location("vmap_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    lines = bench.check(quick=True)
    assert [line.split(":")[0] for line in lines] == ["mlp forward", "per-example grad",
                                                      "batched matvec"]
