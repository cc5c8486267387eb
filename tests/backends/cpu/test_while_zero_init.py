"""A while whose state starts as broadcast constants: leaves whose bytes are all zero are
cleared in the loop's buffers instead of copied (program.zero_filled); -0.0 and other values
are copied. Against the interpreter, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.cpu.emitters.program import zero_filled
from xlapy.hlo import parse

_TEXT = """HloModule zeros

cond {
  s = (s32[], f32[5,7], f32[5,7], s32[3], pred[4], f32[5,7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[5,7], f32[5,7], s32[3], pred[4], f32[5,7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[5,7] get-tuple-element(s), index=1
  m = f32[5,7] get-tuple-element(s), index=2
  k = s32[3] get-tuple-element(s), index=3
  p = pred[4] get-tuple-element(s), index=4
  x = f32[5,7] get-tuple-element(s), index=5
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a2 = f32[5,7] add(a, x)
  m2 = f32[5,7] multiply(m, x)
  ones = s32[3] broadcast(one), dimensions={}
  k2 = s32[3] add(k, ones)
  p2 = pred[4] not(p)
  ROOT t = (s32[], f32[5,7], f32[5,7], s32[3], pred[4], f32[5,7]) tuple(j, a2, m2, k2, p2, x)
}

ENTRY main {
  x = f32[5,7] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  nz = f32[] constant(-0)
  acc = f32[5,7] broadcast(fz), dimensions={}
  neg = f32[5,7] broadcast(nz), dimensions={}
  cnt = s32[3] broadcast(zero), dimensions={}
  f = pred[] constant(false)
  flags = pred[4] broadcast(f), dimensions={}
  s = (s32[], f32[5,7], f32[5,7], s32[3], pred[4], f32[5,7]) tuple(zero, acc, neg, cnt, flags, x)
  ROOT w = (s32[], f32[5,7], f32[5,7], s32[3], pred[4], f32[5,7]) while(s), condition=cond,
    body=body
}
"""


@pytest.mark.parametrize("fill", ["zeros", "signed zeros"])
def test_state_starting_as_broadcast_constants(cpu_check, fill):
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    if fill == "signed zeros":
        x[0] = [-0.0, 0.0, -1.0, 2.0, -0.0, np.inf, -np.inf]
    got, want = cpu_check.run(_TEXT, x)
    for g, w in zip(got, want):
        cpu_check.same(g, w)   # bit for bit: -0.0 * x keeps its signs
    np.testing.assert_array_equal(got[3], [3, 3, 3])
    np.testing.assert_array_equal(got[4], [True] * 4)


def test_zero_filled_sees_only_all_zero_bytes():
    m = parse(_TEXT)
    by_name = {i.name: i for i in m.entry.instructions}
    assert zero_filled(by_name["acc"]) and zero_filled(by_name["cnt"])
    assert zero_filled(by_name["flags"])
    assert not zero_filled(by_name["neg"])     # -0.0: its sign bit is set
    assert not zero_filled(by_name["x"])


def test_zero_broadcasts_that_only_start_loops_run_no_kernel(monkeypatch):
    # the loop clears its own buffers for acc, cnt and flags: their broadcasts' kernels
    # would write bytes nobody reads, and are not emitted (program._only_clears_loops);
    # neg (-0.0) is copied into the loop, so its broadcast still runs
    from xlapy.backends.base import get_platform
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_hlo_profile")   # one label per emitted kernel
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    exe = get_platform("cpu").compiler.compile(parse(_TEXT))
    emitted = {name for comp, name, _ in exe.spec.profile_labels if comp == "main"}
    starts = [i for i in exe.optimized_module.entry.instructions
              if i.opcode not in ("parameter", "constant")
              and any(u.opcode == "tuple" for u in i.users)]
    zeros = {i.name for i in starts if zero_filled(i)}
    copied = {i.name for i in starts if not zero_filled(i)}
    assert zeros and copied, (zeros, copied)
    assert "w" in emitted and copied <= emitted
    assert not zeros & emitted
