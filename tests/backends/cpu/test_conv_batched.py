"""NCHW / NCW convolutions as one gemm per batch element, each element's patch matrix
built by the thread that multiplies it (emitters/conv_batched.py, the plan:
conv_plan.batched_plan): forward and input gradient forms against JAX's values and
gradients (strides, padding, kernel dilation, a kernel copied into a matrix for the input
gradient), on one thread and several, and inf / NaN in the lhs as the interpreter."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.cpu.emitters import conv_batched
from xlapy.backends.cpu.passes.conv_plan import batched_plan, conv_plan
from xlapy.hlo import parse

NCHW, NCH = ("NCHW", "OIHW", "NCHW"), ("NCH", "OIH", "NCH")
_CASES = [
    # (lhs, rhs, strides, padding, rhs dilation, dimension numbers)
    ((4, 8, 12, 13), (16, 8, 3, 3), (2, 2), "SAME", (1, 1), NCHW),
    ((3, 6, 11, 9), (5, 6, 3, 2), (1, 2), ((1, 0), (2, 1)), (2, 1), NCHW),
    ((5, 12, 40), (24, 12, 5), (1,), "VALID", (1,), NCH),
    ((2, 7, 33), (9, 7, 3), (2,), "SAME", (2,), NCH),
]


@pytest.fixture(autouse=True)
def batched_path(monkeypatch):
    """The batched emitter itself: NCHW / NCW convolutions the direct kernel could take
    through features-innermost copies (conv.RELAYOUT_DIRECT, tested in
    test_conv_relayout_direct.py) stay on it here (the switch is not part of the compile
    cache's key: no disk cache, a fresh memory cache)."""
    from xlapy.backends.base import get_platform
    from xlapy.backends.cpu.emitters import conv as conv_emitter
    monkeypatch.setattr(conv_emitter, "RELAYOUT_DIRECT", False)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    get_platform("cpu").compiler.clear_cache()
    yield
    get_platform("cpu").compiler.clear_cache()


def _batched(text) -> int:
    return sum(batched_plan(i, conv_plan(i)) is not None
               for i in parse(text).entry.instructions if i.opcode == "convolution")


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("k", range(len(_CASES)))
def test_forward_and_gradients_against_jax(k, threads, monkeypatch):
    if threads:   # every convolution on the pool, compiled afresh
        monkeypatch.setattr(conv_batched, "PARALLEL_FLOPS", 0)
        monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    ls, rs, strides, padding, rdil, dn = _CASES[k]
    rng = np.random.default_rng(k)
    x = rng.standard_normal(ls).astype(np.float32)
    w = (rng.standard_normal(rs) * 0.3).astype(np.float32)

    def conv(lax):
        return lambda x, w: lax.conv_general_dilated(x, w, strides, padding,
                                                     rhs_dilation=rdil, dimension_numbers=dn)

    def loss(lax, numpy):
        return lambda x, w: numpy.sum(numpy.tanh(conv(lax)(x, w)) * conv(lax)(x, w))

    gx = xp.grad(loss(xp.lax, xp.numpy), argnums=(0, 1))
    assert _batched(xp.jit(conv(xp.lax)).lower(x, w).as_text()) == 1
    assert _batched(xp.jit(gx).lower(x, w).as_text()) >= 2   # forward, input gradient
    np.testing.assert_allclose(np.asarray(xp.jit(conv(xp.lax))(x, w)),
                               np.asarray(jax.jit(conv(jax.lax))(x, w)), rtol=1e-4, atol=1e-4)
    want = jax.jit(jax.grad(loss(jax.lax, jax.numpy), argnums=(0, 1)))(x, w)
    for g, e in zip(xp.jit(gx)(x, w), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


def test_nonfinite_lhs(cpu_check):
    text = """HloModule batched
ENTRY e {
  x = f32[4,8,12,13] parameter(0)
  k = f32[16,8,3,3] parameter(1)
  ROOT c = f32[4,16,6,7] convolution(x, k), window={size=3x3 stride=2x2 pad=0_1x1_1},
    dim_labels=bf01_oi01->bf01
}"""
    assert _batched(text) == 1
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 8, 12, 13)).astype(np.float32)
    x[0, 1, 0, 0], x[2, 5, 11, 12], x[3, 0, 6, 6] = np.inf, -np.inf, np.nan
    k = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    got, want = cpu_check.run(text, x, k)
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(want[0]))
    cpu_check.close(got[0], want[0], rtol=1e-5, atol=1e-5)


def test_one_image_nchw_with_epilogue():
    """One NCHW image (rows collapse: one gemm, no batch loop) with a bias and relu fused
    on its tiles: C has its positions contiguous, so the gemm computes C^T and the
    epilogue takes transposed tiles (conv._swaps)."""
    from xlapy.backends.cpu.emitters.conv import swapped_for
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 16, 64, 64)).astype(np.float32)
    w = (rng.standard_normal((24, 16, 5, 5)) * 0.2).astype(np.float32)
    bias = rng.standard_normal(24).astype(np.float32)

    def f(lax, numpy):
        def g(x, w, bias):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(2, 2),
                                         dimension_numbers=NCHW)
            return numpy.maximum(y + numpy.reshape(bias, (1, 24, 1, 1)), 0.0)
        return g

    lowered = xp.jit(f(xp.lax, xp.numpy)).lower(x, w, bias)
    conv = next(i for i in parse(lowered.as_text()).entry.instructions
                if i.opcode == "convolution")
    assert conv_plan(conv).epilogue_ok and swapped_for(conv_plan(conv))
    assert "kind=kOutput" in lowered.compile().executable.optimized_module.to_string()
    np.testing.assert_allclose(np.asarray(xp.jit(f(xp.lax, xp.numpy))(x, w, bias)),
                               np.asarray(jax.jit(f(jax.lax, jax.numpy))(x, w, bias)),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dims", [(3, 12, 10, 11, 20), (4, 16, 8, 16, 8), (8, 5, 19, 17, 6)])
def test_winograd_nchw_through_copies(cpu_check, dims):
    """Winograd on NCHW operands: the lhs copied features-innermost and the result copied
    back (conv_relayout.py: squares of 8 x 8 transposed in registers, the edges one element
    at a time; fewer than 8 features or positions: line by line), against the
    interpreter."""
    from xlapy.backends.cpu.passes.winograd_plan import winograd_plan
    n, c, h, w, k = dims
    text = f"""HloModule wino_nchw
ENTRY e {{
  x = f32[{n},{c},{h},{w}] parameter(0)
  f = f32[{k},{c},3,3] parameter(1)
  ROOT y = f32[{n},{k},{h},{w}] convolution(x, f), window={{size=3x3 pad=1_1x1_1}},
    dim_labels=bf01_oi01->bf01
}}"""
    assert winograd_plan(parse(text).entry.root) is not None
    rng = np.random.default_rng(sum(dims))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    f = (rng.standard_normal((k, c, 3, 3)) * 0.3).astype(np.float32)
    got, want = cpu_check.run(text, x, f)
    cpu_check.close(got[0], want[0], rtol=1e-4, atol=1e-4)


def test_f64_input_gradient_form(cpu_check):
    """An f64 NCW input-gradient form (kernel "io", copied into a matrix), one gemm per
    batch element, as the interpreter."""
    text = """HloModule batched64
ENTRY e {
  dy = f64[5,24,36] parameter(0)
  k = f64[24,12,5] parameter(1)
  ROOT dx = f64[5,12,40] convolution(dy, k), window={size=5 pad=4_4 rhs_reversal=1},
    dim_labels=bf0_io0->bf0
}"""
    assert _batched(text) == 1
    rng = np.random.default_rng(8)
    got, want = cpu_check.run(text, rng.standard_normal((5, 24, 36)),
                              rng.standard_normal((24, 12, 5)))
    cpu_check.close(got[0], want[0], rtol=1e-10, atol=1e-10)
