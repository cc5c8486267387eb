"""Filter gradients of NCHW / NCW and NHWC / NWC convolutions computed over blocks of
their contracting positions, a partial C per thread summed at the end
(emitters/conv_kblocked.py, the plan: conv_plan.kblock_plan): against JAX's gradients and
the interpreter, with several blocks per run of positions (the last one partial), several
runs, one and two threads' shares, strides and kernel dilation; inf and NaN in the lhs,
and signed zeros, as the interpreter."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.cpu.passes.conv_plan import conv_plan, kblock_plan
from xlapy.hlo import parse

NCHW, NCH = ("NCHW", "OIHW", "NCHW"), ("NCH", "OIH", "NCH")
NHWC, NHC = ("NHWC", "HWIO", "NHWC"), ("NHC", "HIO", "NHC")
_CASES = [
    # (lhs, rhs, strides, padding, rhs dilation, dimension numbers, blocks per run > 1)
    ((2, 16, 64, 64), (16, 16, 3, 3), (1, 1), "SAME", (1, 1), NCHW, True),
    ((4, 16, 16, 16), (32, 16, 3, 3), (1, 1), "SAME", (1, 1), NCHW, False),
    ((8, 6, 17, 19), (8, 6, 3, 3), (2, 1), "VALID", (1, 2), NCHW, False),
    ((3, 8, 40), (16, 8, 5), (1,), "SAME", (1,), NCH, False),
    ((5, 12, 37), (24, 12, 3), (2,), ((1, 2),), (2,), NCH, False),
    # NHWC / NWC: the patch matrix column-major (its lines along M), blocks of K
    ((8, 24, 24, 8), (3, 3, 8, 16), (1, 1), "SAME", (1, 1), NHWC, True),
    ((3, 40, 8), (5, 8, 16), (1,), "SAME", (1,), NHC, False),
    ((2, 20, 21, 6), (3, 3, 6, 12), (2, 1), "SAME", (2, 2), NHWC, False),
]


def _kblocked(text):
    """The KBlockPlans of the module's convolutions that take the depth-blocked form."""
    out = []
    for ins in parse(text).entry.instructions:
        if ins.opcode == "convolution":
            kp = kblock_plan(conv_plan(ins), ins.operands[1].shape, ins.attrs["dim_labels"])
            if kp is not None:
                out.append(kp)
    return out


@pytest.mark.parametrize("k", range(len(_CASES)))
def test_filter_gradient_against_jax(k):
    ls, rs, strides, padding, rdil, dn, several = _CASES[k]
    rng = np.random.default_rng(k)
    x = rng.standard_normal(ls).astype(np.float32)
    w = (rng.standard_normal(rs) * 0.3).astype(np.float32)

    def loss(lax, numpy):
        def f(x, w):
            y = lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rdil,
                                         dimension_numbers=dn)
            return numpy.sum(numpy.tanh(y) * y)
        return f

    gx = xp.grad(loss(xp.lax, xp.numpy), argnums=(0, 1))
    plans = _kblocked(xp.jit(gx).lower(x, w).as_text())
    assert len(plans) == 1, plans   # the filter gradient
    assert (plans[0].blocks_per_run > 1 and plans[0].run % plans[0].kb != 0) == several
    got = xp.jit(gx)(x, w)
    want = jax.jit(jax.grad(loss(jax.lax, jax.numpy), argnums=(0, 1)))(x, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


_FILTER_GRAD = """HloModule kblocked
ENTRY e {
  x = f32[2,16,64,64] parameter(0)
  dy = f32[2,16,64,64] parameter(1)
  ROOT c = f32[16,16,3,3] convolution(x, dy), window={size=64x64 pad=1_1x1_1},
    dim_labels=fb01_io01->fb01
}"""


def test_nonfinite_lhs_and_signed_zeros(cpu_check):
    """inf / NaN in the lhs (the patch matrix; padding still adds nothing) and an all
    negative-zero lhs (the sums are +0, as the interpreter's), through threads' partial
    sums."""
    assert _kblocked(_FILTER_GRAD)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 16, 64, 64)).astype(np.float32)
    dy = rng.standard_normal((2, 16, 64, 64)).astype(np.float32)
    x[0, 3, 0, 5], x[1, 7, 63, 63], x[1, 2, 10, 0] = np.inf, -np.inf, np.nan
    got, want = cpu_check.run(_FILTER_GRAD, x, dy)
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(want[0]))
    cpu_check.close(got[0], want[0], rtol=1e-4, atol=1e-3)
    zeros = np.full_like(x, -0.0)
    got, want = cpu_check.run(_FILTER_GRAD, zeros, dy)
    cpu_check.same(got[0], want[0])


@pytest.mark.parametrize("labels,lhs,rhs,out", [
    ("fb01_io01->fb01", (2, 16, 64, 64), (2, 16, 64, 64), (16, 16, 3, 3)),
    ("f01b_i01o->01bf", (8, 24, 24, 8), (8, 24, 24, 16), (3, 3, 8, 16))])
def test_f64(cpu_check, labels, lhs, rhs, out):
    """f64 filter gradients (row-major and column-major patch matrices) as the
    interpreter."""
    def t(dims):
        return "f64[" + ",".join(map(str, dims)) + "]"
    size = "64x64" if labels.startswith("fb") else "24x24"
    text = f"""HloModule kblocked64
ENTRY e {{
  x = {t(lhs)} parameter(0)
  dy = {t(rhs)} parameter(1)
  ROOT c = {t(out)} convolution(x, dy), window={{size={size} pad=1_1x1_1}},
    dim_labels={labels}
}}"""
    assert _kblocked(text)
    rng = np.random.default_rng(6)
    got, want = cpu_check.run(text, rng.standard_normal(lhs), rng.standard_normal(rhs))
    cpu_check.close(got[0], want[0], rtol=1e-10, atol=1e-10)


_NHWC_FILTER_GRAD = """HloModule kblocked_nhwc
ENTRY e {
  x = f32[8,24,24,8] parameter(0)
  dy = f32[8,24,24,16] parameter(1)
  ROOT c = f32[3,3,8,16] convolution(x, dy), window={size=24x24 pad=1_1x1_1},
    dim_labels=f01b_i01o->01bf
}"""


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_nhwc_nonfinite_lhs_and_signed_zeros(threads):
    """The NHWC form (column-major blocks of the patch matrix, which the gemm reads down
    their columns in its direct phase: gemm_params.direct_call) on one to three threads:
    inf / NaN in the lhs where the interpreter has them (padding adds nothing), and an all
    negative-zero lhs gives the interpreter's zeros, signs included."""
    from xlapy.backends.base import flatten, get_platform
    from xlapy.backends.interpreter import evaluate
    (kp,) = _kblocked(_NHWC_FILTER_GRAD)
    assert not kp.rows_first
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 24, 24, 8)).astype(np.float32)
    dy = rng.standard_normal((8, 24, 24, 16)).astype(np.float32)
    x[0, 0, 5, 3], x[7, 23, 23, 7], x[3, 10, 0, 1] = np.inf, -np.inf, np.nan
    exe = get_platform("cpu").compiler.compile(parse(_NHWC_FILTER_GRAD), num_threads=threads)
    for lhs in (x, np.full_like(x, -0.0)):
        got = np.asarray(flatten(exe.run(lhs, dy))[0])
        want = np.asarray(evaluate(parse(_NHWC_FILTER_GRAD), lhs, dy))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
