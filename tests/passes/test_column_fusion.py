"""Column fusion: HLO text in, HLO text out; the cases it must leave alone; values unchanged
on the interpreter, and the cpu backend's multi-output column kernel against the
interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import module_diff, parse, verify
from xlapy.passes.column_fusion import ColumnFusion
from xlapy.passes.fusion import count_kernels

ADD = """
%add (a: {t}[], b: {t}[]) -> {t}[] {{
  %a = {t}[] parameter(0)
  %b = {t}[] parameter(1)
  ROOT %s = {t}[] add(%a, %b)
}}
"""


def backward_module(rows=8, cols=1024, t="f32", s_reads_e=False, via_dot=False,
                    e_reads="a, b"):
    """E: g = a * (b + bias > 0) (the relu gradient); S: bias - 0.01 * sum(g, rows)."""
    x = f"{t}[{rows},{cols}]"
    v = f"{t}[{cols}]"
    e_body = f"""%fused_e (p0: {x}, p1: {x}, p2: {v}) -> {x} {{
  %p0 = {x} parameter(0)
  %p1 = {x} parameter(1)
  %p2 = {v} parameter(2)
  %bb = {x} broadcast(%p2), dimensions={{1}}
  %h = {x} add(%p1, %bb)
  %z = {t}[] constant(0)
  %zb = {x} broadcast(%z), dimensions={{}}
  %m = pred[{rows},{cols}] compare(%h, %zb), direction=GT
  %mf = {x} convert(%m)
  ROOT %g = {x} multiply(%p0, %mf)
}}
"""
    if s_reads_e:
        s_body = f"""%fused_s (q0: {v}, q1: {x}) -> {v} {{
  %q0 = {v} parameter(0)
  %q1 = {x} parameter(1)
  %z = {t}[] constant(0)
  %r = {v} reduce(%q1, %z), dimensions={{0}}, to_apply=%add
  %lr = {t}[] constant(0.01)
  %lrb = {v} broadcast(%lr), dimensions={{}}
  %u = {v} multiply(%lrb, %r)
  ROOT %n = {v} subtract(%q0, %u)
}}
"""
    else:
        s_body = f"""%fused_s (q0: {v}, q1: {x}, q2: {x}) -> {v} {{
  %q0 = {v} parameter(0)
  %q1 = {x} parameter(1)
  %q2 = {x} parameter(2)
  %bb = {x} broadcast(%q0), dimensions={{1}}
  %h = {x} add(%q2, %bb)
  %z = {t}[] constant(0)
  %zb = {x} broadcast(%z), dimensions={{}}
  %m = pred[{rows},{cols}] compare(%h, %zb), direction=GT
  %mf = {x} convert(%m)
  %g = {x} multiply(%q1, %mf)
  %r = {v} reduce(%g, %z), dimensions={{0}}, to_apply=%add
  %lr = {t}[] constant(0.01)
  %lrb = {v} broadcast(%lr), dimensions={{}}
  %u = {v} multiply(%lrb, %r)
  ROOT %n = {v} subtract(%q0, %u)
}}
"""
    if via_dot:      # S reads a value computed from E by a dot: fusing would make a cycle
        s_call = (f"  %w = {t}[{cols},{cols}] parameter(3)\n"
                  f"  %d = {x} dot(%e, %w), lhs_contracting_dims={{1}}, "
                  "rhs_contracting_dims={0}\n"
                  f"  %s = {v} fusion(%bias, %d, %b), kind=kLoop, calls=%fused_s\n")
        extra_param = f", w: {t}[{cols},{cols}]"
    elif s_reads_e:
        s_call = f"  %s = {v} fusion(%bias, %e), kind=kLoop, calls=%fused_s\n"
        extra_param = ""
    else:
        s_call = f"  %s = {v} fusion(%bias, %a, %b), kind=kLoop, calls=%fused_s\n"
        extra_param = ""
    c_param = f", c: {x}" if e_reads != "a, b" else ""
    c_decl = f"  %c = {x} parameter({4 if via_dot else 3})\n" if c_param else ""
    e_ops = "%a, %b" if e_reads == "a, b" else "%c, %c"
    return f"""HloModule backward
{ADD.format(t=t)}
{e_body}
{s_body}
ENTRY %main (a: {x}, b: {x}, bias: {v}{extra_param}{c_param}) -> ({x}, {v}) {{
  %a = {x} parameter(0)
  %b = {x} parameter(1)
  %bias = {v} parameter(2)
{c_decl}  %e = {x} fusion({e_ops}, %bias), kind=kLoop, calls=%fused_e
{s_call}  ROOT %out = ({x}, {v}) tuple(%e, %s)
}}
"""


def _interp(module, *args):
    return get_platform("interpreter").compiler.compile(module).run(*args)


def _args(rows, cols, t="f32", extra=0):
    rng = np.random.default_rng(0)
    dt = np.dtype(t.replace("f", "float"))
    return [rng.standard_normal((rows, cols)).astype(dt),
            rng.standard_normal((rows, cols)).astype(dt),
            rng.standard_normal(cols).astype(dt)] + \
        [rng.standard_normal((rows, cols)).astype(dt) for _ in range(extra)]


@pytest.mark.parametrize("s_reads_e", [False, True], ids=["siblings", "S reads E"])
def test_gradient_and_bias_gradient_become_one_kernel(s_reads_e):
    text = backward_module(s_reads_e=s_reads_e)
    before, after = parse(text), parse(text)
    assert count_kernels(before) == 2
    assert ColumnFusion().run(after) is True
    verify(after)
    assert count_kernels(after) == 1
    fused = [i for i in after.entry.instructions if i.opcode == "fusion"]
    assert len(fused) == 1 and fused[0].shape.is_tuple
    body = fused[0].fused_computation
    assert body.root.opcode == "tuple" and len(body.root.operands) == 2
    # the product the reduce sums and E's output are one instruction, computed once
    assert sum(i.opcode == "multiply" and i.shape.rank == 2 for i in body.instructions) == 1
    assert sorted(o.name for o in fused[0].operands) == ["a", "b", "bias"]
    reparsed = parse(after.to_string())
    verify(reparsed)
    args = _args(8, 1024)
    for got, want in zip(_interp(after, *args), _interp(before, *args)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["few columns", "cycle through a dot", "only a vector shared"])
def test_left_alone(case):
    if case == "few columns":
        text = backward_module(cols=256)      # the merged kernel would have one block
    elif case == "cycle through a dot":
        text = backward_module(via_dot=True)
    else:
        text = backward_module(e_reads="c")   # E reads c and bias, S reads a, b and bias
    module = parse(text)
    assert ColumnFusion().run(module) is False
    assert module_diff(parse(text), module) is None   # "no change" means identical


SHAPES = [(8, 1024, "f32"), (3, 1000, "f32"), (257, 600, "f32"), (5, 2048, "f64")]


@pytest.mark.parametrize("rows,cols,t", SHAPES, ids=[f"{r}x{c}-{t}" for r, c, t in SHAPES])
@pytest.mark.parametrize("s_reads_e", [False, True], ids=["siblings", "S reads E"])
def test_cpu_multi_output_column_kernel_matches_the_interpreter(rows, cols, t, s_reads_e):
    text = backward_module(rows=rows, cols=cols, t=t, s_reads_e=s_reads_e)
    args = _args(rows, cols, t)
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert count_kernels(exe.optimized_module) == 1
    got, want = exe.run(*args), _interp(parse(text), *args)
    np.testing.assert_array_equal(got[0], want[0])
    tol = 1e-12 if t == "f64" else 1e-5
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)


def test_mlp_backward_merges_both_bias_gradients(monkeypatch):
    # with BLAS gemms the gradients are elementwise kernels of their own, which column
    # fusion merges with the bias gradients; with xlapy's gemm they are gemm epilogues
    monkeypatch.setenv("XLAPY_GEMM", "blas")
    import xlapy as xp
    import xlapy.numpy as xnp

    def loss(w1, b1, w2, b2, x, y):
        h = xnp.maximum(x @ w1 + b1, 0)
        return xnp.sum((h @ w2 + b2 - y) ** 2)

    rng = np.random.default_rng(0)
    f32 = np.float32
    args = (rng.standard_normal((64, 512)).astype(f32) * f32(0.05), np.zeros(512, f32),
            rng.standard_normal((512, 512)).astype(f32) * f32(0.05), np.zeros(512, f32),
            rng.standard_normal((16, 64)).astype(f32), rng.standard_normal((16, 512)).astype(f32))
    step = xp.jit(xp.grad(loss, argnums=(0, 1, 2, 3)))
    compiled = step.lower(*args).compile()
    tuples = [i for i in compiled.executable.optimized_module.entry.instructions
              if i.opcode == "fusion" and i.shape.is_tuple
              and any(s.rank == 2 for s in i.shape.tuple_shapes)
              and any(s.rank == 1 for s in i.shape.tuple_shapes)]
    # dlogits + b2's gradient, relu gradient + b1's gradient
    assert len(tuples) == 2, compiled.as_text()
    want = xp.jit(xp.grad(loss, argnums=(0, 1, 2, 3)), backend="interpreter")(*args)
    for g, w in zip(compiled(*args), want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_outputs_written_in_place_can_still_be_read_by_later_kernels():
    # the merged kernel writes both results straight into the caller's output buffers;
    # a later kernel reads one of them from there
    text = backward_module(rows=6, cols=640).replace(
        "  ROOT %out = (f32[6,640], f32[640]) tuple(%e, %s)",
        "  %n = f32[6,640] negate(%e)\n"
        "  ROOT %out = (f32[6,640], f32[640], f32[6,640]) tuple(%e, %s, %n)").replace(
        "-> (f32[6,640], f32[640]) {", "-> (f32[6,640], f32[640], f32[6,640]) {")
    args = _args(6, 640)
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert any(i.opcode == "fusion" and i.shape.is_tuple
               for i in exe.optimized_module.entry.instructions)
    got, want = exe.run(*args), _interp(parse(text), *args)
    assert len(got) == 3
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[2], -got[0])


def test_cpu_pipeline_leaves_reductions_the_column_kernel_cannot_take():
    # a reducer that is not a single associative op (a maximum written as a select, exact
    # in any order): the cpu column kernel does not take it, so the merged kernel could not
    # be emitted; the cpu pipeline must leave the pair alone
    text = backward_module(rows=4, cols=1024).replace(
        "  ROOT %s = f32[] add(%a, %b)",
        "  %gt = pred[] compare(%a, %b), direction=GT\n"
        "  ROOT %s = f32[] select(%gt, %a, %b)")
    args = _args(4, 1024)
    exe = get_platform("cpu").compiler.compile(parse(text))
    assert not any(i.opcode == "fusion" and i.shape.is_tuple
                   for i in exe.optimized_module.entry.instructions)
    got, want = exe.run(*args), _interp(parse(text), *args)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
