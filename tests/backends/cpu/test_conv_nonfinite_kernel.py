"""Padding adds nothing, even next to an inf or NaN kernel element (emitters/conv_guard.py):
every fast convolution path (gemm, blocked gemm, depthwise, filter gradient, one output,
a gemm epilogue fusion) against the interpreter with non-finite kernels, NaN positions
compared exactly. XLA:CPU gives NaN there (README, Numerics); HLO adds nothing."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as lax
from xlapy_tests_cpu_conv_cases import _MODEL_FORMS, _case, _depthwise_case, _module, draw
from xlapy.backends.cpu.emitters.conv_guard import needs_guard
from xlapy.hlo import parse


def _poison(rng, args):
    """Every second argument is a kernel: a few of its elements become inf, -inf or NaN."""
    out = []
    for k, a in enumerate(args):
        a = a.copy()
        if k % 2 == 1 and a.size:
            flat = a.reshape(-1)
            idx = rng.choice(flat.size, size=max(1, flat.size // 20), replace=False)
            flat[idx] = rng.choice(np.array([np.inf, -np.inf, np.nan], a.dtype), idx.size)
        out.append(a)
    return out


def _same(got, want, labels):
    bad = []
    for g, w, label in zip(got, want, labels):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if not np.array_equal(np.isnan(g), np.isnan(w)):
            bad.append(f"{label}: NaN at {int((np.isnan(g) != np.isnan(w)).sum())} "
                       f"positions where the interpreter has none (or the reverse)")
        elif not np.allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True):
            bad.append(f"{label}: values differ")
    assert not bad, "\n".join(bad)


def test_model_forms_and_random_convolutions(cpu_check):
    rng = np.random.default_rng(7)
    cases = list(_MODEL_FORMS) + draw(_case, rng, 24)
    m, args = _module(cases, seed=3)
    mod = parse(m.text())
    assert sum(needs_guard(i, None) for i in mod.entry.instructions
               if i.opcode == "convolution") >= 10   # most pad: the guard is exercised
    got, want = cpu_check.run(m.text(), *_poison(rng, args))
    _same(got, want, m.labels)


def test_depthwise(cpu_check):
    rng = np.random.default_rng(8)
    cases = draw(_depthwise_case, rng, 12)
    m, args = _module(cases, seed=4)
    got, want = cpu_check.run(m.text(), *_poison(rng, args))
    _same(got, want, m.labels)


@pytest.mark.parametrize("shape", [(8, 14, 14, 32), (1, 5, 5, 3)])
def test_conv_bias_relu_epilogue_and_gradients(shape):
    """A padded conv + bias + relu (a gemm epilogue fusion) and its gradients in jit, with
    an inf in the kernel: equal to the interpreter platform's run of the same function."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((3, 3, shape[-1], 16)).astype(np.float32)
    w[1, 2, 0, 3] = np.inf
    bias = rng.standard_normal(16).astype(np.float32)

    def f(x, w, bias):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return xp.numpy.maximum(y + bias, 0.0)

    def loss(x, w, bias):
        return xp.numpy.sum(f(x, w, bias) * 0.5)

    for fn in (f, xp.grad(loss, argnums=(0, 1))):
        got = xp.jit(fn)(x, w, bias)
        want = xp.jit(fn, backend="interpreter")(x, w, bias)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        _same(got, want, [f"output {k}" for k in range(len(got))])


def test_finite_constant_kernel_needs_no_guard():
    text = """HloModule m
ENTRY e {
  x = f32[1,4,4,1] parameter(0)
  k = f32[2,2,1,1] constant({{{{1}}, {{2}}}, {{{3}}, {{4}}}})
  ROOT c = f32[1,4,4,1] convolution(x, k), window={size=2x2 pad=0_1x0_1},
    dim_labels=b01f_01io->b01f
}"""
    conv = parse(text).entry.root
    assert not needs_guard(conv, conv.operands[1])
    assert needs_guard(conv, None)
    assert needs_guard(conv, conv.operands[0])   # a parameter kernel: checked at run time
