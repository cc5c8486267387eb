"""Gemm epilogue fusion (backends/cpu/gemm_epilogue.py): which regions it forms, what it
leaves alone, and programs compiled with it against the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu.passes.gemm_epilogue import KIND, GemmEpilogueFusion
from xlapy.hlo import parse, verify

f32 = np.float32


def _fusions(module):
    return [i for c in module.computations for i in c.instructions
            if i.opcode == "fusion" and i.attrs.get("kind") == KIND]


def _run_pass(text):
    m = parse(text)
    changed = GemmEpilogueFusion().run(m)
    verify(m)
    return m, changed


DENSE = """
HloModule dense
ENTRY main {
  x = f32[256,784] parameter(0)
  w = f32[784,512] parameter(1)
  b = f32[512] parameter(2)
  d = f32[256,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[256,512] broadcast(b), dimensions={1}
  v = f32[256,512] add(d, bb)
  z = f32[] constant(0)
  zb = f32[256,512] broadcast(z), dimensions={}
  ROOT h = f32[256,512] maximum(v, zb)
}
"""


def test_dense_bias_relu_becomes_one_output_fusion(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "auto")
    m, changed = _run_pass(DENSE)
    assert changed
    (fusion,) = _fusions(m)
    assert fusion is m.entry.root
    # the bias stays a vector operand: the broadcast is cloned into the fusion
    assert [o.shape.dims for o in fusion.operands] == [(256, 784), (784, 512), (512,)]
    ops = sorted(i.opcode for i in fusion.fused_computation.instructions)
    assert ops.count("dot") == 1 and "maximum" in ops and "add" in ops


def test_no_change_leaves_the_module_identical(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "blas")   # BLAS cannot run an epilogue
    before = parse(DENSE).to_string()
    m, changed = _run_pass(DENSE)
    assert not changed and m.to_string() == before and not _fusions(m)


def test_small_products_stay_with_blas_under_auto(monkeypatch):
    # 2048x24x32: 3.1M flops (BLAS under auto) but a result large enough for an epilogue
    small = DENSE.replace("256,784", "2048,24").replace("784,512", "24,32") \
        .replace("256,512", "2048,32").replace("f32[512]", "f32[32]")
    monkeypatch.setenv("XLAPY_GEMM", "auto")
    assert not _run_pass(small)[1]
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    assert _run_pass(small)[1]
    # at most dot_plan.SHALLOW_DEPTH deep (1024x16x64, 2.1M flops), the own gemm's direct
    # phase takes it under auto too
    shallow = DENSE.replace("256,784", "1024,16").replace("784,512", "16,64") \
        .replace("256,512", "1024,64").replace("f32[512]", "f32[64]")
    monkeypatch.setenv("XLAPY_GEMM", "auto")
    assert _run_pass(shallow)[1]


def test_dot_used_elsewhere_is_a_result_too(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    text = DENSE.replace("ROOT h = f32[256,512] maximum(v, zb)",
                         "h = f32[256,512] maximum(v, zb)\n  ROOT t = (f32[256,512], f32[256,512]) "
                         "tuple(h, d)")
    m, _ = _run_pass(text)
    (fusion,) = _fusions(m)
    root = fusion.fused_computation.root
    assert root.opcode == "tuple" and any(o.opcode == "dot" for o in root.operands)


def test_operands_that_depend_on_the_dot_another_way_stay_outside(monkeypatch):
    # d - rowmax(d): the row max is a reduction of d; fusing the subtract would need the
    # reduction before the gemm has finished
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    text = """
HloModule softmaxish
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ENTRY main {
  x = f32[512,32] parameter(0)
  w = f32[32,128] parameter(1)
  d = f32[512,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[] constant(-inf)
  r = f32[512] reduce(d, n), dimensions={1}, to_apply=mx
  rb = f32[512,128] broadcast(r), dimensions={0}
  e = f32[512,128] exponential(d)
  ROOT s = f32[512,128] subtract(e, rb)
}
"""
    m, changed = _run_pass(text)
    # exp(d) joins the dot; the subtract, which needs the row max, stays outside
    (fusion,) = _fusions(m)
    assert changed and fusion.fused_computation.root.opcode in ("exponential", "tuple")
    assert "subtract" not in {i.opcode for i in fusion.fused_computation.instructions}
    assert m.entry.root.opcode == "subtract"


def test_small_results_are_left_alone(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    text = DENSE.replace("256,512", "100,512").replace("256,784", "100,784")
    assert not _run_pass(text)[1]


def test_batched_dots_are_left_alone(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    text = """
HloModule batched
ENTRY main {
  a = f32[3,40,70] parameter(0)
  b = f32[3,70,50] parameter(1)
  d = f32[3,40,50] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT e = f32[3,40,50] exponential(d)
}
"""  # noqa: E501 (HLO text: one instruction a line)
    assert not _run_pass(text)[1]


def test_dense_on_3d_activations_takes_an_epilogue(monkeypatch):
    """x . W + residual with x [batch, seq, width]: the lhs's free dims collapse into the
    gemm's rows (dot_plan.row_plan); a 3-D x whose free dims do not collapse does not."""
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    text = """
HloModule dense3
ENTRY main {
  x = f32[4,256,128] parameter(0)
  w = f32[128,96] parameter(1)
  r = f32[4,256,96] parameter(2)
  d = f32[4,256,96] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  ROOT v = f32[4,256,96] add(r, d)
}
"""
    m, changed = _run_pass(text)
    assert changed and _fusions(m)[0] is m.entry.root
    # x [4, 128, 256] contracted over its middle dim: its free dims (0 and 2) have no one
    # row stride; the same memory read as [4, 256, 128] (layout {1,2,0}) has
    strided = text.replace("f32[4,256,128] parameter(0)", "f32[4,128,256] parameter(0)")
    strided = strided.replace("lhs_contracting_dims={2}", "lhs_contracting_dims={1}")
    assert not _run_pass(strided)[1]
    assert _run_pass(strided.replace("x = f32[4,128,256]", "x = f32[4,128,256]{1,2,0}"))[1]


def _programs():
    rng = np.random.default_rng(3)

    def r(*shape, dtype=f32):
        return rng.standard_normal(shape).astype(dtype)

    def mlp_step(w1, b1, w2, b2, x, y):
        def loss(w1, b1, w2, b2):
            relu = lambda v: v * (v > 0)
            h = relu(x @ w1 + b1)
            return xnp.sum((h @ w2 + b2 - y) ** 2)
        g = xp.grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2)
        return tuple(p - 0.01 * d for p, d in zip((w1, b1, w2, b2), g))

    gelu = lambda v: 0.5 * v * (1 + xnp.tanh(0.79788456 * (v + 0.044715 * v ** 3)))
    return {
        # tile edges in both directions (M, N not multiples of the 12 x 32 tile)
        "dense relu, edges": (lambda x, w, b: xnp.maximum(x @ w + b, 0.0),
                              (r(1001, 130), r(130, 77), r(77))),
        # few columns: the gemm computes C^T, its tiles are transposed
        "few columns (C^T)": (lambda x, w, b: xnp.tanh(x @ w + b),
                              (r(7001, 300), r(300, 10), r(10))),
        "gelu, transposed weight": (lambda x, w, b: gelu(x @ w.T + b),
                                    (r(512, 256), r(192, 256), r(192))),
        "f64": (lambda x, w: xnp.exp(-(x @ w) ** 2), (r(500, 100, dtype=np.float64),
                                                   r(100, 150, dtype=np.float64))),
        "dot also returned": (lambda x, w: (x @ w, xnp.sqrt(xnp.abs(x @ w)) * 2),
                              (r(960, 64), r(64, 80))),
        "bf16 result": (lambda x, w: (x @ w).astype(xnp.bfloat16), (r(320, 64), r(64, 256))),
        # x . W on [batch, sequence, width] (dot_plan.row_plan): an attention block's output
        # projection and residual, odd sizes, and a 4-D x with few columns (C^T tiles)
        "3-D x, residual": (lambda x, w, res: res + x @ w,
                            (r(3, 301, 64), r(64, 96), r(3, 301, 96))),
        "4-D x, few columns": (lambda x, w, b: xnp.tanh(x @ w + b),
                               (r(2, 5, 801, 40), r(40, 9), r(9))),
        "3-D x read transposed": (lambda x, w, b: xnp.maximum(
            xnp.transpose(x, (1, 0, 2)) @ w + b, 0.0), (r(67, 5, 48), r(48, 200), r(200))),
        "mlp step (masks stored as predicates)": (
            mlp_step, (r(100, 200) * f32(0.1), np.zeros(200, f32), r(200, 30) * f32(0.1),
                       np.zeros(30, f32), r(400, 100), r(400, 30))),
    }


@pytest.mark.parametrize("name", list(_programs()))
def test_programs_match_the_interpreter(name, monkeypatch):
    fn, args = _programs()[name]
    want = xp.jit(fn, backend="interpreter")(*args)
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")   # the own gemm (and its epilogues) everywhere
    compiled = xp.jit(fn).lower(*args).compile()
    assert f"kind={KIND}" in compiled.as_text()
    got = compiled(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        tol = 2e-2 if "bf16" in name else 1e-4
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)


def test_mlp_masks_are_predicates(monkeypatch):
    """The relu masks the backward pass needs are stored as pred (1 byte), not as f32."""
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    fn, args = _programs()["mlp step (masks stored as predicates)"]
    text = xp.jit(fn).lower(*args).compile().as_text()
    fusion_lines = [line for line in text.splitlines()
                    if f"kind={KIND}" in line and "ENTRY" not in line]
    assert any("pred[400,200]" in line for line in fusion_lines)


def test_concurrent_calls_give_identical_results(monkeypatch):
    """Threads calling one executable at once: the pool runs one job at a time (the others
    run their gemm chunks serially), each call has its own arena (gemm scratch included)."""
    import threading
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((512, 300)).astype(f32), \
        rng.standard_normal((300, 400)).astype(f32), rng.standard_normal(400).astype(f32)
    f = xp.jit(lambda x, w, b: xnp.tanh(x @ w + b))
    want = f(x, w, b)
    np.testing.assert_allclose(want, np.tanh(x @ w + b), rtol=1e-4, atol=1e-4)
    mismatches = []

    def work():
        for _ in range(20):
            if not np.array_equal(f(x, w, b), want):
                mismatches.append(1)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not mismatches
