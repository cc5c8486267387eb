"""Fusion: kernel counts pinned for the issue's workloads, decisions carry reasons, results
are unchanged (cpu with fusion == interpreter without), and the pass is honest about change.

Kernel = an entry instruction that launches work (fusion, dot, reduce, scatter, ...), see
xlapy.passes.fusion.count_kernels.
"""

import pathlib

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.hlo import module_diff, parse, parse_file, verify
from xlapy.passes import CallInliner, FusionInliner, FusionPass, simplification_pipeline
from xlapy.passes.fusion import count_kernels
from xlapy.tools.compare import compare_outputs

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"
f32 = np.float32
rng = np.random.default_rng(0)


def optimized(module):
    run_cpu_pipeline(module, verify=True)
    return module


def kernels_of(fn, *args) -> tuple[int, list[str]]:
    m = optimized(xp.jit(fn).lower(*args).module)
    ops = [i.opcode + (":" + i.fused_computation.root.opcode if i.opcode == "fusion" else "")
           for i in m.entry.instructions
           if i.opcode not in ("parameter", "constant", "tuple", "get-tuple-element", "bitcast")]
    return count_kernels(m), ops


def softmax(x):
    m = xnp.max(x, axis=-1, keepdims=True)
    e = xnp.exp(x - m)
    return e / xnp.sum(e, axis=-1, keepdims=True)


def softmax_argmax(x, b):
    # the row sum of softmax and the argmax (a variadic reduce) over the same rows: merged
    # into one multi-output kernel, the argmax's root contributes its two elements, not its
    # operands (tf.argmax(softmax))
    return xnp.argmax(softmax(x + b), axis=1)


def layernorm_gelu(x, g, b):
    mu = xnp.mean(x, -1, keepdims=True)
    var = xnp.mean((x - mu) ** 2, -1, keepdims=True)
    y = (x - mu) / xnp.sqrt(var + 1e-5) * g + b
    return 0.5 * y * (1 + xnp.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))


def dense(x, w, b):
    return xnp.maximum(x @ w + b, 0.0)


def log_softmax_xent(logits, labels):
    m = xnp.max(logits, -1, keepdims=True)
    lse = xnp.log(xnp.sum(xnp.exp(logits - m), -1, keepdims=True)) + m
    return -xnp.mean(xnp.sum(labels * (logits - lse), -1))


def mnist_step(w, b, x, y):
    gw, gb = xp.grad(lambda w, b: log_softmax_xent(x @ w + b, y), argnums=(0, 1))(w, b)
    return w - 0.5 * gw, b - 0.5 * gb


def mlp_step(params, x, y):
    def loss(params):
        (w1, b1), (w2, b2) = params
        h = xnp.maximum(x @ w1 + b1, 0.0)
        return log_softmax_xent(h @ w2 + b2, y)
    grads = xp.grad(loss)(params)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def test_row_softmax_is_one_kernel():
    n, ops = kernels_of(softmax, rng.random((64, 100), f32))
    # row fusion: per row, max and sum of exp with the row in cache, then the row of output
    assert n == 1, ops
    assert ops == ["fusion:divide"]


def test_row_softmax_without_row_fusion_is_two_kernels(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_disable_hlo_passes=row-fusion")
    n, ops = kernels_of(softmax, rng.random((64, 100), f32))
    # one pass computing row max and row sum of exp (multi-output), one elementwise pass
    assert n == 2, ops
    assert ops == ["fusion:tuple", "fusion:divide"]


def test_rows_too_long_for_the_cache_stay_two_kernels():
    n, ops = kernels_of(softmax, rng.random((2, 32768), f32))   # 128 KB rows
    assert ops == ["fusion:tuple", "fusion:divide"]


def test_layernorm_gelu_is_one_kernel():
    n, ops = kernels_of(layernorm_gelu, rng.random((64, 100), f32), rng.random(100, f32),
                        rng.random(100, f32))
    assert n == 1, ops  # per row: mean, variance; then normalize + gelu


def test_dense_layer_is_gemm_plus_one_epilogue(monkeypatch):
    args = rng.random((128, 784), f32), rng.random((784, 512), f32), rng.random(512, f32)
    monkeypatch.setenv("XLAPY_GEMM", "blas")
    assert kernels_of(dense, *args) == (2, ["dot", "fusion:maximum"])
    # xlapy's own gemm (the default for this size) runs bias + relu on each finished tile
    monkeypatch.setenv("XLAPY_GEMM", "auto")
    m = optimized(xp.jit(dense).lower(*args).module)
    (fusion,) = [i for i in m.entry.instructions if i.opcode == "fusion"]
    assert count_kernels(m) == 1 and fusion.attrs["kind"] == "kOutput"
    assert sorted({i.opcode for i in fusion.fused_computation.instructions}) == [
        "add", "broadcast", "constant", "dot", "maximum", "parameter"]


def test_log_softmax_cross_entropy_kernels():
    n, ops = kernels_of(log_softmax_xent, rng.random((100, 10), f32), rng.random((100, 10), f32))
    # {max, sum exp} per row, then the per-row loss reduced to the mean: the reduction over
    # rows has a different output shape, so it is its own kernel
    assert n <= 3, ops


def test_mnist_sgd_step_kernels():
    n, ops = kernels_of(mnist_step, rng.random((784, 10), f32), rng.random(10, f32),
                        rng.random((100, 784), f32), rng.random((100, 10), f32))
    # logits (a dot), the weight update as one gemm (W - lr * x^T.g, gemm-update fusion)
    assert ops.count("dot") == 1 and ops.count("custom-call") == 1
    assert n <= 6, ops  # + row reductions (1 multi-output kernel), dlogits, bias update


def test_mlp_training_step_kernels(monkeypatch):
    params = [(rng.random((784, 128), f32), rng.random(128, f32)),
              (rng.random((128, 10), f32), rng.random(10, f32))]
    args = params, rng.random((512, 784), f32), rng.random((512, 10), f32)
    monkeypatch.setenv("XLAPY_GEMM", "blas")
    n, ops = kernels_of(mlp_step, *args)
    # 2 forward dots, dh, and the two weight gradients fused with their updates (gemms)
    assert ops.count("dot") == 3 and ops.count("custom-call") == 2
    assert n <= 11, ops  # + relu epilogue, row reductions, dlogits, relu grad, 2 bias updates
    # xlapy's gemm: the first layer's dot (512x784x128) carries bias + relu, the mask
    # stored as a predicate for the backward pass; dh (512x10x128) is too small a product
    # and the second layer's result (512x10) too small a result for an epilogue
    monkeypatch.setenv("XLAPY_GEMM", "auto")
    n_own, ops = kernels_of(mlp_step, *args)
    assert ops.count("fusion:tuple") == 1 and ops.count("dot") == 2, ops
    assert n_own == n - 1, ops


@pytest.mark.parametrize("name,bound", [("softmax.hlo", 6), ("layernorm_gelu_tanh.hlo", 2),
                                        ("layernorm_gelu_erf.hlo", 2), ("attention.hlo", 4),
                                        ("log_softmax_cross_entropy.hlo", 4)])
def test_jax_modules_kernel_counts(name, bound):
    m = optimized(parse_file(CORPUS / name))
    assert count_kernels(m) <= bound, m.entry.to_string(print_metadata=False)


def test_decisions_carry_reasons_and_are_logged(caplog):
    m = parse_file(CORPUS / "mlp_train_step.hlo")
    CallInliner().run(m)
    FusionInliner(all_fusions=True).run(m)
    simplification_pipeline().run(m)
    decisions = []
    with caplog.at_level("DEBUG", logger="xlapy.passes.fusion"):
        FusionPass(decisions).run(m)
    verify(m)
    assert decisions and all(isinstance(r, str) and r for _, _, _, r in decisions)
    reasons = {r for _, _, fused, r in decisions if not fused}
    assert any("parameter" in r for r in reasons)
    assert any("dot" in r for r in reasons)  # dot is never fused into (gemm)
    assert "not fused" in caplog.text and "fused:" in caplog.text


def test_expensive_producer_with_an_unfusible_user_is_not_duplicated():
    m = parse("""HloModule m
ENTRY e {
  x = f32[8,8] parameter(0)
  w = f32[8,8] parameter(1)
  e = f32[8,8] exponential(x)
  d = f32[8,8] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[8,8] negate(e)
  ROOT t = (f32[8,8], f32[8,8]) tuple(d, n)
}
""")
    decisions = []
    FusionPass(decisions).run(m)
    verify(m)
    assert any(p == "e" and not fused and "cannot fuse it" in r for _, p, fused, r in decisions)
    assert sum(1 for i in m.entry.instructions if i.opcode == "exponential") == 1


def test_fusion_reports_no_change_and_leaves_module_identical():
    text = """HloModule m
ENTRY e {
  x = f32[8,8] parameter(0)
  w = f32[8,8] parameter(1)
  ROOT d = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    m = parse(text)
    assert FusionPass().run(m) is False
    assert module_diff(m, parse(text)) is None


@pytest.mark.parametrize("fn,make", [
    (softmax, lambda: (rng.standard_normal((16, 33)).astype(f32),)),
    (softmax_argmax, lambda: (rng.standard_normal((64, 10)).astype(f32),
                              rng.standard_normal(10).astype(f32))),
    (layernorm_gelu, lambda: (rng.standard_normal((16, 33)).astype(f32),
                              rng.standard_normal(33).astype(f32),
                              rng.standard_normal(33).astype(f32))),
    (mnist_step, lambda: (rng.standard_normal((20, 10)).astype(f32),
                          rng.standard_normal(10).astype(f32),
                          rng.standard_normal((7, 20)).astype(f32),
                          rng.random((7, 10)).astype(f32))),
], ids=["softmax", "softmax_argmax", "layernorm_gelu", "mnist_step"])
def test_fused_results_match_unfused_interpreter(fn, make):
    args = make()
    module = xp.jit(fn).lower(*args).module
    want = flatten(get_platform("interpreter").compiler.compile(module).run(*args))
    got = flatten(get_platform("cpu").compiler.compile(module).run(*args))
    reports = compare_outputs(want, got)
    assert all(r.ok for r in reports), [r.line() for r in reports]


def _mixing_rounds(rounds: int) -> str:
    """A hash-like DAG: every value has two users, x0 += x1; x1 = rotl(x1, 13) ^ x0."""
    lines = ["HloModule m", "ENTRY e {", "  a0 = u32[64] parameter(0)",
             "  b0 = u32[64] parameter(1)", "  c13 = u32[] constant(13)",
             "  c19 = u32[] constant(19)",
             "  s13 = u32[64] broadcast(c13), dimensions={}",
             "  s19 = u32[64] broadcast(c19), dimensions={}"]
    for r in range(rounds):
        a, b = f"a{r}", f"b{r}"
        lines += [f"  a{r + 1} = u32[64] add({a}, {b})",
                  f"  l{r} = u32[64] shift-left({b}, s13)",
                  f"  h{r} = u32[64] shift-right-logical({b}, s19)",
                  f"  o{r} = u32[64] or(l{r}, h{r})",
                  f"  b{r + 1} = u32[64] xor(o{r}, a{r + 1})"]
    lines += [f"  ROOT t = u32[64] xor(a{rounds}, b{rounds})", "}"]
    return "\n".join(lines)


def test_dag_with_shared_values_fuses_whole_each_value_once():
    """A consumer absorbs the producers it exposes latest-first, so a value shared by two
    users inside the kernel is fused once (before: copies of shared values piled up,
    kernels split at the size limit and compile time grew exponentially with depth)."""
    m = parse(_mixing_rounds(40))
    simplification_pipeline().run(m)
    adds_before = sum(1 for i in m.entry.instructions if i.opcode == "add")
    assert FusionPass().run(m)
    verify(m)
    assert count_kernels(m) == 1
    fused = m.entry.root.fused_computation
    assert sum(1 for i in fused.instructions if i.opcode == "add") == adds_before == 40
    x, y = rng.integers(0, 2 ** 32, (2, 64), dtype=np.uint32)
    module = parse(_mixing_rounds(40))
    want = flatten(get_platform("interpreter").compiler.compile(module).run(x, y))
    got = flatten(get_platform("cpu").compiler.compile(module).run(x, y))
    np.testing.assert_array_equal(want[0], got[0])


def test_same_width_bitcast_convert_fuses():
    m = parse("""HloModule m
ENTRY e {
  x = u32[16] parameter(0)
  c = u32[] constant(9)
  s = u32[16] broadcast(c), dimensions={}
  sh = u32[16] shift-right-logical(x, s)
  f = f32[16] bitcast-convert(sh)
  ROOT n = f32[16] negate(f)
}
""")
    FusionPass().run(m)
    verify(m)
    assert count_kernels(m) == 1
