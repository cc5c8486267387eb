"""Transpose folding: HLO in, HLO out, values unchanged."""

import numpy as np

from xlapy.backends.interpreter import evaluate
from xlapy.hlo import module_diff, parse, verify
from xlapy.passes.transpose_folding import TransposeFolding

FOLDABLE = """HloModule m
ENTRY e {
  a = f32[5,3] parameter(0)
  b = f32[5,4] parameter(1)
  t = f32[3,5] transpose(a), dimensions={1,0}
  ROOT d = f32[3,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_transpose_into_lhs_becomes_contracting_dim_change():
    m = parse(FOLDABLE)
    a = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    want = evaluate(m, a, b)
    assert TransposeFolding().run(m)
    verify(m)
    d = m.entry.root
    assert d.operands[0].opcode == "parameter" and d.attrs["lhs_contracting_dims"] == (0,)
    assert not any(i.opcode == "transpose" for i in m.entry.instructions)
    np.testing.assert_allclose(evaluate(m, a, b), want, rtol=1e-6)


def test_batched_rhs_transpose():
    m = parse("""HloModule m
ENTRY e {
  a = f32[2,3,5] parameter(0)
  b = f32[2,4,5] parameter(1)
  t = f32[2,5,4] transpose(b), dimensions={0,2,1}
  ROOT d = f32[2,3,4] dot(a, t), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
""")  # noqa: E501 (HLO text: one instruction a line)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 5)).astype(np.float32)
    b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    want = evaluate(m, a, b)
    assert TransposeFolding().run(m)
    verify(m)
    assert m.entry.root.attrs["rhs_contracting_dims"] == (2,)
    np.testing.assert_allclose(evaluate(m, a, b), want, rtol=1e-6)


def test_free_dimension_reorder_is_left_alone():
    text = """HloModule m
ENTRY e {
  a = f32[3,2,5] parameter(0)
  b = f32[5,4] parameter(1)
  t = f32[2,3,5] transpose(a), dimensions={1,0,2}
  ROOT d = f32[2,3,4] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}
"""
    m = parse(text)
    assert TransposeFolding().run(m) is False
    assert module_diff(m, parse(text)) is None
