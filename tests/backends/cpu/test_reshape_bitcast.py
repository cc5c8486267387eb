"""reshape-to-bitcast (passes/reshape_bitcast.py): reshapes between row-major shapes become
bitcasts (buffer aliases, no copy kernel) in the computations the program emits; against the
interpreter, including the cases where an alias must not be overwritten."""

from __future__ import annotations

import numpy as np

from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.passes.reshape_bitcast import bitcast_ok
from xlapy.hlo import parse

_TEXT = """HloModule flatten

ENTRY main {
  p = f32[4,3,5] parameter(0)
  w = f32[15,6] parameter(1)
  e = f32[4,3,5] exponential(p)
  flat = f32[4,15] reshape(e)
  d = f32[4,6] dot(flat, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  pflat = f32[60] reshape(p)
  neg = f32[60] negate(pflat)
  t = f32[5,3,4]{0,1,2} transpose(p), dimensions={2,1,0}
  odd = f32[60] reshape(t)
  ROOT out = (f32[4,6], f32[60], f32[4,3,5], f32[60], f32[60]) tuple(d, neg, p, pflat, odd)
}
"""


def _opcodes(text):
    """The opcodes of the computations the program emits (not fused ones), after the cpu
    pipeline; none is a reshape that could be a bitcast."""
    m = run_cpu_pipeline(parse(text))
    fused = {id(i.fused_computation) for c in m.computations for i in c.instructions
             if i.opcode == "fusion"}
    ops = [i for c in m.computations if id(c) not in fused for i in c.instructions]
    assert not [i.name for i in ops if i.opcode == "reshape" and bitcast_ok(i)]
    return [i.opcode for i in ops]


def test_row_major_reshapes_become_bitcasts(cpu_check):
    ops = _opcodes(_TEXT)
    assert "bitcast" in ops   # flat, the dot's operand (pflat fuses into the negate)
    rng = np.random.default_rng(0)
    p = rng.standard_normal((4, 3, 5)).astype(np.float32)
    w = rng.standard_normal((15, 6)).astype(np.float32)
    got, want = cpu_check.run(_TEXT, p, w)
    for g, e in zip(got, want):
        cpu_check.close(g, e, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[2], p)      # negate(pflat) did not write over p
    np.testing.assert_array_equal(got[3], p.reshape(60))


def test_reshape_in_a_loop_and_as_root(cpu_check):
    text = """HloModule loop

cond {
  s = (s32[], f32[2,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[2,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2,6] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[3,4] reshape(x)
  y = f32[3,4] sine(r)
  back = f32[2,6] reshape(y)
  ROOT t = (s32[], f32[2,6]) tuple(j, back)
}

ENTRY main {
  x = f32[2,6] parameter(0)
  z = s32[] constant(0)
  s = (s32[], f32[2,6]) tuple(z, x)
  w = (s32[], f32[2,6]) while(s), condition=cond, body=body
  v = f32[2,6] get-tuple-element(w), index=1
  ROOT out = f32[12] reshape(v)
}
"""
    x = np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)
    got, want = cpu_check.run(text, x)
    cpu_check.close(got[0], want[0], rtol=1e-6, atol=1e-6)
    assert "bitcast" in _opcodes(text)
