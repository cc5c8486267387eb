"""cpu backend vs the interpreter, control flow and calls: while (counted loops, tuple
state, zero trips, nested), conditional (pred and branch index, out-of-range indices of
s32), call (nested, array and tuple results), map (unary, binary,
layouts, zero-size), fusion (XLA-fused input that the cpu pipeline re-fuses), and an
unknown custom-call target (a LoweringError naming it, not a crash).
"""

from __future__ import annotations


import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.errors import XlapyError
from xlapy.hlo import parse


import xlapy_tests_cpu_optable as O
RNG = np.random.default_rng(31)


def _check(cpu_check, text, *args, check=O.EXACT):
    got, want = cpu_check.run(text, *args)
    O.compare_outputs(got, want, [f"output {k}" for k in range(len(want))], check)
    return got


_WHILE = """HloModule while_loops

cond {
  s = (s32[], f32[3,17]{0,1}, pred[4], bf16[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%TRIPS%)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[3,17]{0,1}, pred[4], bf16[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[3,17]{0,1} get-tuple-element(s), index=1
  p = pred[4] get-tuple-element(s), index=2
  h = bf16[2] get-tuple-element(s), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  half = f32[] constant(0.5)
  hb = f32[3,17]{0,1} broadcast(half), dimensions={}
  y = f32[3,17]{0,1} multiply(x, hb)
  t = f32[3,17] transpose(y), dimensions={0,1}
  c = f32[3,17]{0,1} cosine(t)
  z = f32[3,17]{0,1} add(y, c)
  np = pred[4] not(p)
  hh = bf16[2] add(h, h)
  ROOT out = (s32[], f32[3,17]{0,1}, pred[4], bf16[2]) tuple(i1, z, np, hh)
}

inner_cond {
  s = (s32[], s64[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(j, k), direction=LT
}

inner_body {
  s = (s32[], s64[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  acc = s64[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  jw = s64[] convert(j)
  acc1 = s64[] add(acc, jw)
  ROOT out = (s32[], s64[]) tuple(j1, acc1)
}

outer_cond {
  s = (s32[], s64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(4)
  ROOT lt = pred[] compare(i, k), direction=LT
}

outer_body {
  s = (s32[], s64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s64[] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  init = (s32[], s64[]) tuple(zero, acc)
  inner = (s32[], s64[]) while(init), condition=inner_cond, body=inner_body
  acc1 = s64[] get-tuple-element(inner), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT out = (s32[], s64[]) tuple(i1, acc1)
}

ENTRY main {
  i0 = s32[] parameter(0)
  x = f32[3,17]{0,1} parameter(1)
  p = pred[4] parameter(2)
  h = bf16[2] parameter(3)
  init = (s32[], f32[3,17]{0,1}, pred[4], bf16[2]) tuple(i0, x, p, h)
  loop = (s32[], f32[3,17]{0,1}, pred[4], bf16[2]) while(init), condition=cond, body=body
  a = s64[] constant(-5)
  init2 = (s32[], s64[]) tuple(i0, a)
  nested = (s32[], s64[]) while(init2), condition=outer_cond, body=outer_body
  ROOT out = ((s32[], f32[3,17]{0,1}, pred[4], bf16[2]), (s32[], s64[])) tuple(loop, nested)
}
"""


@pytest.mark.parametrize("trips,start", [(5, 0), (0, 0), (3, 7), (1, -2)])
def test_while(cpu_check, trips, start):
    """A counted loop carrying arrays of several types (one with a non-default layout) and
    a nested pair of loops; zero trips and a start past the bound leave the state as is."""
    text = _WHILE.replace("%TRIPS%", str(trips))
    x = O.values("f32", (3, 17), RNG)
    x = np.where(np.isfinite(x), x, 1.0).astype(np.float32)
    h = np.array([1.5, -3.0], O.BF16)
    _check(cpu_check, text, np.array(start, np.int32), x, np.array([1, 0, 0, 1], bool), h,
           check=O.ULP)  # the body has a cosine


_COND = """HloModule conditionals

b0 {
  x = f32[5] parameter(0)
  ROOT r = f32[5] negate(x)
}

b1 {
  x = f32[5] parameter(0)
  ROOT r = f32[5] multiply(x, x)
}

b2 {
  x = f32[5] parameter(0)
  c = f32[] constant(10)
  cb = f32[5] broadcast(c), dimensions={}
  ROOT r = f32[5] add(x, cb)
}

t_true {
  t = (f32[5], s32[]) parameter(0)
  x = f32[5] get-tuple-element(t), index=0
  n = s32[] get-tuple-element(t), index=1
  ROOT r = (f32[5], s32[]) tuple(x, n)
}

t_false {
  t = (f32[5], s32[]) parameter(0)
  x = f32[5] get-tuple-element(t), index=0
  n = s32[] get-tuple-element(t), index=1
  y = f32[5] abs(x)
  m = s32[] negate(n)
  ROOT r = (f32[5], s32[]) tuple(y, m)
}

ENTRY main {
  p = pred[] parameter(0)
  k = %IDX%[] parameter(1)
  x = f32[5] parameter(2)
  n = s32[] parameter(3)
  arg = (f32[5], s32[]) tuple(x, n)
  c1 = (f32[5], s32[]) conditional(p, arg, arg), true_computation=t_true, false_computation=t_false
  c2 = f32[5] conditional(k, x, x, x), branch_computations={b0, b1, b2}
  ROOT out = ((f32[5], s32[]), f32[5]) tuple(c1, c2)
}
"""


def test_conditional(cpu_check):
    """pred conditionals with tuple operands and results; indexed conditionals for every
    index, including negative and too-large ones (which run the last branch). The branch
    index is s32 (the only integer type XLA allows)."""
    idx_type = "s32"
    dt = O.DTYPE[idx_type]
    indices = [0, 1, 2, 3, -1, -2147483648, 2147483647]
    exe_text = _COND.replace("%IDX%", idx_type)
    x = np.array([1.5, -2.0, np.nan, -0.0, 3.0], np.float32)
    for k, idx in enumerate(indices):
        _check(cpu_check, exe_text, np.array(k % 2 == 0), np.array(idx).astype(dt), x,
               np.array(k - 3, np.int32))


_CALL = """HloModule calls

leaf {
  a = f32[4,3]{0,1} parameter(0)
  b = f32[] parameter(1)
  bb = f32[4,3]{0,1} broadcast(b), dimensions={}
  ROOT r = f32[4,3]{0,1} multiply(a, bb)
}

middle {
  a = f32[4,3]{0,1} parameter(0)
  s = f32[] parameter(1)
  m = f32[4,3]{0,1} call(a, s), to_apply=leaf
  e = f32[4,3] exponential(m)
  ROOT r = (f32[4,3]{0,1}, f32[4,3]) tuple(m, e)
}

scalar_fn {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT r = s32[] multiply(x, y)
}

ENTRY main {
  a = f32[4,3]{0,1} parameter(0)
  s = f32[] parameter(1)
  i = s32[] parameter(2)
  t = (f32[4,3]{0,1}, f32[4,3]) call(a, s), to_apply=middle
  j = s32[] call(i, i), to_apply=scalar_fn
  ROOT out = ((f32[4,3]{0,1}, f32[4,3]), s32[]) tuple(t, j)
}
"""


def test_call(cpu_check):
    a = O.values("f32", (4, 3), RNG)
    _check(cpu_check, _CALL, a, np.array(-1.25, np.float32), np.array(46341, np.int32),
           check=O.ULP)


_MAP = """HloModule maps

binary {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  m = f32[] maximum(x, y)
  s = f32[] sine(x)
  ROOT r = f32[] add(m, s)
}

unary_int {
  x = s16[] parameter(0)
  c = s16[] constant(3)
  sh = s16[] shift-left(x, c)
  ROOT r = s16[] xor(sh, x)
}

to_pred {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT r = pred[] compare(x, y), direction=LT, type=TOTALORDER
}

ENTRY main {
  a = f32[3,17]{0,1} parameter(0)
  b = f32[3,17] parameter(1)
  i = s16[37] parameter(2)
  h = bf16[2,3,5] parameter(3)
  g = bf16[2,3,5]{0,1,2} parameter(4)
  e = f32[0,5] parameter(5)
  m1 = f32[3,17] map(a, b), dimensions={0,1}, to_apply=binary
  m2 = s16[37] map(i), dimensions={0}, to_apply=unary_int
  m3 = pred[2,3,5]{1,2,0} map(h, g), dimensions={0,1,2}, to_apply=to_pred
  m4 = f32[0,5] map(e, e), dimensions={0,1}, to_apply=binary
  ROOT out = (f32[3,17], s16[37], pred[2,3,5]{1,2,0}, f32[0,5]) tuple(m1, m2, m3, m4)
}
"""


@pytest.mark.usefixtures("ieee_denormals")  # denormal inputs compared exactly
def test_map(cpu_check):
    args = [O.values("f32", (3, 17), RNG), O.values("f32", (3, 17), RNG, 4),
            O.values("s16", (37,), RNG), O.values("bf16", (2, 3, 5), RNG),
            O.values("bf16", (2, 3, 5), RNG, 9), np.zeros((0, 5), np.float32)]
    _check(cpu_check, _MAP, *args, check=O.ULP)


_FUSION = """HloModule xla_fused

fused_computation {
  p0 = f32[6,5]{0,1} parameter(0)
  p1 = f32[5] parameter(1)
  b = f32[6,5]{0,1} broadcast(p1), dimensions={1}
  a = f32[6,5]{0,1} add(p0, b)
  c = f32[] constant(0)
  cb = f32[6,5]{0,1} broadcast(c), dimensions={}
  ROOT m = f32[6,5]{0,1} maximum(a, cb)
}

fused_reduce {
  p0 = f32[6,5]{0,1} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(p0, z), dimensions={1}, to_apply=add
}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}

ENTRY main {
  x = f32[6,5]{0,1} parameter(0)
  y = f32[5] parameter(1)
  f = f32[6,5]{0,1} fusion(x, y), kind=kLoop, calls=fused_computation
  r = f32[6] fusion(f), kind=kInput, calls=fused_reduce
  ROOT out = (f32[6,5]{0,1}, f32[6]) tuple(f, r)
}
"""


def test_fusion_input(cpu_check):
    """Fusions already in the input (XLA-optimized HLO) run like their unfused form."""
    x = O.values("f32", (6, 5), RNG)
    y = np.linspace(-1, 1, 5).astype(np.float32)
    _check(cpu_check, _FUSION, x, y, check=(O.CLOSE, 1e-6, 1e-6))


def test_unknown_custom_call_is_a_lowering_error():
    text = """HloModule cc

ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(x), custom_call_target="no_such_target"
}
"""
    with pytest.raises(XlapyError, match="no_such_target"):
        get_platform("cpu").compiler.compile(parse(text))


_INVARIANT = """HloModule invariant

cond {
  s = (s32[], f32[64,64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[64,64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  w = f32[64,64] get-tuple-element(s), index=1
  v = f32[64] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  wv = f32[64] dot(w, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64] tanh(wv)
  ROOT r = (s32[], f32[64,64], f32[64], f32[64]) tuple(i1, w, t, v)
}

ENTRY main {
  w = f32[64,64] parameter(0)
  v = f32[64] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[64,64], f32[64], f32[64]) tuple(i0, w, v, v)
  ROOT loop = (s32[], f32[64,64], f32[64], f32[64]) while(init), condition=cond, body=body
}
"""


@pytest.mark.parametrize("weights", ["parameter", "constant"])
def test_while_state_passed_through_has_one_slot(cpu_check, weights):
    """A state leaf the body passes through unchanged (the weights w) keeps one arena slot,
    which both sides of the state swap point to (no copy per iteration, half the scratch),
    and none when it starts as a constant (read where it lies). Leaf 3 takes leaf 2's old
    value each iteration (passed on, not through): two slots."""
    from xlapy.backends.cpu.emitters.loop_state import invariant_leaves
    from xlapy.backends.cpu.emitters.program import ModuleEmitter
    w = (RNG.standard_normal((64, 64)) / 8).astype(np.float32)
    v = RNG.standard_normal(64).astype(np.float32)
    text, args = _INVARIANT, [w, v]
    if weights == "constant":
        rows = ", ".join("{" + ", ".join(repr(float(x)) for x in row) + "}" for row in w)
        text = text.replace("w = f32[64,64] parameter(0)\n  v = f32[64] parameter(1)",
                            f"w = f32[64,64] constant({{{rows}}})\n  v = f32[64] parameter(0)")
        args = [v]
    module = parse(text)
    assert invariant_leaves(module.entry.root) == {1}
    em = ModuleEmitter(module, 1, 100_000, use_threads=False)
    em.emit()
    assert em.arena_size < (2 if weights == "parameter" else 1) * w.nbytes
    _check(cpu_check, text, *args, check=(O.CLOSE, 1e-5, 1e-6))  # (dot: sums reordered)
