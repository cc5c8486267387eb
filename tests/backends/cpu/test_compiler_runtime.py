"""Generated code that ends up calling the compiler runtime's half-precision conversions
(LLVM turned cbrt's f64 -> f32 -> f16 of an s8 input into __truncdfhf2 on a CPU without
AVX512-FP16) resolves them from libgcc_s: this crashed with a null call before."""

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse_module


@pytest.mark.parametrize("dims", ["[]", "[9]"])
@pytest.mark.parametrize("src,op", [("s8", "cbrt"), ("s8", "exponential"), ("s16", "cbrt"),
                                    ("f64", "convert")])
def test_half_results_through_f64_math(src, op, dims):
    body = (f"ROOT r = f16{dims} convert(p)" if op == "convert" else
            f"c = f16{dims} convert(p)\n  ROOT r = f16{dims} {op}(c)")
    m = parse_module(f"HloModule m\nENTRY e {{\n  p = {src}{dims} parameter(0)\n  {body}\n}}\n")
    x = np.array([-128, -27, -8, -1, 0, 1, 8, 27, 100],
                 dtype={"s8": np.int8, "s16": np.int16, "f64": np.float64}[src])
    if dims == "[]":
        x = x[5]
    got = flatten(get_platform("cpu").compiler.compile(m).run(x))[0]
    want = flatten(evaluate(m, x))[0]
    np.testing.assert_array_equal(got, want)
