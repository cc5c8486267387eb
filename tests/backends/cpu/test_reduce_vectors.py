"""Vectorized reductions whose operand tree is emitted as vector code directly
(elemental_vector.py) and the lanes' final combination in halves: results against the
interpreter, and which trees take the direct path."""

import numpy as np
import pytest

from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.hlo import parse

REDUCERS = """
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
addd { a = f64[] parameter(0)  b = f64[] parameter(1)  ROOT s = f64[] add(a, b) }
"""


def _hlo(body: str, params: str, out: str, reducer="add", ty="f32") -> str:
    init = "-inf" if reducer == "max" else "0"
    return f"""HloModule m
{REDUCERS}
ENTRY e {{
{params}
  z = {ty}[] constant({init})
{body}
  ROOT r = {out} reduce(v, z), dimensions={{1}}, to_apply={reducer}
}}"""


def _direct(text: str) -> bool:
    """Whether the row reduction's operand became vector code (no scalar lane loop)."""
    em = ModuleEmitter(run_cpu_pipeline(parse(text)), 1, 10**12, use_threads=False)
    em.emit("xlapy_entry")
    ir = str(em.llmod)
    assert '"vr.header"' in ir  # the reduction is the vectorized kind at all
    return '"vl.header"' not in ir


P3 = """  x = f32[64,96] parameter(0)
  y = f32[64,96] parameter(1)
  w = f32[64,96] parameter(2)"""

CASES = {
    # operand tree -> expected to take the direct path
    "x + y*w": ("  yw = f32[64,96] multiply(y, w)\n  v = f32[64,96] add(x, yw)", True),
    "max(x, -y) / w": ("  n = f32[64,96] negate(y)\n  m = f32[64,96] maximum(x, n)\n"
                       "  v = f32[64,96] divide(m, w)", True),
    "x - 2.5 (scalar broadcast)": ("  c = f32[] constant(2.5)\n  cb = f32[64,96] broadcast(c), "
                                   "dimensions={}\n  v = f32[64,96] subtract(x, cb)", True),
    "x * a row of y (a slice: not supported)": (
        "  r0 = f32[1,96] slice(y), slice={[0:1], [0:96]}\n  rv = f32[96] reshape(r0)\n"
        "  rb = f32[64,96] broadcast(rv), dimensions={1}\n  v = f32[64,96] multiply(x, rb)",
        False),
    "exp(x) * tanh(y)": ("  ex = f32[64,96] exponential(x)\n  th = f32[64,96] tanh(y)\n"
                         "  v = f32[64,96] multiply(ex, th)", True),
    "sin(x) (no vector form)": ("  v = f32[64,96] sine(x)", False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_operand_trees_against_the_interpreter(cpu_check, name):
    body, direct = CASES[name]
    text = _hlo(body, P3, "f32[64]")
    assert _direct(text) == direct
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((64, 96)).astype(np.float32) + 3 * (k == 2) for k in range(3)]
    got, want = cpu_check.run(text, *args)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=1e-4)


def test_broadcast_along_and_across_the_lanes_takes_the_direct_path(cpu_check):
    text = _hlo("  rb = f32[64,96] broadcast(rv), dimensions={1}\n"
                "  a = f32[64,96] add(x, rb)\n"
                "  cb = f32[64,96] broadcast(cv), dimensions={0}\n"
                "  v = f32[64,96] multiply(a, cb)",
                "  x = f32[64,96] parameter(0)\n  rv = f32[96] parameter(1)\n"
                "  cv = f32[64] parameter(2)", "f32[64]")
    assert _direct(text)
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((64, 96), (96,), (64,))]
    got, want = cpu_check.run(text, *args)
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=1e-4)


def test_nan_and_signed_zero_in_a_max_reduction_of_a_maximum(cpu_check):
    text = _hlo("  v = f32[64,96] maximum(x, y)", P3, "f32[64]", reducer="max")
    assert _direct(text)
    x = np.full((64, 96), -0.0, np.float32)
    y = np.full((64, 96), -1.0, np.float32)
    x[3, 50] = np.nan            # propagates through maximum and the reduction
    y[5, :] = 0.0                # max(-0, +0) is +0
    x[7, 95] = np.inf
    w = np.zeros((64, 96), np.float32)
    got, want = cpu_check.run(text, x, y, w)
    cpu_check.same(got[0], want[0])
    assert np.isnan(got[0][3]) and np.signbit(got[0][0]) and not np.signbit(got[0][5])


def test_reshape_keeps_the_direct_path_when_lanes_stay_in_a_row_or_memory_is_contiguous(
        cpu_check):
    ok = """HloModule m
%s
ENTRY e {
  x = f32[6144] parameter(0)
  z = f32[] constant(0)
  v = f32[64,96] reshape(x)
  ROOT r = f32[64] reduce(v, z), dimensions={1}, to_apply=add
}""" % REDUCERS
    # 102 %% 16 != 0: the lanes can cross the operand's rows; a row-major parameter has them
    # side by side in memory (a long reduction split into rows of any length) ...
    odd = ok.replace("f32[6144]", "f32[6120]").replace("f32[64,96]", "f32[60,102]") \
        .replace("f32[64] reduce", "f32[60] reduce")
    # ... a computed operand does not (it would need the lanes of two of its rows)
    computed = odd.replace("v = f32[60,102] reshape(x)",
                           "ex = f32[6120] exponential(x)\n  v = f32[60,102] reshape(ex)")
    assert _direct(ok) and _direct(odd) and not _direct(computed)
    for text, n in ((ok, 6144), (odd, 6120), (computed, 6120)):
        x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
        got, want = cpu_check.run(text, x)
        np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=1e-4)


def test_f64_and_a_lane_tail(cpu_check):
    text = """HloModule m
%s
ENTRY e {
  x = f64[10,100] parameter(0)
  y = f64[10,100] parameter(1)
  z = f64[] constant(0)
  v = f64[10,100] multiply(x, y)
  ROOT r = f64[10] reduce(v, z), dimensions={1}, to_apply=addd
}""" % REDUCERS
    assert _direct(text)      # 100 = 6 x 16 + 4: the last 4 come from the scalar tail
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((2, 10, 100))
    got, want = cpu_check.run(text, x, y)
    np.testing.assert_allclose(got[0], (x * y).sum(1), rtol=1e-12)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)


@pytest.mark.parametrize("ty,op", [("s32", "maximum"), ("u32", "minimum"), ("s64", "add"),
                                   ("f32", "minimum")])
def test_lanes_combined_in_halves(cpu_check, ty, op):
    """The final combination of the 16 lanes (vector halves) for integer and float ops."""
    text = f"""HloModule m
red {{ a = {ty}[] parameter(0)  b = {ty}[] parameter(1)  ROOT s = {ty}[] {op}(a, b) }}
ENTRY e {{
  x = {ty}[5,77] parameter(0)
  z = {ty}[] constant({ {"maximum": 0, "minimum": 9999, "add": 0}[op] })
  ROOT r = {ty}[5] reduce(x, z), dimensions={{1}}, to_apply=red
}}"""
    dt = {"s32": np.int32, "u32": np.uint32, "s64": np.int64, "f32": np.float32}[ty]
    x = np.random.default_rng(7).integers(0 if ty == "u32" else -1000, 1000, (5, 77)).astype(dt)
    got, want = cpu_check.run(text, x)
    cpu_check.same(got[0], want[0])
