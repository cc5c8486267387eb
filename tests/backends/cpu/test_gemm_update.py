"""Gemm-update fusion: W - c*(A.B) as one BLAS call; values vs the interpreter."""

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu.passes.gemm_update import TARGET, GemmUpdateFusion
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import module_diff, parse, verify
from xlapy.passes import DCE

TEXT = """HloModule m
ENTRY e {{
  w = {t}[{m},{n}] parameter(0)
  a = {t}[{k},{m}] parameter(1)
  b = {t}[{k},{n}] parameter(2)
  d = {t}[{m},{n}] dot(a, b), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}
  c = {t}[] constant({c})
  cb = {t}[{m},{n}] broadcast(c), dimensions={{}}
  p = {t}[{m},{n}] multiply(cb, d)
  ROOT u = {t}[{m},{n}] {op}(w, p)
}}
"""


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op,c", [("subtract", 0.1), ("add", -0.5)])
def test_update_becomes_one_gemm_and_matches(t, op, c):
    text = TEXT.format(t=t, m=37, n=10, k=29, c=c, op=op)
    m = parse(text)
    assert GemmUpdateFusion().run(m)
    DCE().run(m)
    verify(m)
    ops = [i.opcode for i in m.entry.instructions]
    assert "dot" not in ops and ops.count("custom-call") == 1
    assert m.entry.root.attrs["custom_call_target"] == TARGET
    rng = np.random.default_rng(0)
    dt = np.float32 if t == "f32" else np.float64
    w, a, b = (rng.standard_normal(s).astype(dt) for s in ((37, 10), (29, 37), (29, 10)))
    want = evaluate(parse(text), w, a, b)
    # fewer roundings than the unfused form (one instead of three): float32-level agreement
    np.testing.assert_allclose(evaluate(m, w, a, b), want, rtol=1e-5, atol=1e-6)
    got = get_platform("cpu").compiler.compile(parse(text)).run(w, a, b)      # native
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_not_applied_when_the_gradient_is_used_elsewhere():
    text = TEXT.format(t="f32", m=8, n=4, k=3, c=0.1, op="subtract").replace(
        "ROOT u = f32[8,4] subtract(w, p)",
        "u = f32[8,4] subtract(w, p)\n  ROOT t = (f32[8,4], f32[8,4]) tuple(u, d)")
    m = parse(text)
    assert GemmUpdateFusion().run(m) is False
    assert module_diff(m, parse(text)) is None
