"""NCHW / NCW convolutions through features-innermost copies into the direct kernel
(emitters/conv_direct.py: relayout_plan, emit_relayout_direct): forward and input-gradient
forms (strides, padding, kernel dilation and reversal, f64) against the
interpreter on one to three threads, inf / NaN in the lhs next to padding as the
interpreter, and the gradient of a strided NCHW layer against JAX's."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.emitters.conv_direct import relayout_plan
from xlapy.backends.cpu.target import vector_bits
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate

# (lhs dims, rhs dims, out dims, window, dim_labels, type)
_CASES = [
    ((4, 8, 12, 13), (16, 8, 3, 3), (4, 16, 6, 7), "size=3x3 stride=2x2 pad=0_1x1_1",
     "bf01_oi01->bf01", "f32"),
    ((3, 6, 11, 9), (32, 6, 3, 2), (3, 32, 8, 6), "size=3x2 stride=1x2 pad=1_0x2_1 rhs_dilate=2x1",
     "bf01_oi01->bf01", "f32"),
    ((2, 16, 9, 10), (16, 48, 2, 2), (2, 48, 10, 11), "size=2x2 pad=1_1x1_1 rhs_reversal=1x1",
     "bf01_io01->bf01", "f32"),
    ((5, 12, 40), (32, 12, 5), (5, 32, 36), "size=5", "bf0_oi0->bf0", "f32"),
    ((2, 16, 33), (16, 16, 3), (2, 16, 16), "size=3 stride=2 pad=1_1 rhs_dilate=2",
     "bf0_oi0->bf0", "f32"),
    ((5, 24, 36), (24, 16, 5), (5, 16, 40), "size=5 pad=4_4 rhs_reversal=1",
     "bf0_io0->bf0", "f64"),
    ((2, 3, 20, 20), (8, 3, 7, 7), (2, 8, 8, 8), "size=7x7 stride=2x2 pad=-1_2x2_-1",
     "bf01_oi01->bf01", "f64"),
]


def _text(ld, rd, od, window, labels, t):
    s = lambda d: f"{t}[{','.join(map(str, d))}]"
    return (f"HloModule relayout_direct\nENTRY e {{\n  x = {s(ld)} parameter(0)\n"
            f"  w = {s(rd)} parameter(1)\n  ROOT c = {s(od)} convolution(x, w), "
            f"window={{{window}}}, dim_labels={labels}\n}}")


def _check(text, args, threads, tol):
    want = np.asarray(evaluate(parse(text), *args))
    for n in threads:
        exe = get_platform("cpu").compiler.compile(parse(text), num_threads=n)
        got = np.asarray(flatten(exe.run(*args))[0])
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{n} threads"
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{n} threads")


@pytest.mark.parametrize("k", range(len(_CASES)))
def test_against_the_interpreter(k, monkeypatch):
    from xlapy.backends.cpu.emitters import conv_direct
    monkeypatch.setattr(conv_direct, "PARALLEL_FLOPS", 0)   # the pool for every size
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    get_platform("cpu").compiler.clear_cache()
    *case, t = _CASES[k]
    text = _text(*case, t)
    # (the cases were chosen for 512-bit vectors; at 256 bits, XLAPY_HOST_CPU=haswell or a
    # CPU preferring them, some take another plan: the numbers are checked either way)
    assert relayout_plan(parse(text).entry.root) is not None or vector_bits() < 512
    rng = np.random.default_rng(k)
    dt = np.float64 if t == "f64" else np.float32
    args = [rng.standard_normal(d).astype(dt) for d in case[:2]]
    _check(text, args, (1, 2, 3), 1e-4 if t == "f32" else 1e-11)
    get_platform("cpu").compiler.clear_cache()


def test_nonfinite_lhs_next_to_padding():
    """inf / NaN in the lhs at its edges (windows that also cover padding): they reach the
    outputs whose windows hold them, padding adds nothing (no inf * 0)."""
    text = _text(*_CASES[0][:5], "f32")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 8, 12, 13)).astype(np.float32)
    x[0, 1, 0, 0], x[2, 5, 11, 12], x[3, 0, 6, 0], x[1, 7, 0, 12] = \
        np.inf, -np.inf, np.nan, np.inf
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    _check(text, [x, w], (1, 2), 1e-4)


def test_strided_nchw_gradient_against_jax():
    """jax.grad through a stride-2 NCHW layer: its forward and input-gradient phases take
    the copies and the direct kernel; values and gradients as JAX's."""
    dn = ("NCHW", "OIHW", "NCHW")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 16, 18, 18)).astype(np.float32)
    w = (rng.standard_normal((32, 16, 3, 3)) * 0.2).astype(np.float32)

    def loss(lax, numpy):
        return lambda x, w: numpy.sum(numpy.tanh(lax.conv_general_dilated(
            x, w, (2, 2), "SAME", dimension_numbers=dn)) ** 2)

    gx = xp.jit(xp.grad(loss(xp.lax, xp.numpy), argnums=(0, 1)))
    convs = [i for i in parse(gx.lower(x, w).as_text()).entry.instructions
             if i.opcode == "convolution"]
    assert relayout_plan(convs[0]) is not None
    want = jax.jit(jax.grad(loss(jax.lax, jax.numpy), argnums=(0, 1)))(x, w)
    for g, e in zip(gx(x, w), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


def test_large_operands_keep_the_batched_path(monkeypatch):
    """Operands whose copies would take more than RELAYOUT_MAX_BYTES of scratch space stay
    on the batched path."""
    from xlapy.backends.cpu.emitters import conv_direct
    conv = parse(_text(*_CASES[0])).entry.root
    assert relayout_plan(conv) is not None
    monkeypatch.setattr(conv_direct, "RELAYOUT_MAX_BYTES", 4 * (4 * 8 * 12 * 13))
    assert relayout_plan(conv) is None
