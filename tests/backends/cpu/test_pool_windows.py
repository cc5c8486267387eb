"""reduce-window as pooling layers use it (elemental_reduce.py): small windows are emitted
as straight-line code with clamped reads and selects (the loop over an NHWC output's
channels then vectorizes), bigger ones as a loop; bounds are tested only on the sides the
padding reaches. Random NHWC windows with strides, padding, base and window dilation, a
fused producer, several reducers and NaN inputs, against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

_REDUCERS = {"max": ("maximum", "-inf"), "min": ("minimum", "inf"), "add": ("add", "0")}


def _text(in_dims, out_dims, window, reducer, producer):
    op, init = _REDUCERS[reducer]
    dims = ",".join(map(str, in_dims))
    out = ",".join(map(str, out_dims))
    return f"""HloModule pool

red {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] {op}(a, b)
}}

ENTRY main {{
  x = f32[{dims}] parameter(0)
  bias = f32[{in_dims[-1]}] parameter(1)
  bb = f32[{dims}] broadcast(bias), dimensions={{{len(in_dims) - 1}}}
  y = f32[{dims}] {producer}(x, bb)
  init = f32[] constant({init})
  ROOT out = f32[{out}] reduce-window(y, init), window={{{window}}}, to_apply=red
}}
"""


def _window(rng, in_dims, big=False):
    """A random window over the spatial dims of an NHWC input: (window text, out dims)."""
    size, stride, pad, ld, rd, out = [1], [1], ["0_0"], [1], [1], [in_dims[0]]
    for d in in_dims[1:-1]:
        s = int(rng.integers(4, 6)) if big else int(rng.integers(1, 4))
        st = int(rng.integers(1, 4))
        lo, hi = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        bd = int(rng.choice([1, 1, 2]))
        wd = int(rng.choice([1, 1, 2]))
        span = (s - 1) * wd + 1
        padded = (d - 1) * bd + 1 + lo + hi
        if padded < span:
            hi += span - padded
            padded = span
        size.append(s)
        stride.append(st)
        pad.append(f"{lo}_{hi}")
        ld.append(bd)
        rd.append(wd)
        out.append((padded - span) // st + 1)
    size.append(1)
    stride.append(1)
    pad.append("0_0")
    ld.append(1)
    rd.append(1)
    out.append(in_dims[-1])
    j = "x".join
    text = (f"size={j(map(str, size))} stride={j(map(str, stride))} pad={j(pad)} "
            f"lhs_dilate={j(map(str, ld))} rhs_dilate={j(map(str, rd))}")
    return text, out


@pytest.mark.parametrize("seed", range(4))
def test_random_pool_windows(cpu_check, seed):
    rng = np.random.default_rng(900 + seed)
    for case in range(6):
        in_dims = [int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 9)),
                   int(rng.choice([1, 3, 16, 19, 32]))]
        big = case == 5   # windows of more than 16 positions: the loop form
        window, out_dims = _window(rng, in_dims, big)
        reducer = ["max", "min", "add"][case % 3]
        producer = ["add", "multiply"][case % 2]
        x = rng.standard_normal(in_dims).astype(np.float32)
        x.flat[rng.integers(0, x.size, max(x.size // 20, 1))] = np.nan
        bias = rng.standard_normal(in_dims[-1]).astype(np.float32)
        text = _text(in_dims, out_dims, window, reducer, producer)
        got, want = cpu_check.run(text, x, bias)
        what = f"{reducer} {in_dims} {window}"
        if reducer == "add":
            cpu_check.close(got[0], want[0], rtol=1e-5, atol=1e-5, what=what)
        else:
            cpu_check.same(got[0], want[0], what=what)


def test_max_pool_nhwc(cpu_check):
    """The CNN's 2x2 / stride 2 SAME max pool of relu(x + b), odd spatial sizes."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 7, 9, 32)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    text = _text([2, 7, 9, 32], [2, 4, 5, 32],
                 "size=1x2x2x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0", "max", "add")
    got, want = cpu_check.run(text, x, bias)
    cpu_check.same(got[0], want[0])
