"""CSE: HLO in, HLO out, and what it must not merge."""

from __future__ import annotations

from xlapy.passes.cse import CSE


def E(body: str) -> str:
    return "ENTRY e {\n" + body.strip("\n") + "\n}"


def test_identical_instructions_merge_first_kept(hlo):
    mod = hlo.rewrites(CSE(), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  b = f32[4] add(x, y), metadata={op_name="second"}
  ea = f32[4] exponential(a)
  eb = f32[4] exponential(b)
  ROOT t = (f32[4], f32[4]) tuple(ea, eb)"""), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  ea = f32[4] exponential(a)
  ROOT t = (f32[4], f32[4]) tuple(ea, ea)"""))
    names = {i.name for i in mod.entry.instructions}
    assert {"a", "ea"} <= names and not {"b", "eb"} & names


def test_equal_constants_merge(hlo):
    hlo.rewrites(CSE(), E("""
  a = f32[2] constant({1, nan})
  b = f32[2] constant({1, nan})
  ROOT t = (f32[2], f32[2]) tuple(a, b)"""), E("""
  a = f32[2] constant({1, nan})
  ROOT t = (f32[2], f32[2]) tuple(a, a)"""))


def test_constants_compared_bitwise(hlo):
    hlo.unchanged(CSE(), E("""
  a = f32[] constant(0)
  b = f32[] constant(-0)
  c = f32[] constant(nan)
  d = f32[] constant(nan(0x1))
  ROOT t = (f32[], f32[], f32[], f32[]) tuple(a, b, c, d)"""))


def test_constants_of_other_type_or_shape(hlo):
    hlo.unchanged(CSE(), E("""
  a = f32[] constant(1)
  b = s32[] constant(1)
  c = f32[1] constant({1})
  ROOT t = (f32[], s32[], f32[1]) tuple(a, b, c)"""))


def test_commutative_operands(hlo):
    hlo.rewrites(CSE(), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] multiply(x, y)
  b = f32[4] multiply(y, x)
  ROOT t = (f32[4], f32[4]) tuple(a, b)"""), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] multiply(x, y)
  ROOT t = (f32[4], f32[4]) tuple(a, a)"""))


def test_non_commutative_operands(hlo):
    hlo.unchanged(CSE(), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] subtract(x, y)
  b = f32[4] subtract(y, x)
  ROOT t = (f32[4], f32[4]) tuple(a, b)"""))


def test_attributes_and_layouts_matter(hlo):
    hlo.unchanged(CSE(), E("""
  x = f32[2,3]{1,0} parameter(0)
  a = f32[3,2]{1,0} transpose(x), dimensions={1,0}
  b = f32[3,2]{0,1} transpose(x), dimensions={1,0}
  c = f32[2,3]{1,0} reverse(x), dimensions={0}
  d = f32[2,3]{1,0} reverse(x), dimensions={1}
  ROOT t = (f32[3,2]{1,0}, f32[3,2]{0,1}, f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(a, b, c, d)"""))


def test_parameters_never_merge(hlo):
    hlo.unchanged(CSE(), E("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT t = (f32[4], f32[4]) tuple(x, y)"""))


REDUCERS = """
HloModule m

sum1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

sum2 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}

max1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
"""


def test_reduces_with_equal_computations_merge(hlo):
    hlo.rewrites(CSE(), REDUCERS + """
ENTRY e {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum1
  r2 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum2
  ROOT t = (f32[4], f32[4]) tuple(r1, r2)
}""", REDUCERS + """
ENTRY e {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum1
  ROOT t = (f32[4], f32[4]) tuple(r1, r1)
}""")


def test_reduces_with_different_computations(hlo):
    hlo.unchanged(CSE(), REDUCERS + """
ENTRY e {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  r1 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum1
  r2 = f32[4] reduce(x, z), dimensions={1}, to_apply=max1
  ROOT t = (f32[4], f32[4]) tuple(r1, r2)
}""")


def test_side_effecting_custom_calls_never_merge(hlo):
    hlo.unchanged(CSE(), E("""
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="log", custom_call_has_side_effect=true
  b = f32[4] custom-call(x), custom_call_target="log", custom_call_has_side_effect=true
  ROOT t = (f32[4], f32[4]) tuple(a, b)"""))


def test_pure_custom_calls_merge(hlo):
    hlo.rewrites(CSE(), E("""
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="f"
  b = f32[4] custom-call(x), custom_call_target="f"
  ROOT t = (f32[4], f32[4]) tuple(a, b)"""), E("""
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="f"
  ROOT t = (f32[4], f32[4]) tuple(a, a)"""))


def test_root_merged_into_earlier_instruction(hlo):
    mod = hlo.module(E("""
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  ROOT b = f32[4] negate(x)"""))
    assert hlo.run(CSE(), mod)
    assert mod.entry.root.name == "a"


def test_fusion_computations_untouched(hlo):
    hlo.unchanged(CSE(), """
HloModule m

fused {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] negate(p)
  ROOT s = f32[4] add(a, b)
}

ENTRY e {
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}""")
