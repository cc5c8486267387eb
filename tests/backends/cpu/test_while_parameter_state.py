"""A while's loop-invariant state leaves that start as entry parameters are read where the
caller's arrays lie (program._never_written) instead of being copied into the loop's state
on every call: the arena shrinks by their size, and results match the interpreter when
the leaf is also the program's output, read again after the loop, or donated."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate

STATE = "(s32[], f32[8,64], f32[64,64], f32[64,64])"


def _module(header: str = "", root: str = "ROOT r = f32[8,64] get-tuple-element(l), index=1",
            extra: str = "") -> str:
    return f"""HloModule loop_weights{header}

cond {{
  s = {STATE} parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}}

body {{
  s = {STATE} parameter(0)
  i = s32[] get-tuple-element(s), index=0
  h = f32[8,64] get-tuple-element(s), index=1
  w = f32[64,64] get-tuple-element(s), index=2
  v = f32[64,64] get-tuple-element(s), index=3
  one = s32[] constant(1)
  j = s32[] add(i, one)
  p = f32[8,64] dot(h, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  q = f32[8,64] dot(p, v), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  t = f32[8,64] tanh(q)
  ROOT r = {STATE} tuple(j, t, w, v)
}}

ENTRY main {{
  h = f32[8,64] parameter(0)
  w = f32[64,64] parameter(1)
  v = f32[64,64] parameter(2)
  zero = s32[] constant(0)
  s = {STATE} tuple(zero, h, w, v)
  l = {STATE} while(s), condition=cond, body=body
  {extra}
  {root}
}}
"""


def _args():
    rng = np.random.default_rng(11)
    return [(0.2 * rng.standard_normal(s)).astype(np.float32)
            for s in ((8, 64), (64, 64), (64, 64))]


def test_loop_invariant_parameters_get_no_state_buffer(cpu_check):
    text = _module()
    exe = get_platform("cpu").compiler.compile(parse(text))
    # the two 16 KB weights are read in place: the arena holds the carry (two buffers of
    # 2 KB) and the products, far less than one weight
    assert exe.memory_analysis()["temp_size_in_bytes"] < 64 * 64 * 4
    got, want = cpu_check.run(text, *_args())
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def test_parameter_leaf_as_output_and_read_after_the_loop(cpu_check):
    text = _module(
        root="ROOT r = (f32[8,64], f32[64,64], f32[64,64]) tuple(hl, wl, m)",
        extra="hl = f32[8,64] get-tuple-element(l), index=1\n"
              "  wl = f32[64,64] get-tuple-element(l), index=2\n"
              "  vl = f32[64,64] get-tuple-element(l), index=3\n"
              "  m = f32[64,64] multiply(vl, w)")
    args = _args()
    got, want = cpu_check.run(text, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[1], args[1])


@pytest.mark.filterwarnings("ignore:module loop_weights. some donated buffers")
def test_loop_over_a_donated_parameter_matches_the_interpreter():
    # the caller lets output 1 (3 w) overwrite parameter 1 (w), and the loop's w is read
    # after that output: a donated parameter's leaf keeps its copy in the loop's state
    # (here the donation itself is also dropped, as w is read after 3 w is written)
    text = _module(
        header=", input_output_alias={ {1}: (1, {}, may-alias) }",
        root="ROOT r = (f32[8,64], f32[64,64], f32[64,64]) tuple(hl, w3, m)",
        extra="hl = f32[8,64] get-tuple-element(l), index=1\n"
              "  wl = f32[64,64] get-tuple-element(l), index=2\n"
              "  three = f32[] constant(3)\n"
              "  b3 = f32[64,64] broadcast(three), dimensions={}\n"
              "  w3 = f32[64,64] multiply(w, b3)\n"
              "  m = f32[64,64] add(wl, w3)")
    args = _args()
    want = evaluate(parse(text), *[a.copy() for a in args])
    exe = get_platform("cpu").compiler.compile(parse(text))
    # (copies: the run may write output 1 into its parameter 1)
    got = exe.run(*[a.copy() for a in args])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
