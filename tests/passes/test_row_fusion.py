"""Row fusion: HLO text in, HLO text out; the cases it must leave alone; values unchanged
on the interpreter and on cpu, whose kernel then works row by row."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import module_diff, parse, verify
from xlapy.passes.fusion import count_kernels
from xlapy.passes.row_fusion import RowFusion

f32 = np.float32

REDUCERS = """
%max_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


def softmax_module(rows=4, cols=8, bcast_dims="{0}", extra_user=False):
    extra = (f"  %other = f32[{rows}] negate(%gte.0)\n"
             f"  ROOT %out = (f32[{rows},{cols}], f32[{rows}]) tuple(%divide_fusion, %other)"
             if extra_user else "")
    root = "" if extra_user else "ROOT "
    out_shape = f"(f32[{rows},{cols}], f32[{rows}])" if extra_user else f"f32[{rows},{cols}]"
    return f"""HloModule softmax
{REDUCERS}
%fused_divide (p0: f32[{rows}], p1: f32[{rows},{cols}], p2: f32[{rows}]) -> f32[{rows},{cols}] {{
  %p1 = f32[{rows},{cols}] parameter(1)
  %p2 = f32[{rows}] parameter(2)
  %b5 = f32[{rows},{cols}] broadcast(%p2), dimensions={bcast_dims}
  %sub = f32[{rows},{cols}] subtract(%p1, %b5)
  %e = f32[{rows},{cols}] exponential(%sub)
  %p0 = f32[{rows}] parameter(0)
  %b3 = f32[{rows},{cols}] broadcast(%p0), dimensions={bcast_dims}
  ROOT %d = f32[{rows},{cols}] divide(%e, %b3)
}}

%fused_reduce (q: f32[{rows},{cols}]) -> (f32[{rows}], f32[{rows}]) {{
  %q = f32[{rows},{cols}] parameter(0)
  %ninf = f32[] constant(-inf)
  %mx = f32[{rows}] reduce(%q, %ninf), dimensions={{1}}, to_apply=%max_f32
  %bm = f32[{rows},{cols}] broadcast(%mx), dimensions={{0}}
  %sm = f32[{rows},{cols}] subtract(%q, %bm)
  %ex = f32[{rows},{cols}] exponential(%sm)
  %zero = f32[] constant(0)
  %sum = f32[{rows}] reduce(%ex, %zero), dimensions={{1}}, to_apply=%add_f32
  ROOT %t = (f32[{rows}], f32[{rows}]) tuple(%mx, %sum)
}}

ENTRY %main (x: f32[{rows},{cols}]) -> {out_shape} {{
  %x = f32[{rows},{cols}] parameter(0)
  %reduce_fusion = (f32[{rows}], f32[{rows}]) fusion(%x), kind=kInput, calls=%fused_reduce
  %gte.1 = f32[{rows}] get-tuple-element(%reduce_fusion), index=1
  %gte.0 = f32[{rows}] get-tuple-element(%reduce_fusion), index=0
  {root}%divide_fusion = f32[{rows},{cols}] fusion(%gte.1, %x, %gte.0), kind=kLoop, calls=%fused_divide
{extra}
}}
"""  # noqa: E501 (HLO text: one instruction a line)


def _interp(module, *args):
    return get_platform("interpreter").compiler.compile(module).run(*args)


def test_softmax_becomes_one_row_kernel():
    before = parse(softmax_module())
    after = parse(softmax_module())
    assert RowFusion().run(after) is True
    verify(after)
    assert count_kernels(after) == 1
    root = after.entry.root
    assert root.opcode == "fusion" and root.attrs["kind"] == "kLoop"
    assert [o.name for o in root.operands] == ["x"]          # reads x only
    body = root.fused_computation
    assert sorted(i.opcode for i in body.instructions if i.opcode == "reduce") == ["reduce"] * 2
    assert not any(i.opcode in ("tuple", "get-tuple-element") for i in body.instructions)
    text = after.to_string()
    assert "kind=kInput" not in text and parse(text).entry.root.opcode == "fusion"
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(f32)
    np.testing.assert_array_equal(_interp(after, x), _interp(before, x))


@pytest.mark.parametrize("case", ["other user", "column broadcast", "row too long"])
def test_left_alone(case):
    if case == "other user":
        text = softmax_module(extra_user=True)         # R's max is also an output
        rf = RowFusion()
    elif case == "column broadcast":
        text = softmax_module(rows=8, cols=8, bcast_dims="{1}")   # not a per-row value
        rf = RowFusion()
    else:
        text = softmax_module()
        rf = RowFusion(row_bytes=16)                   # 8 floats = 32 bytes per row
    module = parse(text)
    assert rf.run(module) is False
    assert module_diff(parse(text), module) is None    # "no change" means identical


SHAPES = [(4, 8), (37, 100), (3, 5, 17), (1, 1024), (130, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
def test_cpu_row_kernels_match_the_interpreter(shape):
    import xlapy as xp
    import xlapy.numpy as xnp

    def softmax(x):
        m = xnp.max(x, axis=-1, keepdims=True)
        e = xnp.exp(x - m)
        return e / xnp.sum(e, axis=-1, keepdims=True)

    def layernorm(x):
        mu = xnp.mean(x, -1, keepdims=True)
        var = xnp.mean((x - mu) ** 2, -1, keepdims=True)
        return (x - mu) / xnp.sqrt(var + 1e-5)

    def log_softmax(x):
        m = xnp.max(x, -1, keepdims=True)
        return x - (xnp.log(xnp.sum(xnp.exp(x - m), -1, keepdims=True)) + m)

    x = np.random.default_rng(1).standard_normal(shape).astype(f32) * f32(4)
    for fn in (softmax, layernorm, log_softmax):
        lowered = xp.jit(fn).lower(x)
        compiled = lowered.compile()
        if len(shape) >= 2 and shape[-1] > 1:
            assert count_kernels(compiled.executable.optimized_module) == 1, fn.__name__
        want = _interp(lowered.module, x)
        np.testing.assert_allclose(compiled(x), want, rtol=2e-6, atol=2e-6,
                                   err_msg=fn.__name__)


def test_row_kernel_loops_over_rows_then_elements(tmp_path, monkeypatch):
    """The emitted kernel computes the row statistics once per row (hoisted out of the
    loop over the row's elements), which is what makes the fusion pay."""
    import xlapy as xp
    import xlapy.numpy as xnp
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path}")
    f = xp.jit(lambda x: x / xnp.sum(x, -1, keepdims=True))
    x = np.ones((64, 48), f32)
    np.testing.assert_allclose(f(x), np.full((64, 48), 1 / 48, f32))
    ir = next(tmp_path.glob("*ir-no-opt.ll")).read_text()
    # the loop over the row's elements: 16 at a time as vector code (48 = 3 x 16)
    assert "rowv.header" in ir and '"row.header"' not in ir


def test_softmax_row_kernel_keeps_exp_in_a_row_buffer(tmp_path, monkeypatch):
    """exp(x - max) feeds the row sum and the output: computed once, kept in a row buffer."""
    import xlapy as xp
    import xlapy.numpy as xnp
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path}")

    def softmax(x):
        e = xnp.exp(x - xnp.max(x, -1, keepdims=True))
        return e / xnp.sum(e, -1, keepdims=True)

    x = np.random.default_rng(2).standard_normal((33, 70)).astype(f32)
    lowered = xp.jit(softmax).lower(x)
    got = lowered.compile()(x)
    ir = next(tmp_path.glob("*ir-no-opt.ll")).read_text()
    assert '%"row.' in ir and "alloca float, i64 70" in ir
    # once on 16 lanes in the reduction's vector loop (elemental_vector), which also fills the
    # row buffer, once on scalars in its tail (70 = 4 x 16 + 6): the output reads the row
    # buffer instead of computing exp again
    assert ir.count('call <16 x float> @"xlapy.exp.v16f32"') == 1
    assert ir.count('call float @"xlapy.exp.f32"') == 1
    # the vector loop stores its exp values into the row buffer: store <16 x float> through a
    # bitcast of a getelementptr into %"row.exponential..."
    geps = set(re.findall(r'%"([.\w]+)" = getelementptr inbounds float, float\* %"row\.', ir))
    casts = {c for c, g in re.findall(r'%"([.\w]+)" = bitcast float\* %"([.\w]+)" to <16 x '
                                      r'float>\*', ir) if g in geps}
    stores = re.findall(r'store <16 x float> [^,]+, <16 x float>\* %"([.\w]+)"', ir)
    assert casts & set(stores), "the vector loop does not fill the row buffer"
    opt = next(tmp_path.glob("*ir-with-opt.ll")).read_text()
    assert re.search(r"fmul <(4|8|16) x float>", opt), "the row kernel computes exp on scalars"
    np.testing.assert_allclose(got, _interp(lowered.module, x), rtol=2e-6, atol=1e-7)
