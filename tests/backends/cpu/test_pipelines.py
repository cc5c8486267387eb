"""The LLVM pipeline of each compiled part (compiler.part_pipelines, codegen.optimize): the
short "direct" pipeline where every loop is vector code already, -O3 elsewhere; results do
not depend on the choice."""

import re

import numpy as np
import pytest

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.split import split_module
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.hlo import parse

SOFTMAX = """HloModule softmax
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ENTRY e {
  x = f32[64,256] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,256] broadcast(mx), dimensions={0}
  d = f32[64,256] subtract(x, mb)
  e = f32[64,256] exponential(d)
  z = f32[] constant(0)
  s = f32[64] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[64,256] broadcast(s), dimensions={0}
  ROOT r = f32[64,256] divide(e, sb)
}"""

# a transposed add: a scalar loop nest whose inner loop LLVM's vectorizer handles
TRANSPOSED = """HloModule t
ENTRY e {
  x = f32[64,48] parameter(0)
  y = f32[48,64] parameter(1)
  t = f32[64,48] transpose(y), dimensions={1,0}
  ROOT r = f32[64,48] add(x, t)
}"""


def _pipelines(text: str) -> list[str]:
    from xlapy.backends.cpu.compiler import part_pipelines, scalar_functions
    em = ModuleEmitter(run_cpu_pipeline(parse(text)), 1, 10**12, use_threads=False)
    em.emit("xlapy_entry")
    return part_pipelines(split_module(em.llmod, "xlapy_entry", 1),
                          scalar_functions(em.llmod))


# a small column reduction (a bias gradient): strided float sums, which x86's vectorizer
# may not reorder
COLUMN_SUM = """HloModule c
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[100,10] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[10] reduce(x, z), dimensions={0}, to_apply=add
}"""


def test_vector_code_takes_the_direct_pipeline_scalar_loops_o3():
    assert _pipelines(SOFTMAX) == ["direct"]
    assert _pipelines(TRANSPOSED) == ["O3"]


def test_ordered_float_sums_take_the_direct_pipeline_on_x86(monkeypatch):
    from xlapy.backends.cpu import compiler
    monkeypatch.setattr(compiler, "ordered_fp_reductions", lambda: False)  # (x86's answer)
    assert _pipelines(COLUMN_SUM) == ["direct"]
    assert _pipelines(TRANSPOSED) == ["O3"]
    monkeypatch.setattr(compiler, "ordered_fp_reductions", lambda: True)   # (AArch64's)
    assert _pipelines(COLUMN_SUM) == ["O3"]


@pytest.mark.parametrize("text", [SOFTMAX, TRANSPOSED, COLUMN_SUM],
                         ids=["softmax", "transposed", "column-sum"])
def test_results_do_not_depend_on_the_pipeline(monkeypatch, cpu_check, text):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    rng = np.random.default_rng(0)
    module = parse(text)
    args = [rng.standard_normal(p.shape.dims).astype(np.float32)
            for p in module.entry.parameters]
    got = CpuCompiler().compile(parse(text)).run(*args)
    monkeypatch.setattr(codegen, "DIRECT_PIPELINE", False)
    o3 = CpuCompiler().compile(parse(text)).run(*args)
    cpu_check.same([got], [o3])
    cpu, interp = cpu_check.run(text, *args)
    np.testing.assert_allclose(cpu[0], interp[0], rtol=2e-6, atol=1e-6)


def test_dump_names_each_parts_pipeline(monkeypatch, tmp_path):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path}")
    CpuCompiler().compile(parse(SOFTMAX))
    text = next(tmp_path.glob("*.ir-with-opt.ll")).read_text()
    assert re.findall(r"^; optimized with the (\S+) pipeline", text, re.M) == ["direct"]


def test_unknown_pipeline_is_refused():
    mod = codegen.parse_ir('define void @"f"() {\n  ret void\n}\n')
    with pytest.raises(ValueError, match="unknown LLVM pipeline 'O5'"):
        codegen.optimize(mod, "O5")


# one elementwise instruction on its own (no fusion): rank 1, with a remainder of 1000 % 16
ALONE = """HloModule alone
ENTRY e {
  x = f32[1000] parameter(0)
  ROOT t = f32[1000] tanh(x)
}"""


def test_a_lone_elementwise_instruction_is_vector_code(monkeypatch, cpu_check):
    assert _pipelines(ALONE) == ["direct"]
    assert _pipelines(ALONE.replace("f32", "s32").replace("tanh", "negate")) == ["O3"]
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 4
    x[[0, 17, 999]] = [np.nan, np.inf, -0.0]
    cpu, interp = cpu_check.run(ALONE, x)
    np.testing.assert_allclose(cpu[0], interp[0], rtol=3e-6, atol=1e-7)
    assert np.isnan(cpu[0][0]) and cpu[0][17] == 1.0 and np.signbit(cpu[0][999])


def test_pipeline_switch_is_part_of_the_cache_key(monkeypatch):
    """A program compiled with the short pipeline is never served for -O3 (benchmarks flip
    codegen.DIRECT_PIPELINE in one process)."""
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    c = CpuCompiler()
    a = c.compile(parse(SOFTMAX))
    monkeypatch.setattr(codegen, "DIRECT_PIPELINE", False)
    b = c.compile(parse(SOFTMAX))
    assert a is not b and c.stats["compiles"] == 2
    assert c.compile(parse(SOFTMAX)) is b


# a random-bits-like u32 kernel of 6 elements (no vector form), inside a while loop
SMALL_WHILE = """HloModule w
cond { p = (s32[], u32[6]) parameter(0)  i = s32[] get-tuple-element(p), index=0
       n = s32[] constant(5)  ROOT lt = pred[] compare(i, n), direction=LT }
body { p = (s32[], u32[6]) parameter(0)  i = s32[] get-tuple-element(p), index=0
       x = u32[6] get-tuple-element(p), index=1  one = s32[] constant(1)
       j = s32[] add(i, one)  c = u32[] constant(2654435761)
       cb = u32[6] broadcast(c), dimensions={}
       m = u32[6] multiply(x, cb)  s = u32[] constant(13)  sb = u32[6] broadcast(s), dimensions={}
       r = u32[6] shift-right-logical(m, sb)  y = u32[6] xor(m, r)
       ROOT t = (s32[], u32[6]) tuple(j, y) }
ENTRY e {
  x = u32[6] parameter(0)  z = s32[] constant(0)
  t = (s32[], u32[6]) tuple(z, x)
  w = (s32[], u32[6]) while(t), condition=cond, body=body
  ROOT y = u32[6] get-tuple-element(w), index=1
}"""


def test_small_kernels_and_while_loops_take_the_direct_pipeline(cpu_check):
    """A kernel shorter than one vector and a while loop (data-dependent trip count) give
    LLVM's loop vectorizer nothing: they do not send their part through -O3."""
    assert _pipelines(SMALL_WHILE) == ["direct"]
    # the same kernel over 1000 elements still gets the vectorizer
    assert _pipelines(SMALL_WHILE.replace("u32[6]", "u32[1000]")) == ["O3"]
    x = np.arange(6, dtype=np.uint32) * np.uint32(977)
    cpu, interp = cpu_check.run(SMALL_WHILE, x)
    np.testing.assert_array_equal(cpu[0], interp[0])
