"""Products in a while loop's body stay on the calling thread below
gemm.GEMM_LOOP_PARALLEL_FLOPS (outside loops: below GEMM_PARALLEL_FLOPS; equal at present):
which programs count as running per iteration, the chunks each product gets, and the
results against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.cpu.emitters import gemm
from xlapy.backends.cpu.emitters.loop_state import _loop_computations
from xlapy.backends.cpu.target import threads_available
from xlapy.hlo import parse

# h <- tanh(h . w) three times, and the same product once outside the loop:
# 2 * 16 * 256 * 512 = 4.2 M flops, between the two thresholds
_TEXT = """HloModule loop_gemm

cond {
  s = (s32[], f32[16,256], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[16,256], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  h = f32[16,256] get-tuple-element(s), index=1
  w = f32[256,256] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  wide = f32[256,512] concatenate(w, w), dimensions={1}
  p = f32[16,512] dot(h, wide), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[16,256] slice(p), slice={[0:16], [128:384]}
  t = f32[16,256] tanh(q)
  ROOT r = (s32[], f32[16,256], f32[256,256]) tuple(j, t, w)
}

ENTRY main {
  h = f32[16,256] parameter(0)
  w = f32[256,256] parameter(1)
  w2 = f32[256,512] parameter(2)
  zero = s32[] constant(0)
  s = (s32[], f32[16,256], f32[256,256]) tuple(zero, h, w)
  l = (s32[], f32[16,256], f32[256,256]) while(s), condition=cond, body=body
  out = f32[16,256] get-tuple-element(l), index=1
  top = f32[16,512] dot(out, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[16,256], f32[16,512]) tuple(out, top)
}
"""


def test_loop_computations_are_the_condition_and_body():
    m = parse(_TEXT)
    ids = _loop_computations(m)
    names = {c.name for c in m.computations if id(c) in ids}
    assert names == {"cond", "body"}


def test_parallel_threshold_by_loop():
    class Prog:
        in_loop = True
    assert gemm.parallel_flops(Prog()) == gemm.GEMM_LOOP_PARALLEL_FLOPS
    Prog.in_loop = False
    assert gemm.parallel_flops(Prog()) == gemm.GEMM_PARALLEL_FLOPS
    # (the same value at present: see gemm.py on why loops split like the rest)
    assert gemm.GEMM_LOOP_PARALLEL_FLOPS >= gemm.GEMM_PARALLEL_FLOPS


@pytest.mark.skipif(not threads_available(), reason="no thread pool on this platform")
def test_products_in_a_loop_body_run_on_one_thread(cpu_check, monkeypatch):
    seen = []
    real = gemm.parallel_flops

    def spy(pe):
        limit = real(pe)
        seen.append((pe.comp.name, limit))
        return limit
    monkeypatch.setattr(gemm, "parallel_flops", spy)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")  # compiled here, not read from a cache
    rng = np.random.default_rng(5)
    args = [(0.1 * rng.standard_normal(s)).astype(np.float32)
            for s in ((16, 256), (256, 256), (256, 512))]
    got, want = cpu_check.run(_TEXT, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    by_comp = dict(seen)
    assert by_comp.get("body") == gemm.GEMM_LOOP_PARALLEL_FLOPS
    assert by_comp.get("main") == gemm.GEMM_PARALLEL_FLOPS
