"""Reduction splitting: HLO in, HLO out, values unchanged; cases it must leave alone."""

import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.hlo import module_diff, parse, verify
from xlapy.passes.reduction_splitter import ReductionSplitter

TEXT = """HloModule m
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] {op}(a, b) }}
ENTRY e {{
  x = f32[{dims}] parameter(0)
  z = f32[] constant({init})
  ROOT s = f32[] reduce(x, z), dimensions={{{rdims}}}, to_apply=add
}}
"""


@pytest.mark.parametrize("dims,rdims", [("262144", "0"), ("256,1024", "0,1"),
                                        ("64,32,64", "0,1,2")])
@pytest.mark.parametrize("op,init", [("add", 0), ("maximum", "-inf")])
def test_split_into_row_and_final_reduction(dims, rdims, op, init):
    m = parse(TEXT.format(dims=dims, rdims=rdims, op=op, init=init))
    shape = tuple(int(d) for d in dims.split(","))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = evaluate(m, x)
    assert ReductionSplitter().run(m)
    verify(m)
    reduces = [i for i in m.entry.instructions if i.opcode == "reduce"]
    assert len(reduces) == 2 and reduces[0].shape.rank == 1 and reduces[0].shape.dims[0] >= 16
    np.testing.assert_allclose(evaluate(m, x), want, rtol=1e-5)


@pytest.mark.parametrize("dims,rdims,init,why", [
    ("262144", "0", 5, "init is not the identity"),
    ("1000", "0", 0, "too small"),
    ("262147", "0", 0, "a prime length has no row split"),
    ("256,1024", "1", 0, "not a reduction to a scalar"),
])
def test_left_alone(dims, rdims, init, why):
    text = TEXT.format(dims=dims, rdims=rdims, op="add", init=init)
    if rdims == "1":
        text = text.replace("ROOT s = f32[] reduce", "ROOT s = f32[256] reduce")
    m = parse(text)
    assert ReductionSplitter().run(m) is False, why
    assert module_diff(m, parse(text)) is None
