"""Depthwise convolutions whose output features each read their group's one lhs feature (a
one-feature image's first layer, multipliers of whole vectors) on the blocked kernel of
conv_depthwise.py (PIXEL_BLOCK pixels of a row together, the rows' edges and remainders on
the per-pixel kernel): random strides, padding (negative too), kernel dilation and
reversal, batch and spatial dims in any order, against the interpreter, f32 and f64."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _module, draw, out_sizes
from xlapy.backends.cpu.emitters.conv_depthwise import _pixel_runs
from xlapy.backends.cpu.passes.conv_plan import depthwise_plan
from xlapy.backends.cpu.target import vector_bits
from xlapy.hlo import parse


def _case(rng, lanes: int):
    nsp = int(rng.choice([1, 2, 2, 3]))
    g = int(rng.choice([1, 1, 2, 3]))
    mult = lanes * int(rng.choice([1, 2, 3]))
    insp = [int(rng.integers(6, 15)) for _ in range(nsp)]
    win = [int(rng.integers(1, 5)) for _ in range(nsp)]
    stride = [int(rng.integers(1, 3)) for _ in range(nsp)]
    ldil = [int(rng.choice([1, 1, 1, 1, 2])) for _ in range(nsp)]
    rdil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
    pl = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    ph = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    rev = [int(rng.random() < 0.3) for _ in range(nsp)]
    outsp = out_sizes(insp, win, stride, ldil, rdil, pl, ph)
    if outsp is None:
        return None
    batch = int(rng.integers(1, 3))
    sp = "".join(str(s) for s in range(nsp))
    window = (f"size={'x'.join(map(str, win))} stride={'x'.join(map(str, stride))} "
              f"pad={'x'.join(f'{a}_{b}' for a, b in zip(pl, ph))} "
              f"lhs_dilate={'x'.join(map(str, ldil))} rhs_dilate={'x'.join(map(str, rdil))} "
              f"rhs_reversal={'x'.join(map(str, rev))}")
    lperm = [int(x) for x in rng.permutation(nsp + 1)]
    oper = [int(x) for x in rng.permutation(nsp + 1)]
    lab = ["b"] + list(sp)
    ldims, odims = [batch] + insp, [batch] + outsp
    llab = "".join(lab[j] for j in lperm) + "f"
    olab = "".join(lab[j] for j in oper) + "f"
    ld = tuple(ldims[j] for j in lperm) + (g,)
    od = tuple(odims[j] for j in oper) + (g * mult,)
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
    assert taken >= 5, taken
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
    assert _pixel_runs(conv, depthwise_plan(conv)) == 13
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 13, 1)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 4, 6, 0], x[1, 8, 12, 0] = np.inf, np.nan, -np.inf
    k = rng.standard_normal((3, 3, 1, 32)).astype(np.float32)
    got, want = cpu_check.run(text, x, k)
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(want[0]))
    cpu_check.close(got[0], want[0], rtol=1e-5, atol=1e-5)
