"""Winograd convolutions (passes/winograd_plan.py, emitters/conv_winograd.py) against the
interpreter: random 3x3 and 5x5 stride-1 convolutions (dimension orders, layouts, odd and size-1
sizes, sizes not multiples of the tile, SAME / VALID / asymmetric / negative padding, the
input gradient's reversed kernel), non-finite kernels and inputs (the other paths take
them: NaN exactly where the interpreter has it), fused epilogues (bias + relu, residual),
that the plan is taken for the ResNet block's convolutions, and jax.grad of a ResNet-style
block against JAX's."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _module as shared_module
from xlapy_tests_cpu_conv_cases import draw
from xlapy.backends.base import get_platform
from xlapy.backends.cpu.passes import winograd_plan as W
from xlapy.hlo import parse


def _case(rng):
    """A random 3x3 or 5x5 stride-1 2-D convolution Winograd takes: (lhs dims, lhs layout,
    rhs dims, rhs layout, out dims, out layout, window, dim_labels)."""
    r = int(rng.choice([3, 3, 5]))
    batch, c, k = (int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(2, 6)))
    pl = [int(rng.integers(-1, r)) for _ in range(2)]
    ph = [int(rng.integers(-1, r)) for _ in range(2)]
    insp = [int(rng.integers(1, 10)) for _ in range(2)]
    rev = [int(rng.random() < 0.3) for _ in range(2)]
    outsp = [insp[s] + pl[s] + ph[s] - (r - 1) for s in range(2)]
    if min(outsp) < 1:
        return None
    perms = [list(rng.permutation(4)) for _ in range(3)]

    def place(perm, a, b_, sp):
        d, chars = [0] * 4, [""] * 4
        d[perm[0]], d[perm[1]] = a[1], b_[1]
        chars[perm[0]], chars[perm[1]] = a[0], b_[0]
        for s in range(2):
            d[perm[2 + s]], chars[perm[2 + s]] = sp[s], str(s)
        return tuple(d), "".join(chars)

    ld, ll = place(perms[0], ("b", batch), ("f", c), insp)
    rd, rl = place(perms[1], ("i", c), ("o", k), (r, r))
    od, ol = place(perms[2], ("b", batch), ("f", k), outsp)
    layouts = [tuple(int(x) for x in rng.permutation(4)) if rng.random() < 0.4 else None
               for _ in range(3)]
    window = (f"size={r}x{r} pad={pl[0]}_{ph[0]}x{pl[1]}_{ph[1]} "
              f"rhs_reversal={rev[0]}x{rev[1]}")
    return ld, layouts[0], rd, layouts[1], od, layouts[2], window, f"{ll}_{rl}->{ol}"


def _module(cases, rng):
    return shared_module(cases, rng=rng, name="winograd")


def _convs(text):
    return [i for i in parse(text).entry.instructions if i.opcode == "convolution"]


def test_random_convolutions(cpu_check, any_size):
    rng = np.random.default_rng(17)
    cases = draw(_case, rng, 30)
    # and a few at sizes the tiles do not divide, with more features
    cases += [((2, 11, 7, 20), None, (3, 3, 20, 18), None, (2, 9, 5, 18), None,
               "size=3x3", "b01f_01io->b01f"),
              ((20, 13, 9, 2), None, (20, 3, 3, 17), None, (17, 13, 9, 2), None,
               "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "f01b_i01o->f01b"),
              ((1, 1, 1, 16), None, (3, 3, 16, 16), None, (1, 1, 1, 16), None,
               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f"),
              ((3, 14, 13, 32), None, (5, 5, 32, 20), None, (3, 14, 13, 20), None,
               "size=5x5 pad=2_2x2_2", "b01f_01io->b01f"),
              ((3, 14, 13, 20), None, (5, 5, 32, 20), None, (3, 14, 13, 32), None,
               "size=5x5 pad=2_2x2_2 rhs_reversal=1x1", "b01f_01oi->b01f")]
    m, args = _module(cases, rng)
    assert all(W.winograd_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_small_blocks(cpu_check, any_size, monkeypatch):
    """Blocks of 12 tiles (or, for F(1x2, 5x5), of a few tile rows of one image, whose
    input rows overlap the next block's): many blocks per image, a short last one."""
    from xlapy.backends.cpu.emitters import conv_winograd as CW
    monkeypatch.setattr(CW, "BLOCK_BYTES", 1)
    monkeypatch.setattr(CW, "MIN_BLOCK_TILES", 12)
    cases = [((3, 15, 13, 6), None, (5, 5, 6, 7), None, (3, 15, 13, 7), None,
              "size=5x5 pad=2_2x2_2", "b01f_01io->b01f"),
             ((2, 11, 4, 5), None, (5, 5, 5, 3), None, (2, 9, 2, 3), None,
              "size=5x5 pad=1_1x0_2", "b01f_01io->b01f"),
             ((2, 13, 11, 5), None, (3, 3, 5, 4), None, (2, 13, 11, 4), None,
              "size=3x3 pad=1_1x1_1", "b01f_01io->b01f")]
    rng = np.random.default_rng(31)
    m, args = _module(cases, rng)
    assert all(W.winograd_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_half_types(cpu_check, any_size, t):
    """bf16 / f16 operands widened by the transforms, sums in f32, a bf16 / f16 or f32
    result rounded once: small integers make F(2x2, 3x3)'s arithmetic exact (its
    coefficients are 0, +-1 and +-1/2), so 3x3 results compare bit for bit; F(1x2, 5x5)'s
    thirds and sixths are not exact in f32, so 5x5 results within a unit of the type."""
    rng = np.random.default_rng(29)
    m = O.ModuleText(name=f"winograd_{t}")
    args, checks = [], []
    cases = draw(_case, rng, 10)
    for k, (ld, ll, rd, rl, od, ol, window, labels) in enumerate(cases):
        out_t = "f32" if k % 3 == 2 else t
        pl = m.param(O.ShapeCase("", ld, ll).text(t))
        pr = m.param(O.ShapeCase("", rd, rl).text(t))
        args += [rng.integers(-2, 3, ld).astype(O.DTYPE[t]),
                 rng.integers(-2, 3, rd).astype(O.DTYPE[t])]
        m.op(O.ShapeCase("", od, ol).text(out_t),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}",
             f"conv {t}->{out_t} {labels} {window}")
        checks.append(O.EXACT if "size=3x3" in window else (O.CLOSE, 1e-2, 1e-2))
    assert all(W.winograd_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, checks)


def _poison(rng, args):
    """inf, -inf or NaN in a few elements of some kernels and some inputs."""
    out = []
    for k, a in enumerate(args):
        a = a.copy()
        if k % 3 != 2:
            flat = a.reshape(-1)
            idx = rng.choice(flat.size, size=max(1, flat.size // 30), replace=False)
            flat[idx] = rng.choice(np.array([np.inf, -np.inf, np.nan], a.dtype), idx.size)
        out.append(a)
    return out


def test_non_finite_operands(cpu_check, any_size):
    """Winograd would spread an inf or NaN over a whole tile (and multiply padding): the
    other paths run, and NaN / inf land where the interpreter puts them."""
    rng = np.random.default_rng(23)
    m, args = _module(draw(_case, rng, 12), rng)
    got, want = cpu_check.run(m.text(), *_poison(rng, args))
    bad = []
    for g, w, label in zip(got, want, m.labels):
        if not np.array_equal(np.isnan(g), np.isnan(w)) \
                or not np.allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True):
            bad.append(label)
    assert not bad, bad


def test_epilogue_fusions(cpu_check):
    """bias + relu and a residual add fused as the convolution's epilogue, run per output
    pixel by Winograd (default thresholds; odd spatial sizes: edge tiles)."""
    b, h, w, c, k = 4, 23, 21, 24, 40
    out = f"f32[{b},{h},{w},{k}]"
    text = f"""HloModule winograd_epilogue

ENTRY main {{
  x = f32[{b},{h},{w},{c}] parameter(0)
  f = f32[3,3,{c},{k}] parameter(1)
  bias = f32[{k}] parameter(2)
  res = {out} parameter(3)
  conv = {out} convolution(x, f), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
  bb = {out} broadcast(bias), dimensions={{3}}
  add = {out} add(conv, bb)
  zero = f32[] constant(0)
  zb = {out} broadcast(zero), dimensions={{}}
  relu = {out} maximum(add, zb)
  conv2 = {out} convolution(x, f), window={{size=3x3 pad=0_2x2_0}}, dim_labels=b01f_01io->b01f
  sum = {out} add(conv2, res)
  ROOT t = ({out}, {out}) tuple(relu, sum)
}}
"""
    assert all(W.winograd_plan(i) is not None for i in _convs(text))
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert exe.optimized_module.to_string().count("kind=kOutput") == 2
    rng = np.random.default_rng(5)
    args = [rng.standard_normal((b, h, w, c)).astype(np.float32),
            rng.standard_normal((3, 3, c, k)).astype(np.float32),
            rng.standard_normal(k).astype(np.float32),
            rng.standard_normal((b, h, w, k)).astype(np.float32)]
    got, want = cpu_check.run(text, *args)
    O.compare_outputs(got, want, ["relu(conv + bias)", "conv + residual"],
                      (O.CLOSE, 1e-4, 1e-4))
    # an inf in the input (Winograd's transforms would turn it into inf - inf = NaN): the
    # fusion's other paths, infinities where the interpreter has them and no NaN
    args[0][1, 5, 7, 3] = np.inf
    got, want = cpu_check.run(text, *args)
    for g, w in zip(got, want):
        assert np.isinf(w).any() and not np.isnan(w).any()
        assert np.array_equal(np.isnan(g), np.isnan(w))
        assert np.allclose(g, w, rtol=1e-4, atol=1e-4, equal_nan=True)


def _block(lax, numpy):
    def f(x, w1, w2, scale):
        y = lax.conv_general_dilated(x, w1, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = numpy.maximum(y * scale, 0.0)
        y = lax.conv_general_dilated(y, w2, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return numpy.sum(numpy.tanh(y + x) * x)
    return f


def test_resnet_block_gradient():
    """jax.grad of a ResNet-style block (two 3x3 convs, relu, residual) against JAX's: the
    forward convolutions and the input gradients take Winograd, the filter gradients not."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 12, 11, 32)).astype(np.float32)
    w1, w2 = ((rng.standard_normal((3, 3, 32, 32)) * 0.06).astype(np.float32)
              for _ in range(2))
    scale = rng.standard_normal(32).astype(np.float32)
    xg = xp.jit(xp.grad(_block(xp.lax, xp.numpy), argnums=(0, 1, 2)))
    convs = _convs(xg.lower(x, w1, w2, scale).as_text())
    taken = [W.winograd_plan(i) is not None for i in convs]
    assert len(convs) == 6 and sum(taken) == 4   # forward, input gradient: not the filter's
    got = xg(x, w1, w2, scale)
    want = jax.jit(jax.grad(_block(jax.lax, jax.numpy), argnums=(0, 1, 2)))(x, w1, w2, scale)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


def test_model_shapes_and_flag(monkeypatch):
    """The ResNet block's 16x32x32x64 3x3 convolution and its input gradient take
    Winograd, and the CNN's 5x5 conv2; --xla_cpu_winograd=false turns it off."""
    text = """HloModule m

ENTRY main {
  x = f32[16,32,32,64] parameter(0)
  f = f32[3,3,64,64] parameter(1)
  c = f32[16,32,32,64] convolution(x, f), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT g = f32[16,32,32,64] convolution(c, f),
    window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f
}
"""
    convs = _convs(text)
    plans = [W.winograd_plan(i) for i in convs]
    assert all(p is not None and p.tiles == 16 * 16 * 16 and (p.c, p.k) == (64, 64)
               for p in plans)
    cnn = """HloModule m

ENTRY main {
  x = f32[50,14,14,32] parameter(0)
  f = f32[5,5,32,64] parameter(1)
  x2 = f32[4,14,14,128] parameter(2)
  f2 = f32[5,5,128,64] parameter(3)
  x3 = f32[2,8,8,512] parameter(4)
  f3 = f32[3,3,512,64] parameter(5)
  c = f32[50,14,14,64] convolution(x, f), window={size=5x5 pad=2_2x2_2}, dim_labels=b01f_01io->b01f
  c2 = f32[4,14,14,64] convolution(x2, f2), window={size=5x5 pad=2_2x2_2},
    dim_labels=b01f_01io->b01f
  c3 = f32[2,8,8,64] convolution(x3, f3), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[50,14,14,64], f32[4,14,14,64], f32[2,8,8,64]) tuple(c, c2, c3)
}
"""
    conv2, wide, wide3 = _convs(cnn)
    assert W.winograd_plan(conv2).ms == (1, 2)   # the CNN's conv2: F(1x2, 5x5)
    assert W.winograd_plan(wide) is None          # beyond MAX_FEATURES: 5x5 over 64
    assert W.winograd_plan(wide3) is None         # and 3x3 over 256 input features
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_winograd=false")
    assert all(W.winograd_plan(i) is None for i in convs + [conv2])


def test_matrices_exact():
    """The transforms reproduce the 1-D correlation exactly (checked in rationals)."""
    for m, r in ((2, 3), (4, 3), (1, 5), (2, 5)):
        at, g, bt = W.matrices(m, r)
        for i in range(m):
            for k in range(r):
                for j in range(m + r - 1):
                    s = sum(at[i][p] * g[p][k] * bt[p][j] for p in range(m + r - 1))
                    assert s == (j == i + k)
