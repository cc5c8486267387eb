"""ConstantFolding: HLO in, HLO out, and what it must not fold."""

from __future__ import annotations

import numpy as np

from xlapy.errors import EvaluationError
from xlapy.passes.constant_folding import ConstantFolding


def E(body: str) -> str:
    return "ENTRY e {\n" + body.strip("\n") + "\n}"


def test_add_of_constants(hlo):
    hlo.rewrites(ConstantFolding(), E("""
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({10, 20, 30})
  ROOT c = f32[3] add(a, b)"""), E("""
  ROOT c = f32[3] constant({11, 22, 33})"""))


def test_chain_folds_in_one_run(hlo):
    hlo.rewrites(ConstantFolding(), E("""
  x = s32[2] parameter(0)
  a = s32[2] constant({1, 2})
  b = s32[2] constant({3, 4})
  c = s32[2] add(a, b)
  n = s32[2] negate(c)
  r = s32[4] concatenate(n, c), dimensions={0}
  s = s32[2] slice(r), slice={[1:3]}
  ROOT m = s32[2] multiply(x, s)"""), E("""
  x = s32[2] parameter(0)
  k = s32[2] constant({-6, 4})
  ROOT m = s32[2] multiply(x, k)"""))


def test_reduce_with_reducer(hlo):
    hlo.rewrites(ConstantFolding(), """
HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT a = f32[] add(p, q)
}

ENTRY e {
  c = f32[2,2] constant({ {1, 2}, {3, 4} })
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(c, z), dimensions={1}, to_apply=add
}""", """
HloModule m

add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT a = f32[] add(p, q)
}

ENTRY e {
  ROOT r = f32[2] constant({3, 7})
}""")


def test_layout_and_type_kept(hlo):
    mod = hlo.rewrites(ConstantFolding(), E("""
  a = f32[2,2]{0,1} constant({ {1.5, 2}, {3, -4} })
  ROOT c = bf16[2,2]{0,1} convert(a)"""), E("""
  ROOT c = bf16[2,2]{0,1} constant({ {1.5, 2}, {3, -4} })"""))
    assert mod.entry.root.literal.dtype == mod.entry.root.shape.dtype


def test_metadata_moves_to_the_constant(hlo):
    mod = hlo.module(E("""
  a = s32[] constant(2)
  ROOT n = s32[] negate(a), metadata={op_name="jit(f)/neg"}"""))
    assert hlo.run(ConstantFolding(), mod)
    root = mod.entry.root
    assert root.opcode == "constant" and int(root.literal) == -2
    assert root.metadata == {"op_name": "jit(f)/neg"}


def test_large_uniform_result_becomes_broadcast(hlo):
    hlo.rewrites(ConstantFolding(max_elements=2), E("""
  a = s32[4] constant({1, 1, 1, 1})
  b = s32[4] constant({2, 2, 2, 2})
  ROOT c = s32[4] add(a, b)"""), E("""
  k = s32[] constant(3)
  ROOT c = s32[4] broadcast(k), dimensions={}"""))


def test_large_result_not_folded(hlo):
    hlo.unchanged(ConstantFolding(max_elements=2), E("""
  a = s32[4] constant({1, 2, 3, 4})
  ROOT c = s32[4] negate(a)"""))


def test_broadcast_and_iota_not_folded(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  i = s32[4] iota(), iota_dimension=0
  ROOT t = (f32[4], s32[4]) tuple(b, i)"""))


def test_operands_that_are_not_constants(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  x = f32[4] parameter(0)
  y = f32[4] add(b, b)
  ROOT z = f32[4] add(x, y)"""))


def test_tuple_not_folded(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  a = f32[] constant(1)
  b = s32[] constant(2)
  ROOT t = (f32[], s32[]) tuple(a, b)"""))


def test_optimization_barrier_not_folded(hlo):
    """opt-barrier exists to stop optimizations across it: a barrier of a constant stays.
    (The pass once listed the opcode as "optimization-barrier", a name HLO does not have,
    and folded barriers; the opcode table's not_folded column now says it, with the reason.)
    The add after it sees a barrier, not a constant, so it is not folded either."""
    hlo.unchanged(ConstantFolding(), E("""
  a = f32[3] constant({1, 2, 3})
  b = f32[3] opt-barrier(a)
  ROOT c = f32[3] add(b, b)"""))


def test_side_effecting_custom_call_not_folded(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  a = f32[] constant(1)
  ROOT c = f32[] custom-call(a), custom_call_target="print", custom_call_has_side_effect=true"""))


def test_elided_constant_not_folded(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  a = f32[3] constant({...})
  ROOT n = f32[3] negate(a)"""))


def test_evaluation_failure_skips(hlo, monkeypatch):
    from xlapy.backends.interpreter import EVAL_RULES

    def fail(ev, instr, operands):
        raise EvaluationError("cannot")

    monkeypatch.setitem(EVAL_RULES, "negate", fail)
    hlo.unchanged(ConstantFolding(), E("""
  a = f32[3] constant({1, 2, 3})
  ROOT n = f32[3] negate(a)"""))


def test_nan_and_special_values_are_exact(hlo):
    mod = hlo.module(E("""
  a = f32[4] constant({0, 1, -1, inf})
  b = f32[4] constant({0, 0, 0, 0})
  ROOT d = f32[4] divide(a, b)"""))
    assert hlo.run(ConstantFolding(), mod)
    lit = mod.entry.root.literal
    assert np.isnan(lit[0]) and lit[1] == np.inf and lit[2] == -np.inf and lit[3] == np.inf
    # and it survives printing and parsing
    again = mod.clone().entry.root.literal
    assert np.array_equal(lit, again, equal_nan=True)


def test_nothing_to_fold(hlo):
    hlo.unchanged(ConstantFolding(), E("""
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)"""))
