"""Convolutions through xlapy's own gemm (emitters/conv.py, passes/conv_plan.py) against
the interpreter: random dimension orders and layouts, strides, padding (negative too),
lhs and rhs dilation, kernel reversal, feature and batch groups (size 1 and odd sizes),
1-D to 3-D; the forms autodiff emits for the input and filter gradients; and the plan's
choices (a strided view of the lhs, the kernel copied, outer row loops) each taken."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _MODEL_FORMS, _case, _depthwise_case, _module, draw
from xlapy.backends.cpu.passes.conv_plan import conv_plan, kblock_plan
from xlapy.hlo import parse


def _plans(text):
    mod = parse(text)
    return [conv_plan(i) for i in mod.entry.instructions if i.opcode == "convolution"]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_convolutions(cpu_check, seed):
    rng = np.random.default_rng(100 + seed)
    cases = draw(_case, rng, 40)
    m, args = _module(cases, seed=seed)
    plans = _plans(m.text())
    assert sum(p is not None for p in plans) >= 30  # the gemm path takes most of them
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_model_forms(cpu_check):
    m, args = _module(_MODEL_FORMS, seed=5)
    plans = _plans(m.text())
    assert all(p is not None for p in plans)
    assert plans[6].a_view and plans[7].a_view            # pointwise and its filter gradient
    assert plans[1].b_strides is None                     # input gradient: kernel copied
    assert plans[3].outer                                  # NCHW: a gemm per batch element
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_f64(cpu_check):
    m, args = _module(_MODEL_FORMS[:4], t="f64", seed=6)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-12, 1e-12))


def test_depthwise(cpu_check):
    from xlapy.backends.cpu.passes.conv_plan import depthwise_plan
    rng = np.random.default_rng(300)
    cases = draw(_depthwise_case, rng, 30)
    m, args = _module(cases, seed=9)
    mod = parse(m.text())
    assert all(depthwise_plan(i) is not None for i in mod.entry.instructions
               if i.opcode == "convolution")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_half_types(cpu_check, t):
    """bf16 / f16 convolutions on the gemm (sums in f32, rounded once); small integers
    make every sum exact, so the results compare bit for bit, f32 results too."""
    rng = np.random.default_rng(41)
    m = O.ModuleText(name=f"conv_{t}")
    args = []
    for k, (ld, ll, rd, rl, od, ol, window, labels, extra) in enumerate(_MODEL_FORMS):
        out_t = "f32" if k % 3 == 2 else t
        pl = m.param(O.ShapeCase("", ld, ll).text(t))
        pr = m.param(O.ShapeCase("", rd, rl).text(t))
        args += [rng.integers(-2, 3, ld).astype(O.DTYPE[t]),
                 rng.integers(-2, 3, rd).astype(O.DTYPE[t])]
        m.op(O.ShapeCase("", od, ol).text(out_t),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}{extra}",
             f"conv {t}->{out_t} {labels}{extra} {window}")
    assert all(p is not None for p in _plans(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


def test_single_input_feature(cpu_check):
    """A one-feature image's first layer on the direct kernel: the pixel broadcast across
    vectors of output features (32, 48), or lane by lane (20)."""
    from xlapy.backends.cpu.passes.conv_plan import depthwise_plan
    cases = [((3, 12, 11, 1), None, (5, 5, 1, 32), None, (3, 12, 11, 32), None,
              "size=5x5 pad=2_2x2_2", "b01f_01io->b01f", ""),
             ((2, 9, 9, 1), None, (3, 3, 1, 48), None, (2, 5, 5, 48), None,
              "size=3x3 stride=2x2 pad=1_1x1_1", "b01f_01io->b01f", ""),
             ((2, 1, 9, 9), None, (3, 3, 1, 20), None, (2, 7, 7, 20), None,
              "size=3x3", "bf01_01io->b01f", "")]
    m, args = _module(cases, seed=12)
    mod = parse(m.text())
    assert all(depthwise_plan(i) is not None for i in mod.entry.instructions
               if i.opcode == "convolution")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Convolutions run a few rows (conv.emit_conv_blocked) or contracting positions
    (conv.emit_conv_depth_blocked, conv_kblocked.py) of the patch matrix at a time, on
    threads even when small, compiled afresh (no cached objects)."""
    from xlapy.backends.cpu.emitters import conv, conv_batched, conv_kblocked
    from xlapy.backends.cpu.passes import conv_plan
    monkeypatch.setattr(conv, "BLOCK_BYTES", 1)
    monkeypatch.setattr(conv, "BLOCK_ROW_UNIT", 5)       # odd: blocks end mid-tile
    monkeypatch.setattr(conv, "MIN_DEPTH_BLOCK", 1)
    monkeypatch.setattr(conv_plan, "KBLOCK_BYTES", 1)    # one line per block
    monkeypatch.setattr(conv_plan, "KBLOCK_MIN_DEPTH", 1)   # (column-major: one position)
    monkeypatch.setattr(conv_kblocked, "PARALLEL_FLOPS", 0)
    monkeypatch.setattr(conv_batched, "PARALLEL_FLOPS", 0)
    monkeypatch.setattr(conv, "GEMM_PARALLEL_FLOPS", 0)
    monkeypatch.setattr(conv, "IM2COL_PARALLEL_ELEMENTS", 0)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    return conv


def test_row_blocks(cpu_check, tiny_blocks):
    """The blocked paths on random convolutions (f32), the model forms (f32 and bf16, some
    with f32 results) against the interpreter."""
    rng = np.random.default_rng(300)
    cases = draw(_case, rng, 30)
    m, args = _module(cases + list(_MODEL_FORMS), seed=3)
    plans = [p for p in _plans(m.text()) if p is not None]
    assert sum(bool(tiny_blocks.blocked_rows(p)) for p in plans) >= 10
    assert sum(bool(tiny_blocks.blocked_depth(p)) for p in plans) >= 6
    assert sum(kblock_plan(conv_plan(i), i.operands[1].shape, i.attrs["dim_labels"])
               is not None for i in parse(m.text()).entry.instructions
               if i.opcode == "convolution") >= 1
    assert sum(bool(p.outer) for p in plans) >= 3   # gemms per outer row, side by side
    assert sum(p.line_dims > 1 for p in plans) >= 3 and sum(p.plane for p in plans) >= 10
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))
    rng = np.random.default_rng(301)
    m = O.ModuleText(name="conv_blocks_bf16")
    args = []
    for k, (ld, ll, rd, rl, od, ol, window, labels, extra) in enumerate(_MODEL_FORMS[:6]):
        out_t = "f32" if k % 2 else "bf16"
        pl = m.param(O.ShapeCase("", ld, ll).text("bf16"))
        pr = m.param(O.ShapeCase("", rd, rl).text("bf16"))
        args += [rng.integers(-2, 3, ld).astype(O.DTYPE["bf16"]),
                 rng.integers(-2, 3, rd).astype(O.DTYPE["bf16"])]
        m.op(O.ShapeCase("", od, ol).text(out_t),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}{extra}",
             f"conv bf16->{out_t} {labels}{extra} {window}")
    assert sum(bool(tiny_blocks.blocked_rows(p)) for p in _plans(m.text())) >= 2
    assert sum(bool(tiny_blocks.blocked_depth(p)) for p in _plans(m.text())) >= 1
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


def test_row_blocks_with_epilogues(tiny_blocks, monkeypatch):
    """Bias, batch-norm scale and shift, relu, relu6 and a residual add fused onto the
    tiles of a blocked convolution (the tile rows moved by each block's first row), and
    the gradients through it (a depth-blocked filter gradient's epilogue on its last
    block's tiles), against JAX."""
    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    from xlapy.backends.cpu.passes import gemm_epilogue
    monkeypatch.setattr(gemm_epilogue, "MIN_ELEMENTS", 1)   # small results fused too

    def block(xnp_, lax):
        def f(w, s, t, x):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = xnp_.maximum(y * s + t, 0.0)
            z = lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return xnp_.minimum(xnp_.maximum(z + t + x, 0.0), 6.0)
        return f

    rng = np.random.default_rng(302)
    args = [rng.standard_normal((3, 3, 6, 6)).astype(np.float32) * 0.3,
            rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32),
            rng.standard_normal((2, 5, 7, 6)).astype(np.float32)]
    xf, jf = block(xnp, xp.lax), block(jnp, jax.lax)
    text = xp.jit(xf).lower(*args).compile().as_text()
    assert text.count("kind=kOutput") == 2 and "_epilogue" in text
    np.testing.assert_allclose(xp.jit(xf)(*args), jax.jit(jf)(*args), rtol=1e-4, atol=1e-4)

    def loss(f, np_):
        return lambda *a: np_.sum(np_.square(f(*a)))
    grad = xp.jit(xp.grad(loss(xf, xnp), argnums=(0, 3)))
    fused = [(tiny_blocks.blocked_rows(p), tiny_blocks.blocked_depth(p))
             for c in parse(grad.lower(*args).compile().as_text()).computations
             if c.name.endswith("_epilogue")
             for p in map(conv_plan, (i for i in c.instructions if i.opcode == "convolution"))]
    assert any(r for r, _ in fused) and any(d for _, d in fused)   # both blocked forms
    got = grad(*args)
    want = jax.jit(jax.grad(loss(jf, jnp), argnums=(0, 3)))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


def test_row_blocks_epilogue_transposed(cpu_check, tiny_blocks, monkeypatch):
    """A blocked convolution of few output features whose kernel has them outermost: the
    whole convolution's gemm computes C^T (its epilogue takes transposed tiles) while each
    block's gemm does not; the wrapper turns each block's tiles around. (A result with
    its features outermost is now computed as C^T by both: conv._swaps.)"""
    from xlapy.backends.cpu.passes import gemm_epilogue
    monkeypatch.setattr(gemm_epilogue, "MIN_ELEMENTS", 1)
    text = """HloModule conv_epilogue_transposed
ENTRY e {
  %a = f32[2,5,7,6]{3,2,1,0} parameter(0)
  %w = f32[3,3,6,6]{2,1,0,3} parameter(1)
  %t = f32[6] parameter(2)
  %c = f32[2,5,7,6]{3,2,1,0} convolution(%a, %w), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f
  %bt = f32[2,5,7,6]{3,2,1,0} broadcast(%t), dimensions={3}
  %s = f32[2,5,7,6]{3,2,1,0} add(%c, %bt)
  %zero = f32[] constant(0)
  %z = f32[2,5,7,6]{3,2,1,0} broadcast(%zero), dimensions={}
  ROOT %r = f32[2,5,7,6]{3,2,1,0} maximum(%s, %z)
}"""
    plan = _plans(text)[0]
    rows = tiny_blocks.blocked_rows(plan)
    assert rows and tiny_blocks.swapped_for(plan) and not tiny_blocks._swaps(plan, rows, 1)
    rng = np.random.default_rng(303)
    args = [rng.standard_normal((2, 5, 7, 6)).astype(np.float32),
            rng.standard_normal((3, 3, 6, 6)).astype(np.float32),
            rng.standard_normal(6).astype(np.float32)]
    from xlapy.backends.base import get_platform
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert "kind=kOutput" in exe.optimized_module.to_string()
    got, want = cpu_check.run(text, *args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_one_output_feature(cpu_check, t):
    """One to four output features on the direct kernel (conv_one_output.py): lhs features
    below, at and above a vector (tail lanes), strides, padding (negative too), lhs and rhs
    dilation, kernel reversal, 1-D to 3-D, interior and edge pixels, output layouts."""
    from xlapy.backends.cpu.passes.conv_plan import one_output_plan
    cases = [((3, 12, 11, 32), None, (5, 5, 1, 32), None, (3, 12, 11, 1), None,
              "size=5x5 pad=2_2x2_2 rhs_reversal=1x1", "b01f_01oi->b01f", ""),
             ((2, 9, 8, 19), None, (3, 2, 19, 1), None, (2, 5, 3, 1), None,
              "size=3x2 stride=2x2 pad=1_1x0_-1", "b01f_01io->b01f", ""),
             ((2, 7, 37), None, (3, 1, 37), None, (2, 4, 1), None,
              "size=3 pad=2_0 lhs_dilate=2 stride=3 rhs_dilate=2", "b0f_0oi->b0f", ""),
             ((1, 4, 5, 6, 5), None, (2, 2, 2, 1, 5), None, (1, 5, 6, 7, 1), None,
              "size=2x2x2 pad=1_1x1_1x1_1", "b012f_012oi->b012f", ""),
             ((2, 6, 6, 3), None, (3, 3, 1, 3), None, (2, 1, 6, 6), None,
              "size=3x3 pad=1_1x1_1", "b01f_01oi->bf01", ""),
             # two to four output features (a colour image's first layer's input gradient)
             ((2, 7, 6, 40), None, (4, 4, 3, 40), None, (2, 8, 7, 3), None,
              "size=4x4 pad=2_2x2_2 rhs_reversal=1x1", "b01f_01oi->b01f", ""),
             ((3, 9, 21), None, (3, 2, 21), None, (3, 3, 2), None,
              "size=3 stride=2 pad=0_-1", "b0f_0oi->b0f", ""),
             ((2, 5, 6, 17), None, (2, 3, 4, 17), None, (2, 10, 6, 4), (2, 1, 0, 3),
              "size=2x3 pad=1_1x1_1 lhs_dilate=2x1", "b01f_01oi->b01f", "")]
    m, args = _module(cases, t=t, seed=13)
    mod = parse(m.text())
    assert all(one_output_plan(i) is not None for i in mod.entry.instructions
               if i.opcode == "convolution")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-5, 1e-5))
