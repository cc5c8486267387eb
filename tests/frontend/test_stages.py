"""jit's stages: traced -> lowered (HLO text) -> compiled (optimized text, cost, memory)."""

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.hlo import parse

f32 = np.float32


def f(x, w):
    return xnp.tanh(x @ w).sum(axis=0)


X = np.ones((8, 16), f32)
W = np.ones((16, 4), f32)


def test_lower_gives_parsable_hlo_with_metadata():
    lowered = xp.jit(f).lower(X, W)
    text = lowered.as_text()
    m = parse(text)
    assert m.entry.parameters[0].shape.dims == (8, 16)
    assert "dot(" in text and "tanh(" in text
    assert 'op_name="jit(f)/dot_general"' in text and "test_stages.py" in text


def test_compile_as_text_is_optimized_and_callable():
    compiled = xp.jit(f).lower(X, W).compile()
    assert "fusion(" in compiled.as_text()
    np.testing.assert_allclose(compiled(X, W), np.tanh(X @ W).sum(0), rtol=1e-5)


def test_cost_analysis_counts_dot_flops_and_transcendentals():
    cost = xp.jit(f).lower(X, W).compile().cost_analysis()
    assert cost["flops"] >= 2 * 8 * 16 * 4          # the matmul
    assert cost["transcendentals"] == 8 * 4           # one tanh per element
    fused = cost["bytes accessed"]
    unfused = xp.jit(f).lower(X, W).module            # before fusion: every op in memory
    from xlapy.analysis.cost_model import module_cost
    assert fused < module_cost(unfused)["bytes accessed"]


def test_memory_analysis_reports_arena_and_io():
    mem = xp.jit(f).lower(X, W).compile().memory_analysis()
    assert mem["argument_size_in_bytes"] == X.nbytes + W.nbytes
    assert mem["output_size_in_bytes"] == 4 * 4
    assert mem["temp_size_in_bytes"] >= 8 * 4 * 4     # the dot's result lives in the arena


def test_clear_caches_forgets_compiled_programs(monkeypatch):
    """xlapy.clear_caches() (as jax.clear_caches): the next call traces and compiles again."""
    from xlapy.backends.base import get_platform
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    stats = get_platform("cpu").compiler.stats
    traces = []

    def g(x, w):
        traces.append(1)
        return xnp.tanh(x @ w).sum(axis=0) * 3

    jg = xp.jit(g)
    want = jg(X, W)
    n_traces, n_compiles = len(traces), stats["compiles"]
    np.testing.assert_array_equal(jg(X, W), want)
    assert (len(traces), stats["compiles"]) == (n_traces, n_compiles)   # served from caches
    xp.clear_caches()
    np.testing.assert_array_equal(jg(X, W), want)
    assert len(traces) == n_traces + 1 and stats["compiles"] == n_compiles + 1
