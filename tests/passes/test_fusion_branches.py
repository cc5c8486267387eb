"""Fusion keeps expensive math out of pad and concatenate consumers (their per-element
branch would keep the fused loop scalar): the math is a kernel of its own, cheap
producers still fuse, and the results are unchanged."""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import flatten, get_platform
from xlapy.hlo import parse
from xlapy.passes import FusionPass

_TEXT = """HloModule m

ENTRY main {
  p = f32[8,60] parameter(0)
  q = f32[8,240] parameter(1)
  e = f32[8,60] exponential(p)
  n = f32[8,60] negate(p)
  z = f32[] constant(0)
  pe = f32[8,240] pad(e, z), padding=0_0x0_180
  pn = f32[8,240] pad(n, z), padding=0_0x60_120
  c = f32[8,120] concatenate(e, n), dimensions={1}
  s = f32[8,240] add(pe, pn)
  t = f32[8,240] add(s, q)
  ROOT r = (f32[8,240], f32[8,120]) tuple(t, c)
}
"""


def test_expensive_producers_stay_out_of_branches():
    m = parse(_TEXT)
    log = []
    FusionPass(log=log).run(m)
    refused = [(c, p) for c, p, fused, why in log if not fused and "branch" in why]
    assert any(p == "e" for _, p in refused)
    fused_ops = {i.opcode for f in m.entry.instructions if f.opcode == "fusion"
                 for i in f.fused_computation.instructions}
    assert "negate" in fused_ops and "pad" in fused_ops       # cheap producers still fuse
    kernels = [f for f in m.entry.instructions if f.opcode in ("fusion", "exponential")]
    assert any(f.opcode == "exponential" or any(
        i.opcode == "exponential" for i in f.fused_computation.instructions)
        and not any(i.opcode in ("pad", "concatenate") for i in f.fused_computation.instructions)
        for f in kernels)


def test_results_unchanged():
    text = _TEXT
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((8, 60)).astype(np.float32),
            rng.standard_normal((8, 240)).astype(np.float32)]
    got = flatten(get_platform("cpu").compiler.compile(parse(text)).run(*args))
    want = flatten(get_platform("interpreter").compiler.compile(parse(text)).run(*args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
