"""cpu backend: a while loop's state (program._while) and dynamic-update-slice
(dynamic_update_slice.py). A state leaf the body returns unchanged, or only updates with a
dynamic-update-slice (a stacked output), keeps one buffer: nothing is copied for it per
iteration, the update is written in place. A leaf whose old value is read elsewhere in the
body keeps two buffers. Against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.cpu.emitters.program import _single_buffer_leaves
from xlapy.hlo import parse

from .conftest import assert_close, assert_same

RNG = np.random.default_rng(3)

# state: (i, stack [4,3,5], h [3,5], xs [4,3,5] (passed through), col [3,5,4])
LOOP = """
HloModule loop

body {
  p = (s32[], f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  stack = f32[4,3,5] get-tuple-element(p), index=1
  h = f32[3,5] get-tuple-element(p), index=2
  xs = f32[4,3,5] get-tuple-element(p), index=3
  col = f32[3,5,4] get-tuple-element(p), index=4
  zero = s32[] constant(0)
  one = s32[] constant(1)
  row = f32[1,3,5] reshape(h)
  stack2 = f32[4,3,5] dynamic-update-slice(stack, row, i, zero, zero)
  x = f32[1,3,5] dynamic-slice(xs, i, zero, zero), dynamic_slice_sizes={1,3,5}
  x2 = f32[3,5] reshape(x)
  s = f32[3,5] add(h, x2)
  h2 = f32[3,5] tanh(s)
  c = f32[3,5,1] reshape(h)
  col2 = f32[3,5,4] dynamic-update-slice(col, c, zero, zero, i)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) tuple(i2, stack2, h2, xs, col2)
}

cond {
  p = (s32[], f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  stack = f32[4,3,5] parameter(0)
  h = f32[3,5] parameter(1)
  xs = f32[4,3,5] parameter(2)
  col = f32[3,5,4] parameter(3)
  zero = s32[] constant(0)
  init = (s32[], f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) tuple(zero, stack, h, xs, col)
  w = (s32[], f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) while(init), condition=cond, body=body
  a = f32[4,3,5] get-tuple-element(w), index=1
  b = f32[3,5] get-tuple-element(w), index=2
  c = f32[4,3,5] get-tuple-element(w), index=3
  d = f32[3,5,4] get-tuple-element(w), index=4
  ROOT r = (f32[4,3,5], f32[3,5], f32[4,3,5], f32[3,5,4]) tuple(a, b, c, d)
}
"""


def _args():
    return [RNG.standard_normal(s).astype(np.float32)
            for s in ((4, 3, 5), (3, 5), (4, 3, 5), (3, 5, 4))]


def test_one_buffer_leaves_are_found():
    m = parse(LOOP)
    body = next(c for c in m.computations if c.name == "body")
    # i and h are rewritten; the stack and the column block are updated in place, xs
    # passes through
    assert _single_buffer_leaves(body) == {1, 3, 4}


@pytest.mark.parametrize("reader", [False, True], ids=["in_place", "old_value_read"])
def test_loop_state_against_interpreter(cpu_check, reader):
    text = LOOP
    if reader:  # the body also reads the stack's old value: it must keep two buffers
        text = text.replace("  s = f32[3,5] add(h, x2)",
                            "  old = f32[1,3,5] dynamic-slice(stack, zero, zero, zero), "
                            "dynamic_slice_sizes={1,3,5}\n"
                            "  old2 = f32[3,5] reshape(old)\n"
                            "  hx = f32[3,5] add(h, x2)\n"
                            "  s = f32[3,5] add(hx, old2)")
        body = next(c for c in parse(text).computations if c.name == "body")
        assert 1 not in _single_buffer_leaves(body)
    got, want = cpu_check.run(text, *_args())
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, rtol=1e-5, atol=1e-6, what=f"output {k}")  # tanh: ulps


def test_dynamic_update_slice_in_and_out_of_place(cpu_check):
    """Outside loops: clamped starts, a contiguous and a strided update, the operand still
    read after the update (not in place) and dying there (in place)."""
    text = """
HloModule dus
ENTRY main {
  x = f32[6,4,5] parameter(0)
  u = f32[2,4,5] parameter(1)
  v = f32[6,1,2] parameter(2)
  i = s32[] parameter(3)
  zero = s32[] constant(0)
  big = s32[] constant(9)
  a = f32[6,4,5] dynamic-update-slice(x, u, i, zero, zero)
  b = f32[6,4,5] dynamic-update-slice(a, v, zero, big, i)
  c = f32[6,4,5] add(b, x)
  ROOT t = (f32[6,4,5], f32[6,4,5]) tuple(b, c)
}
"""
    x = RNG.standard_normal((6, 4, 5)).astype(np.float32)
    u = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    v = RNG.standard_normal((6, 1, 2)).astype(np.float32)
    for i in (-3, 1, 5, 40):
        got, want = cpu_check.run(text, x, u, v, np.int32(i))
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, what=f"start {i}, output {k}")
