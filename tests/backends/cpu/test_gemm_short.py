"""Products at most dot_plan.SHORT_DEPTH deep and short_rows() high, rows contiguous, run
on the own gemm's direct phase (no packing) whatever their size: the plan's choice, the
compile-time and run-time rules agreeing, and results against NumPy (float64 sums) at the
edges of the rule."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.cpu.emitters.gemm_params import GV, KC, direct_call, lanes
from xlapy.backends.cpu.passes.dot_plan import SHORT_DEPTH, own_gemm_for, short_rows
from xlapy.backends.cpu.target import threads_available, vector_bits


def plan(m, n, k, rm=True):
    return dict(t="f32", m=m, n=n, k=k, lhs_rm=rm, rhs_rm=True, out_rm=True, batch=1)


@pytest.mark.skipif(not threads_available(), reason="the own gemm needs the thread pool")
def test_short_products_take_the_own_gemm():
    rows = short_rows(vector_bits())
    assert own_gemm_for(plan(rows, 384, 128))               # a GRU's 32 x 128 . 128 x 384
    assert own_gemm_for(plan(rows, 100, SHORT_DEPTH))
    assert not own_gemm_for(plan(rows, 100, SHORT_DEPTH + 44))   # deeper: 1.9M flops, BLAS
    assert not own_gemm_for(plan(rows + 8, 384, 128))        # taller: BLAS below 4M flops
    assert not own_gemm_for(plan(rows, 384, 128, rm=False))  # A read down its columns


def test_compile_time_rule_is_the_run_time_rule():
    vb, rows = vector_bits(), short_rows(vector_bits())
    assert direct_call("f32", rows, 384, vb, True, 128)
    assert not direct_call("f32", rows, 384, vb, True, SHORT_DEPTH + 1)
    assert not direct_call("f32", rows + 1, 384, vb, True, 128)
    assert not direct_call("f32", rows, 384, vb, False, 128)
    # C at most GV vectors wide, at most KC deep, A any way (B's and C's rows contiguous)
    wide = GV * lanes("f32", vb)
    assert direct_call("f32", 1568, wide, vb, False, KC, True)
    assert not direct_call("f32", 1568, wide, vb, False, KC + 1, True)
    assert not direct_call("f32", 1568, wide + 1, vb, False, KC, True)
    assert not direct_call("f32", 1568, wide, vb, False, KC, False)
    assert not direct_call("bf16", 1568, wide, vb, False, KC, True)


@pytest.mark.parametrize("m,k,n", [(32, 128, 384), (17, 256, 100), (32, 256, 33),
                                   (5, 200, 1000), (31, 255, 129), (1, 256, 384)])
def test_short_products_match_numpy(m, k, n):
    rng = np.random.default_rng(m * 1000 + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = xp.jit(lambda x, y: x @ y)(a, b)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-4)
    # and transposed operands (not rows-contiguous: the packed phase or BLAS)
    got_t = xp.jit(lambda x, y: x.T @ y)(np.ascontiguousarray(a.T), b)
    np.testing.assert_allclose(np.asarray(got_t), want, rtol=2e-5, atol=2e-4)
