"""Column reductions (keep only the minor dimension) with an epilogue, vs the interpreter."""

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu.column_reduction import column_plan
from xlapy.backends.cpu.pipeline import run_cpu_pipeline
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
