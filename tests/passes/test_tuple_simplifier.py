"""TupleSimplifier: gte(tuple) -> element; tuple(gte(x, 0..n-1)) -> x."""

from __future__ import annotations

from xlapy.passes.tuple_simplifier import TupleSimplifier


def E(body: str) -> str:
    return "ENTRY e {\n" + body.strip("\n") + "\n}"


def test_gte_of_tuple(hlo):
    hlo.rewrites(TupleSimplifier(), E("""
  x = f32[4] parameter(0)
  y = s32[] parameter(1)
  t = (f32[4], s32[]) tuple(x, y)
  g = f32[4] get-tuple-element(t), index=0
  ROOT n = f32[4] negate(g)"""), E("""
  x = f32[4] parameter(0)
  y = s32[] parameter(1)
  ROOT n = f32[4] negate(x)"""))


def test_tuple_of_all_gtes(hlo):
    hlo.rewrites(TupleSimplifier(), E("""
  p = (f32[4], s32[]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[4], s32[]) tuple(a, b)"""), E("""
  ROOT p = (f32[4], s32[]) parameter(0)"""))


def test_tuple_of_gtes_in_other_order(hlo):
    hlo.unchanged(TupleSimplifier(), E("""
  p = (f32[], f32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0
  b = f32[] get-tuple-element(p), index=1
  ROOT t = (f32[], f32[]) tuple(b, a)"""))


def test_tuple_of_some_gtes(hlo):
    hlo.unchanged(TupleSimplifier(), E("""
  p = (f32[], f32[], f32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0
  b = f32[] get-tuple-element(p), index=1
  ROOT t = (f32[], f32[]) tuple(a, b)"""))


def test_tuple_of_gtes_of_two_sources(hlo):
    hlo.unchanged(TupleSimplifier(), E("""
  p = (f32[], f32[]) parameter(0)
  q = (f32[], f32[]) parameter(1)
  a = f32[] get-tuple-element(p), index=0
  b = f32[] get-tuple-element(q), index=1
  ROOT t = (f32[], f32[]) tuple(a, b)"""))


def test_layout_must_match(hlo):
    hlo.unchanged(TupleSimplifier(), E("""
  p = (f32[2,2]{0,1}) parameter(0)
  a = f32[2,2]{0,1} get-tuple-element(p), index=0
  ROOT t = (f32[2,2]{1,0}) tuple(a)"""))


def test_while_body_passthrough(hlo):
    mod = hlo.module("""
HloModule m

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  ROOT t = (s32[], f32[4]) tuple(i, x)
}

ENTRY e {
  x = (s32[], f32[4]) parameter(0)
  ROOT w = (s32[], f32[4]) while(x), condition=cond, body=body
}""")
    assert hlo.run(TupleSimplifier(), mod)
    body = mod.computation("body")
    assert body.root.opcode == "parameter" and len(body.instructions) == 1
