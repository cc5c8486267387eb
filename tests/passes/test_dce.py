"""DCE: dead instructions and uncalled computations go; parameters and side effects stay."""

from __future__ import annotations

from xlapy.passes.dce import DCE


def E(body: str) -> str:
    return "ENTRY e {\n" + body.strip("\n") + "\n}"


def test_dead_chain_removed(hlo):
    hlo.rewrites(DCE(), E("""
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  b = f32[4] exponential(a)
  c = f32[] constant(1)
  ROOT r = f32[4] abs(x)"""), E("""
  x = f32[4] parameter(0)
  ROOT r = f32[4] abs(x)"""))


def test_unused_parameters_kept(hlo):
    hlo.unchanged(DCE(), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT r = f32[4] abs(x)"""))


def test_side_effecting_instruction_kept(hlo):
    hlo.unchanged(DCE(), E("""
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  p = f32[4] custom-call(n), custom_call_target="print", custom_call_has_side_effect=true
  ROOT r = f32[4] abs(x)"""))


def test_dead_pure_custom_call_removed(hlo):
    hlo.rewrites(DCE(), E("""
  x = f32[4] parameter(0)
  p = f32[4] custom-call(x), custom_call_target="f"
  ROOT r = f32[4] abs(x)"""), E("""
  x = f32[4] parameter(0)
  ROOT r = f32[4] abs(x)"""))


def test_uncalled_computation_removed(hlo):
    mod = hlo.module("""
HloModule m

used {
  p = f32[4] parameter(0)
  d = f32[4] negate(p)
  ROOT a = f32[4] abs(p)
}

unused {
  p = f32[4] parameter(0)
  ROOT a = f32[4] abs(p)
}

ENTRY e {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=unused
  ROOT r = f32[4] call(x), to_apply=used
}""")
    assert hlo.run(DCE(), mod)
    assert [c.name for c in mod.computations] == ["used", "e"]
    assert [i.name for i in mod.computation("used").instructions] == ["p", "a"]


def test_nothing_dead(hlo):
    hlo.unchanged(DCE(), E("""
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  ROOT r = (f32[4], f32[4]) tuple(a, x)"""))
