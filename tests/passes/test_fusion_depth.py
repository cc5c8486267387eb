"""Deep elementwise chains (an unrolled recurrence: an RNN cell, an ODE step, 100-1000 steps)
compile: a fused computation chains at most fusion.MAX_FUSED_DEPTH operations, since code
generation recurses over a fusion's operands. A 100-step chain, fused whole, went past
Python's recursion limit under jit and jit(grad) (RecursionError)."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.passes.fusion import MAX_FUSED_DEPTH, fused_depth


def _chain(w, n):
    y = w
    for _ in range(n):
        y = xnp.tanh(y) * 0.9 + 0.1 * w
    return y


PROGRAMS = {
    "forward": lambda w: (_chain(w, 300) ** 2).sum(),
    "grad": xp.grad(lambda w: (_chain(w, 120) ** 2).sum()),
    "row softmax": lambda w: (lambda y: xnp.exp(y - y.max(axis=1, keepdims=True)))(
        _chain(w, 200)),
    "two outputs": lambda w: (_chain(w, 150), _chain(w * 2, 210).sum(0)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_deep_chains_compile_and_agree(name):
    f = PROGRAMS[name]
    x = np.linspace(-1, 1, 5 * 33).reshape(5, 33).astype(np.float32)
    compiled = xp.jit(f).lower(x).compile()
    fusions = [i for c in compiled.executable.optimized_module.computations
               for i in c.instructions if i.opcode == "fusion"]
    assert fusions and max(fused_depth(i) for i in fusions) <= MAX_FUSED_DEPTH
    got, want = compiled(x), xp.jit(f, backend="interpreter")(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_fused_depth_counts_the_longest_chain():
    f = xp.jit(lambda a, b: xnp.tanh(a * b) + xnp.exp(a))
    a = np.ones((4, 4), np.float32)
    module = f.lower(a, a).compile().executable.optimized_module
    fusion, = [i for c in module.computations for i in c.instructions if i.opcode == "fusion"]
    assert fused_depth(fusion) == 3   # multiply, tanh, add (exp is beside them)
    assert fused_depth(fusion.operands[0]) == 1
