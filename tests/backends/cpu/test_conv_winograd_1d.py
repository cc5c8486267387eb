"""Winograd for one spatial dim (NWC / NCW, windows 3 and 5: passes/winograd_plan.py's
as_2d, F(2, r) along the dim) against the interpreter: random dimension orders, layouts,
odd and size-1 sizes, SAME / VALID / asymmetric / negative padding and the input
gradient's reversed kernel, at one to three threads; non-finite operands (the other paths
take them); a fused epilogue; bf16; which convolutions take it; jax.grad of a conv1d layer
against JAX's."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _module as shared_module
from xlapy_tests_cpu_conv_cases import draw
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.passes import winograd_plan as W
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate


def _case(rng):
    """A random stride-1 1-d convolution with a window of 3 or 5: (lhs dims, lhs layout,
    rhs dims, rhs layout, out dims, out layout, window, dim_labels)."""
    r = int(rng.choice([3, 5]))
    batch, c, k = (int(rng.integers(1, 4)), int(rng.integers(1, 7)), int(rng.integers(2, 7)))
    pl, ph = int(rng.integers(-1, r)), int(rng.integers(-1, r))
    insp = int(rng.integers(1, 14))
    rev = int(rng.random() < 0.3)
    outsp = insp + pl + ph - (r - 1)
    if outsp < 1:
        return None
    perms = [list(rng.permutation(3)) for _ in range(3)]

    def place(perm, a, b_, sp):
        d, chars = [0] * 3, [""] * 3
        d[perm[0]], d[perm[1]], d[perm[2]] = a[1], b_[1], sp
        chars[perm[0]], chars[perm[1]], chars[perm[2]] = a[0], b_[0], "0"
        return tuple(d), "".join(chars)

    ld, ll = place(perms[0], ("b", batch), ("f", c), insp)
    rd, rl = place(perms[1], ("i", c), ("o", k), r)
    od, ol = place(perms[2], ("b", batch), ("f", k), outsp)
    layouts = [tuple(int(x) for x in rng.permutation(3)) if rng.random() < 0.4 else None
               for _ in range(3)]
    window = f"size={r} pad={pl}_{ph} rhs_reversal={rev}"
    return ld, layouts[0], rd, layouts[1], od, layouts[2], window, f"{ll}_{rl}->{ol}"


def _convs(text):
    return [i for i in parse(text).entry.instructions if i.opcode == "convolution"]


_FIXED = [((2, 13, 20), None, (5, 20, 18), None, (2, 9, 18), None, "size=5", "b0f_0io->b0f"),
          ((3, 20, 17), None, (18, 20, 5), None, (3, 18, 17), None,
           "size=5 pad=2_2 rhs_reversal=1", "bf0_oi0->bf0"),
          ((1, 1, 16), None, (3, 16, 16), None, (1, 1, 16), None, "size=3 pad=1_1",
           "b0f_0io->b0f"),
          ((4, 16, 31), None, (32, 16, 3), None, (4, 32, 31), None, "size=3 pad=1_1",
           "bf0_oi0->bf0")]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_random_convolutions(any_size, threads):
    rng = np.random.default_rng(41)
    m, args = shared_module(draw(_case, rng, 16) + _FIXED, rng=rng, name="winograd_1d")
    text = m.text()
    assert all(W.winograd_plan(i) is not None for i in _convs(text))
    want = [np.asarray(w) for w in flatten(evaluate(parse(text), *args))]
    exe = get_platform("cpu").compiler.compile(parse(text), num_threads=threads)
    got = [np.asarray(g) for g in flatten(exe.run(*args))]
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_small_blocks(cpu_check, any_size, monkeypatch):
    """Blocks of 12 tiles: several per image, tiles of two images in one block."""
    from xlapy.backends.cpu.emitters import conv_winograd as CW
    monkeypatch.setattr(CW, "BLOCK_BYTES", 1)
    monkeypatch.setattr(CW, "MIN_BLOCK_TILES", 12)
    rng = np.random.default_rng(43)
    m, args = shared_module(_FIXED, rng=rng, name="winograd_1d_blocks")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_non_finite_operands(cpu_check, any_size):
    """inf / NaN in kernels and inputs: the other paths run (Winograd would spread them
    over a tile and multiply padding), NaN exactly where the interpreter has it."""
    rng = np.random.default_rng(47)
    m, args = shared_module(draw(_case, rng, 10) + _FIXED, rng=rng, name="winograd_1d_nan")
    poisoned = []
    for k, a in enumerate(args):
        a = a.copy()
        if k % 3 != 2:
            flat = a.reshape(-1)
            idx = rng.choice(flat.size, size=max(1, flat.size // 20), replace=False)
            flat[idx] = rng.choice(np.array([np.inf, -np.inf, np.nan], a.dtype), idx.size)
        poisoned.append(a)
    got, want = cpu_check.run(m.text(), *poisoned)
    for g, w, label in zip(got, want, m.labels):
        assert np.array_equal(np.isnan(g), np.isnan(w)), label
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True, err_msg=label)


@pytest.mark.parametrize("labels", ["b0f_0io->b0f", "bf0_oi0->bf0"])
def test_epilogue_fusion(cpu_check, labels):
    """bias + relu fused as the convolution's epilogue, per output pixel (default
    thresholds: the plan is taken; an odd width: an edge tile)."""
    b, w, c, k = 8, 201, 32, 48   # at least gemm_epilogue.MIN_ELEMENTS outputs
    nwc = labels.startswith("b0f")
    xs, outs = (f"f32[{b},{w},{c}]", f"f32[{b},{w},{k}]") if nwc else \
        (f"f32[{b},{c},{w}]", f"f32[{b},{k},{w}]")
    fs = f"f32[5,{c},{k}]" if nwc else f"f32[{k},{c},5]"
    text = f"""HloModule winograd_1d_epilogue

ENTRY main {{
  x = {xs} parameter(0)
  f = {fs} parameter(1)
  bias = f32[{k}] parameter(2)
  conv = {outs} convolution(x, f), window={{size=5 pad=2_2}}, dim_labels={labels}
  bb = {outs} broadcast(bias), dimensions={{{2 if nwc else 1}}}
  add = {outs} add(conv, bb)
  zero = f32[] constant(0)
  zb = {outs} broadcast(zero), dimensions={{}}
  ROOT relu = {outs} maximum(add, zb)
}}
"""
    assert all(W.winograd_plan(i) is not None for i in _convs(text))
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert "kind=kOutput" in exe.optimized_module.to_string() or not nwc
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(tuple(int(d) for d in s[4:-1].split(","))).astype(np.float32)
            for s in (xs, fs, f"f32[{k}]")]
    got, want = cpu_check.run(text, *args)
    O.compare_outputs(got, want, ["relu(conv + bias)"], (O.CLOSE, 1e-4, 1e-4))


def test_bf16(cpu_check, any_size):
    """bf16 operands widened by the transforms (small integers: F(2, 3) is exact, F(2, 5)
    within a unit of the type)."""
    rng = np.random.default_rng(53)
    m = O.ModuleText(name="winograd_1d_bf16")
    args, checks = [], []
    for ld, ll, rd, rl, od, ol, window, labels in draw(_case, rng, 8) + _FIXED:
        pl = m.param(O.ShapeCase("", ld, ll).text("bf16"))
        pr = m.param(O.ShapeCase("", rd, rl).text("bf16"))
        args += [rng.integers(-2, 3, ld).astype(O.DTYPE["bf16"]),
                 rng.integers(-2, 3, rd).astype(O.DTYPE["bf16"])]
        m.op(O.ShapeCase("", od, ol).text("bf16"),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}",
             f"conv bf16 {labels} {window}")
        checks.append(O.EXACT if window.startswith("size=3") else (O.CLOSE, 1e-2, 1e-2))
    assert all(W.winograd_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, checks)


def test_which_convolutions():
    """The conv1d neighbours' forward (64 input features) takes F(2, 5); 128 input
    features of a 5-window (the input gradient) do not (F(2, 5)'s error reaches the
    tests' tolerance there), nor strides, dilations, a 7-window or few features;
    --xla_cpu_winograd=false
    turns it off."""
    text = """HloModule m

ENTRY main {
  x = f32[16,64,128] parameter(0)
  f = f32[128,64,5] parameter(1)
  y = f32[16,128,64] parameter(2)
  g = f32[5,64,128] parameter(3)
  a = f32[16,128,124] convolution(x, f), window={size=5}, dim_labels=bf0_oi0->bf0
  b = f32[16,64,128] convolution(a, f), window={size=5 pad=4_4 rhs_reversal=1},
    dim_labels=bf0_io0->bf0
  c = f32[16,128,128] convolution(y, g), window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f
  d = f32[16,64,128] convolution(y, g), window={size=5 stride=2 pad=2_2},
    dim_labels=b0f_0io->b0f
  e = f32[16,128,128] convolution(y, g), window={size=5 pad=4_4 rhs_dilate=2},
    dim_labels=b0f_0io->b0f
  ROOT t = (f32[16,128,124], f32[16,64,128], f32[16,128,128], f32[16,64,128],
    f32[16,128,128]) tuple(a, b, c, d, e)
}
"""
    a, b, c, d, e = _convs(text)
    pa = W.winograd_plan(a)
    assert pa is not None and (pa.ms, pa.rs, pa.tiles_hw) == ((1, 2), (1, 5), (1, 62))
    assert W.winograd_plan(c) is not None
    assert W.winograd_plan(b) is None and W.winograd_plan(d) is None \
        and W.winograd_plan(e) is None
    seven = text.replace("size=5}", "size=7}").replace("f32[128,64,5]", "f32[128,64,7]") \
        .replace("f32[16,128,124]", "f32[16,128,122]")
    assert W.winograd_plan(_convs(seven)[0]) is None
    view = W.as_2d(a)
    assert view.shape.dims == (16, 128, 1, 124) and view.operands[1].shape.dims \
        == (128, 64, 1, 5) and str(view.attrs["dim_labels"]) == "bf01_oi01->bf01"
    few = """HloModule m

ENTRY main {
  x = f32[32,64,4] parameter(0)
  f = f32[5,4,64] parameter(1)
  ROOT c = f32[32,64,64] convolution(x, f), window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f
}
"""
    assert W.winograd_plan(_convs(few)[0]) is None   # few input features: the gemm path
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLAPY_FLAGS", "--xla_cpu_winograd=false")
        assert W.winograd_plan(a) is None and W.winograd_plan(c) is None


def _layer(lax, dn):
    def f(x, w, bias):
        y = lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=dn)
        return ((y + bias) ** 2).sum()
    return f


@pytest.mark.parametrize("dn", [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC")])
def test_conv1d_gradient_against_jax(dn):
    """jax.grad of a conv1d layer (window 5, 32 -> 48 features): the forward takes
    Winograd (default thresholds); results against JAX's."""
    rng = np.random.default_rng(7)
    nch = dn[0] == "NCH"
    x = rng.standard_normal((4, 32, 40) if nch else (4, 40, 32)).astype(np.float32)
    w = (rng.standard_normal((48, 32, 5) if nch else (5, 32, 48)) * 0.1).astype(np.float32)
    bias = rng.standard_normal((48, 1) if nch else (48,)).astype(np.float32)
    xg = xp.jit(xp.grad(_layer(xp.lax, dn), argnums=(0, 1, 2)))
    convs = _convs(xg.lower(x, w, bias).as_text())
    assert sum(W.winograd_plan(i) is not None for i in convs) >= 1
    got = xg(x, w, bias)
    want = jax.jit(jax.grad(_layer(jax.lax, dn), argnums=(0, 1, 2)))(x, w, bias)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)
