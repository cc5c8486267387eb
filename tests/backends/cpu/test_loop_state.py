"""While loops carrying arrays in place (program.carried_in_place, dynamic_update_slice.py):
a scan's stacked outputs are written one window per iteration into a single buffer; the
cases where that is not safe (the old array read after the update, or returned under
another index) keep two buffers. Results against the interpreter and JAX."""

from __future__ import annotations

import jax
import numpy as np

import xlapy as xp
from xlapy.backends.cpu.emitters.program import carried_in_place
from xlapy.hlo import parse

_BODY = """HloModule loop

%body (p: (s32[], f32[6,3], f32[6,3])) -> (s32[], f32[6,3], f32[6,3]) {
  %p = (s32[], f32[6,3], f32[6,3]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %ys = f32[6,3] get-tuple-element(%p), index=1
  %old = f32[6,3] get-tuple-element(%p), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %f = f32[] convert(%i)
  %row = f32[1,3] broadcast(%f), dimensions={}
  %zero = s32[] constant(0)
  %upd = f32[6,3] dynamic-update-slice(%ys, %row, %i, %zero)
%DBL  ROOT %t = (s32[], f32[6,3], f32[6,3]) tuple(%next, %upd, %LAST)
}

%cond (c: (s32[], f32[6,3], f32[6,3])) -> pred[] {
  %c = (s32[], f32[6,3], f32[6,3]) parameter(0)
  %n = s32[] get-tuple-element(%c), index=0
  %six = s32[] constant(6)
  ROOT %lt = pred[] compare(%n, %six), direction=LT
}

ENTRY %main (a: f32[6,3]) -> (s32[], f32[6,3], f32[6,3]) {
  %a = f32[6,3] parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[6,3], f32[6,3]) tuple(%z, %a, %a)
  ROOT %w = (s32[], f32[6,3], f32[6,3]) while(%init), condition=%cond, body=%body
}
"""


def test_carried_only_when_safe(cpu_check):
    a = np.arange(18, dtype=np.float32).reshape(6, 3)
    # element 2 keeps its own value: ys is carried in place
    # element 2 returns the old ys: the update must not be seen there
    # element 2 is the old ys plus one, read by a kernel scheduled after the update
    for last, carried in (("%old", {1}), ("%ys", set()), ("%dbl", set())):
        dbl = "  %dbl = f32[6,3] add(%ys, %ys)\n" if last == "%dbl" else ""
        text = _BODY.replace("%LAST", last).replace("%DBL", dbl)
        body = next(c for c in parse(text).computations if c.name == "body")
        assert carried_in_place(body) == carried
        got, want = cpu_check.run(text, a)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_scan_stacked_outputs_match_jax():
    def f(lax, numpy):
        def run(h, xs, w):
            def cell(c, x):
                c = numpy.tanh(x @ w + c)
                return c, c * 2.0
            return lax.scan(cell, h, xs)
        return run
    rng = np.random.default_rng(0)
    h = rng.standard_normal((4, 8)).astype(np.float32)
    xs = rng.standard_normal((30, 4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    want = jax.jit(f(jax.lax, jax.numpy))(h, xs, w)
    fx = xp.jit(f(xp.lax, xp.numpy))
    got = fx(h, xs, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
    opt = parse(fx.lower(h, xs, w).compile().as_text())
    bodies = [c for c in opt.computations if any(
        i.opcode == "while" and i.attrs["body"] is c for i in opt.instructions())]
    assert any(carried_in_place(c) for c in bodies)   # the stacked ys: one buffer
