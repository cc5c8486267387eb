"""Depthwise convolutions whose output features each read their group's one lhs feature (a
one-feature image's first layer, multipliers of whole vectors) on the blocked kernel of
conv_depthwise.py (PIXEL_BLOCK pixels of a row together, the rows' edges and remainders on
the per-pixel kernel): random strides, padding (negative too), kernel dilation and
reversal, batch and spatial dims in any order, against the interpreter, f32 and f64."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _module, draw, features_last, random_window
from xlapy.backends.cpu.emitters.conv_depthwise import _pixel_runs
from xlapy.backends.cpu.passes.conv_plan import depthwise_plan
from xlapy.backends.cpu.target import vector_bits
from xlapy.hlo import parse


def _case(rng, lanes: int):
    nsp = int(rng.choice([1, 2, 2, 3]))
    g = int(rng.choice([1, 1, 2, 3]))
    mult = lanes * int(rng.choice([1, 2, 3]))
    w = random_window(rng, nsp, insp=(6, 15), win_hi=5, ldil=(1, 1, 1, 1, 2))
    if w is None:
        return None
    insp, win, outsp, window = w
    batch = int(rng.integers(1, 3))
    sp = "".join(str(s) for s in range(nsp))
    ld, od, llab, olab = features_last(rng, batch, insp, outsp, g, g * mult)
    rd = tuple(win) + (1, g * mult)
    extra = f", feature_group_count={g}" if g > 1 else ""
    return (ld, None, rd, None, od, None, window, f"{llab}_{sp}io->{olab}", extra)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_blocked_rows_against_interpreter(cpu_check, t):
    lanes = vector_bits() // (32 if t == "f32" else 64)
    rng = np.random.default_rng(40 + lanes)
    cases = draw(lambda r: _case(r, lanes), rng, 16)
    m, args = _module(cases, t=t, seed=5)
    convs = [i for i in parse(m.text()).entry.instructions if i.opcode == "convolution"]
    assert all(depthwise_plan(i) is not None for i in convs)
    taken = sum(_pixel_runs(i, depthwise_plan(i)) is not None for i in convs)
    assert taken >= 4, taken  # (of 16 drawn: 5 at 512 bits, 4 for f64 at 256)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4 if t == "f32" else 1e-10,
                                            1e-4 if t == "f32" else 1e-10))


def test_nonfinite_lhs(cpu_check):
    """inf and NaN in the image: the interior blocks and the edge pixels as the
    interpreter (padding adds nothing; the kernel is finite)."""
    text = """HloModule first_layer
ENTRY e {
  x = f32[2,9,13,1] parameter(0)
  k = f32[3,3,1,32] parameter(1)
  ROOT c = f32[2,9,13,32] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
}"""
    conv = parse(text).entry.root
    # rows of 13 pixels with 512-bit vectors (at 256 bits another plan: checked all the same)
    assert _pixel_runs(conv, depthwise_plan(conv)) == 13 or vector_bits() < 512
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 13, 1)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 4, 6, 0], x[1, 8, 12, 0] = np.inf, np.nan, -np.inf
    k = rng.standard_normal((3, 3, 1, 32)).astype(np.float32)
    got, want = cpu_check.run(text, x, k)
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(want[0]))
    cpu_check.close(got[0], want[0], rtol=1e-5, atol=1e-5)
