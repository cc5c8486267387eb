"""Concatenates inside loop fusions as vector code (elemental_vector: a branch per vector
picks the operand; dynamic-slices of parameters read at their clamped starts) and reductions
of a concatenate split into one per piece (simplifier_rules_shape): results bitwise against
the interpreter, NaN and signed zeros included, and which kernels take the vector path."""

import re

import numpy as np
import pytest

from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.hlo import parse

ADD = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }"


def _vector_concat(text: str) -> bool:
    """Whether a loop kernel computes a concatenate with the per-vector branch (a phi of
    vectors after the pieces' blocks)."""
    em = ModuleEmitter(run_cpu_pipeline(parse(text)), 1, 10**12, use_threads=False)
    em.emit("xlapy_entry")
    return re.search(r'concat\.merge[.0-9]*:\n +%"?[.\w]+"? = phi +<\d+ x float>',
                     str(em.llmod)) is not None


def _gates(widths, rows=24, stack=5, extra=""):
    """Four gate-gradient-like pieces from dynamic slices of stacks, concatenated along the
    minor dim, with their column sums (the LSTM backward step's fusion)."""
    total = sum(widths)
    params = "\n".join(f"  s{k} = f32[{stack},{rows},{w}] parameter({k})"
                       for k, w in enumerate(widths))
    n = len(widths)
    pieces = []
    for k, w in enumerate(widths):
        pieces.append(f"  d{k} = f32[1,{rows},{w}] dynamic-slice(s{k}, i, z, z), "
                      f"dynamic_slice_sizes={{1,{rows},{w}}}\n"
                      f"  r{k} = f32[{rows},{w}] reshape(d{k})\n"
                      f"  g{k} = f32[{rows},{w}] multiply(r{k}, r{k})\n"
                      f"  h{k} = f32[{rows},{w}] subtract(g{k}, r{k})")
    names = ", ".join(f"h{k}" for k in range(n))
    return f"""HloModule m
{ADD}
ENTRY e {{
{params}
  i = s32[] parameter({n})
  z = s32[] constant(0)
  zf = f32[] constant(0)
{chr(10).join(pieces)}
  c = f32[{rows},{total}] concatenate({names}), dimensions={{1}}
  red = f32[{total}] reduce(c, zf), dimensions={{0}}, to_apply=add{extra}
  ROOT t = (f32[{rows},{total}], f32[{total}]) tuple(c, red)
}}"""


def _stacks(widths, rows=24, stack=5, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((stack, rows, w)).astype(np.float32) for w in widths]


@pytest.mark.parametrize("widths,vector", [
    ((128, 128, 128, 128), True),   # the LSTM's gates: every piece whole vectors
    ((32, 16, 48), True),
    ((20, 12, 32), False),          # pieces off the lanes: the scalar branches
])
@pytest.mark.parametrize("start", [2, -3, 9])  # in range, and clamped at both ends
def test_gate_gradients_and_their_sums(cpu_check, widths, vector, start):
    text = _gates(widths)
    assert _vector_concat(text) == vector
    args = _stacks(widths) + [np.int32(start)]
    got, want = cpu_check.run(text, *args)
    cpu_check.same(got[0], want[0])
    k = min(max(start, 0), 4)
    pieces = [a[k] * a[k] - a[k] for a in args[:-1]]
    np.testing.assert_array_equal(got[0], np.concatenate(pieces, 1))
    np.testing.assert_allclose(got[1], np.concatenate(pieces, 1).sum(0), rtol=1e-5,
                               atol=1e-5)
    cpu_check.same(got[1], want[1])


def test_nan_inf_and_signed_zeros_keep_their_piece(cpu_check):
    widths = (16, 32, 16)
    text = _gates(widths)
    args = _stacks(widths, seed=1) + [np.int32(1)]
    args[0][1, 3, 5] = np.nan
    args[1][1, 7, 31] = np.inf      # inf*inf - inf: NaN, in the second piece only
    args[2][1, :, :] = -0.0         # (-0)*(-0) - (-0) = +0
    got, want = cpu_check.run(text, *args)
    cpu_check.same(got[0], want[0])
    cpu_check.same(got[1], want[1])
    assert np.isnan(got[0][3, 5]) and np.isnan(got[0][7, 16 + 31])
    assert np.isnan(got[1][5]) and np.isnan(got[1][16 + 31])
    assert np.isfinite(np.delete(got[1], [5, 16 + 31])).all()
    assert not np.signbit(got[0][:, 48:]).any()


def test_concatenate_across_the_lanes_and_along_a_major_dim(cpu_check):
    # lanes along dim 1; the concatenate along dim 0 (every vector in one piece)
    text = """HloModule m
ENTRY e {
  a = f32[3,64] parameter(0)
  b = f32[5,64] parameter(1)
  ea = f32[3,64] exponential(a)
  nb = f32[5,64] negate(b)
  ROOT c = f32[8,64] concatenate(ea, nb), dimensions={0}
}"""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 64)).astype(np.float32), rng.standard_normal(
        (5, 64)).astype(np.float32)
    assert _vector_concat(text)
    got, want = cpu_check.run(text, a, b)
    # (exp: the vector math library, within an ulp or two of NumPy's)
    np.testing.assert_allclose(got[0], want[0], rtol=3e-7, atol=0)
    np.testing.assert_allclose(got[0][:3], np.exp(a), rtol=3e-7)
    np.testing.assert_array_equal(got[0][3:], -b)


def test_a_reduce_of_a_concatenate_reduces_each_piece():
    text = _gates((16, 32))
    m = run_cpu_pipeline(parse(text))
    kinds = [i.opcode for c in m.computations for i in c.instructions]
    # the reduce over the concatenate became one per piece, concatenated
    reduces = [i for c in m.computations for i in c.instructions if i.opcode == "reduce"]
    assert len(reduces) == 2, kinds
    assert all(r.operands[0].shape.dims in ((24, 16), (24, 32)) for r in reduces)


def test_a_reduce_over_the_concatenated_dim_is_left_alone():
    text = """HloModule m
%s
ENTRY e {
  a = f32[4,16] parameter(0)
  b = f32[4,32] parameter(1)
  z = f32[] constant(0)
  c = f32[4,48] concatenate(a, b), dimensions={1}
  ROOT r = f32[4] reduce(c, z), dimensions={1}, to_apply=add
}""" % ADD
    m = run_cpu_pipeline(parse(text))
    reduces = [i for c in m.computations for i in c.instructions if i.opcode == "reduce"]
    assert len(reduces) == 1 and reduces[0].operands[0].shape.dims in ((4, 48),)
