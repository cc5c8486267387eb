"""Loop fusions of a recurrent cell's shapes against the interpreter: reshapes inside a
fusion (elemental_data.reshape_groups: dimensions grouped by equal element counts, size-1
dimensions mapped without division) and loop-nest kernels whose rows the vector width does
not divide (kernel_abi.inner_loop_hints: the remainder in masked vector iterations)."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.cpu.emitters.kernel_abi import inner_loop_hints
from xlapy.backends.llvm.elemental_data import reshape_groups
from xlapy.hlo.shapes import F32, Shape


@pytest.mark.parametrize("src,dst,groups", [
    ((1, 8, 60), (8, 60), [([1], [0]), ([2], [1])]),
    ((8, 1, 60, 1), (1, 8, 60), [([0], [1]), ([2], [2])]),
    ((8, 60), (480,), [([0, 1], [0])]),
    ((2, 3, 4), (6, 4), [([0, 1], [0]), ([2], [1])]),
    ((2, 3, 4), (4, 6), [([0, 1, 2], [0, 1])]),
    ((4, 6), (2, 2, 2, 3), [([0], [0, 1]), ([1], [2, 3])]),
    ((1,), (), []),
    ((3, 0), (0, 5), None),
])
def test_reshape_groups(src, dst, groups):
    assert reshape_groups(src, dst) == groups


# Every reshape is fed by a transpose or a dynamic-slice and feeds elementwise work, so
# that it stays inside a loop fusion (a reshape alone becomes a bitcast).
_RESHAPES = """HloModule reshapes

ENTRY main {
  x = f32[6,4,5] parameter(0)
  i = s32[] parameter(1)
  y = f32[4,30] parameter(2)
  t = f32[5,4,6] transpose(x), dimensions={2,1,0}
  a = f32[20,6] reshape(t)
  ea = f32[20,6] exponential(a)
  b = f32[2,2,5,3,2] reshape(t)
  nb = f32[2,2,5,3,2] negate(b)
  c = f32[1,4,1,30] reshape(t)
  sc = f32[1,4,1,30] sine(c)
  z = s32[] constant(0)
  ds = f32[1,4,5] dynamic-slice(x, i, z, z), dynamic_slice_sizes={1,4,5}
  r = f32[4,5] reshape(ds)
  yr = f32[4,5] slice(y), slice={[0:4], [3:8]}
  m = f32[4,5] multiply(r, yr)
  u = f32[4,1,5,1] reshape(m)
  eu = f32[4,1,5,1] tanh(u)
  ROOT out = (f32[20,6], f32[2,2,5,3,2], f32[1,4,1,30], f32[4,5], f32[4,1,5,1])
    tuple(ea, nb, sc, m, eu)
}
"""


@pytest.mark.parametrize("start", [0, 3, 7, -2])
def test_reshapes_inside_fusions(cpu_check, start):
    rng = np.random.default_rng(start + 10)
    x = rng.standard_normal((6, 4, 5)).astype(np.float32)
    y = rng.standard_normal((4, 30)).astype(np.float32)
    got, want = cpu_check.run(_RESHAPES, x, np.int32(start), y)
    for g, w in zip(got, want):
        cpu_check.close(g, w, rtol=2e-6, atol=2e-6)
    k = min(max(start, 0), 5)   # the dynamic-slice's clamped start
    np.testing.assert_array_equal(got[3], x[k] * y[:, 3:8])


def test_inner_loop_hints():
    hints = {"llvm.loop.vectorize.predicate.enable": 1}
    assert inner_loop_hints(Shape.array(F32, (8, 60))) == hints
    assert inner_loop_hints(Shape.array(F32, (8, 60, 1))) == hints    # size-1 dims skipped
    assert inner_loop_hints(Shape.array(F32, (8, 64))) is None        # no remainder
    assert inner_loop_hints(Shape.array(F32, (100, 3))) is None       # too short a row
    assert inner_loop_hints(Shape.array(F32, (4, 100))) is None       # masking costs more


def _cell_text(batch: int, width: int) -> str:
    """An LSTM cell's gate arithmetic on z = x@w + h@u (given) with its bias: the gates are
    column slices of z, so the kernel is a loop nest over [batch, width]."""
    g4 = 4 * width
    return f"""HloModule cell

ENTRY main {{
  z = f32[{batch},{g4}] parameter(0)
  bias = f32[{g4}] parameter(1)
  c = f32[{batch},{width}] parameter(2)
  bb = f32[{batch},{g4}] broadcast(bias), dimensions={{1}}
  zb = f32[{batch},{g4}] add(z, bb)
  i = f32[{batch},{width}] slice(zb), slice={{[0:{batch}], [0:{width}]}}
  f = f32[{batch},{width}] slice(zb), slice={{[0:{batch}], [{width}:{2 * width}]}}
  g = f32[{batch},{width}] slice(zb), slice={{[0:{batch}], [{2 * width}:{3 * width}]}}
  o = f32[{batch},{width}] slice(zb), slice={{[0:{batch}], [{3 * width}:{g4}]}}
  si = f32[{batch},{width}] logistic(i)
  sf = f32[{batch},{width}] logistic(f)
  so = f32[{batch},{width}] logistic(o)
  tg = f32[{batch},{width}] tanh(g)
  fc = f32[{batch},{width}] multiply(sf, c)
  ig = f32[{batch},{width}] multiply(si, tg)
  c2 = f32[{batch},{width}] add(fc, ig)
  tc = f32[{batch},{width}] tanh(c2)
  h2 = f32[{batch},{width}] multiply(so, tc)
  ROOT out = (f32[{batch},{width}], f32[{batch},{width}]) tuple(h2, c2)
}}
"""


@pytest.mark.parametrize("batch,width", [(8, 60), (3, 21), (32, 100), (5, 64), (1, 9)])
def test_cell_rows_with_remainders(cpu_check, batch, width):
    rng = np.random.default_rng(batch * 1000 + width)
    z = (3 * rng.standard_normal((batch, 4 * width))).astype(np.float32)
    z[0, :4] = [np.inf, -np.inf, np.nan, 0.0]   # non-finite values near a row's start
    z[-1, -3:] = [np.nan, 1e30, -1e30]         # and in the last lanes of the remainder
    bias = rng.standard_normal(4 * width).astype(np.float32)
    c = rng.standard_normal((batch, width)).astype(np.float32)
    got, want = cpu_check.run(_cell_text(batch, width), z, bias, c)
    for g, w in zip(got, want):
        cpu_check.close(g, w, rtol=1e-5, atol=1e-6)
