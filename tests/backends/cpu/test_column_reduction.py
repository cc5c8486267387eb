"""Column reductions (keep only the minor dimension) with an epilogue, vs the interpreter."""

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu.passes.column_plan import column_plan
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.hlo import parse

TEXT = """HloModule col
{red} {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  ROOT r = {t}[] {op}(a, b) }}
ENTRY e {{
  x = {t}[{rows},{cols}] parameter(0)
  bias = {t}[{cols}] parameter(1)
  z = {t}[] constant({init})
  s = {t}[{cols}] reduce(x, z), dimensions={{0}}, to_apply={red}
  ROOT u = {t}[{cols}] subtract(bias, s)
}}
"""


@pytest.mark.parametrize("t,op,init", [("f32", "add", 0), ("f32", "maximum", "-inf"),
                                       ("f64", "add", 0), ("s32", "add", 0),
                                       ("bf16", "add", 0)])
@pytest.mark.parametrize("rows,cols", [(256, 1024), (3, 300), (7, 17)])
def test_column_reduction_with_epilogue(t, op, init, rows, cols):
    text = TEXT.format(red="red", t=t, op=op, init=init, rows=rows, cols=cols)
    optimized = run_cpu_pipeline(parse(text))
    fusion = [i for i in optimized.entry.instructions if i.opcode == "fusion"]
    assert len(fusion) == 1 and column_plan(fusion[0]) is not None  # the path under test
    rng = np.random.default_rng(rows + cols)
    dtype = parse(text).entry.parameters[0].shape.dtype
    x = (rng.standard_normal((rows, cols)) * 4).astype(dtype)
    b = (rng.standard_normal(cols) * 4).astype(dtype)
    module = parse(text)
    want = get_platform("interpreter").compiler.compile(module).run(x, b)
    got = get_platform("cpu").compiler.compile(module).run(x, b)
    tol = {"bf16": 1e-2, "f32": 1e-5}.get(t, 0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("epilogue,expected", [
    ("ROOT u = f32[64] subtract(q1, s)", ["bias"]),                 # per column: yes
    ("rb = f32[64] reverse(q1), dimensions={0}\n  ROOT u = f32[64] subtract(rb, s)", []),
    ("bb = f32[32,64] broadcast(q1), dimensions={1}\n  y = f32[32,64] add(q0, bb)\n"
     "  s2 = f32[64] reduce(y, z), dimensions={0}, to_apply=add\n"
     "  ROOT u = f32[64] subtract(q1, s2)", ["bias"]),             # row broadcast: yes
])
def test_which_operands_a_column_kernel_may_overwrite(epilogue, expected):
    # donation writes the output over a parameter only when the kernel reads that parameter
    # at the output's own column before writing it; a reversed read is not that
    from xlapy.backends.cpu.passes.column_plan import overwritable_operands
    reduce_input = "y" if "s2" in epilogue else "q0"
    body = epilogue if "s2" in epilogue else \
        f"s = f32[64] reduce({reduce_input}, z), dimensions={{0}}, to_apply=add\n  {epilogue}"
    text = f"""HloModule col
add (a: f32[], b: f32[]) -> f32[] {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }}
fused (q0: f32[32,64], q1: f32[64]) -> f32[64] {{
  q0 = f32[32,64] parameter(0)
  q1 = f32[64] parameter(1)
  z = f32[] constant(0)
  {body}
}}
ENTRY e {{
  x = f32[32,64] parameter(0)
  bias = f32[64] parameter(1)
  ROOT f = f32[64] fusion(x, bias), kind=kLoop, calls=fused
}}
"""  # noqa: E501 (HLO text: one instruction a line)
    fusion = parse(text).entry.root
    assert column_plan(fusion) is not None
    assert [fusion.operands[k].name for k in overwritable_operands(fusion)] == expected
