"""Reductions of at most elemental_reduce.UNROLL_LIMIT elements: straight-line code, except
where each element computes a math function (exp, log, tanh, ...), whose inlined code a
loop holds once instead of once per element (a softmax over 10 classes: one exp, not ten),
or, along the contiguous dimension alone (SHORT_VECTORS), one vector of the row's elements
(masked loads) combined lane by lane in the loop's order; row kernels store such short rows
as one masked vector. Row softmaxes and log-softmax cross-entropies of short rows against
the interpreter, with non-finite values, the same bits with and without the vector form, and
the emitted IR's count of exp calls."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.llvm import elemental_reduce
from xlapy.hlo.parser import parse


def _softmax_text(rows: int, n: int) -> str:
    return f"""HloModule softmax_rows

max_f32 {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}

add_f32 {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  x = f32[{rows},{n}] parameter(0)
  y = f32[{rows},{n}] parameter(1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max_f32
  bm = f32[{rows},{n}] broadcast(mx), dimensions={{0}}
  d = f32[{rows},{n}] subtract(x, bm)
  e = f32[{rows},{n}] exponential(d)
  s = f32[{rows}] reduce(e, zero), dimensions={{1}}, to_apply=add_f32
  bs = f32[{rows},{n}] broadcast(s), dimensions={{0}}
  p = f32[{rows},{n}] divide(e, bs)
  ls = f32[{rows}] log(s)
  bl = f32[{rows},{n}] broadcast(ls), dimensions={{0}}
  lp = f32[{rows},{n}] subtract(d, bl)
  t = f32[{rows},{n}] tanh(y)
  xe = f32[{rows},{n}] multiply(t, lp)
  xs = f32[{rows}] reduce(xe, zero), dimensions={{1}}, to_apply=add_f32
  ROOT out = (f32[{rows},{n}], f32[{rows}]) tuple(p, xs)
}}
"""


def _plain_softmax_text(rows: int, n: int) -> str:
    """exp(x - max) / sum: one row kernel, exp(x - max) kept in a row buffer."""
    return f"""HloModule softmax
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
max {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }}
ENTRY e {{
  x = f32[{rows},{n}] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max
  mb = f32[{rows},{n}] broadcast(mx), dimensions={{0}}
  d = f32[{rows},{n}] subtract(x, mb)
  e = f32[{rows},{n}] exponential(d)
  z = f32[] constant(0)
  s = f32[{rows}] reduce(e, z), dimensions={{1}}, to_apply=add
  sb = f32[{rows},{n}] broadcast(s), dimensions={{0}}
  ROOT r = f32[{rows},{n}] divide(e, sb)
}}
"""


def _softmax_inputs(rows: int, n: int, dtype=np.float32):
    rng = np.random.default_rng(rows * 100 + n)
    x = (4 * rng.standard_normal((rows, n))).astype(dtype)
    y = rng.standard_normal((rows, n)).astype(dtype)
    x[0, 0] = np.nan                      # a NaN row
    if rows > 2:
        x[1, :] = -np.inf                 # a row of -inf: 0/0
        x[2, -1] = np.inf                 # inf - inf
    y[-1, 0] = np.nan
    return x, y


@pytest.mark.parametrize("short_vectors", [True, False])
@pytest.mark.parametrize("unroll_math", [False, True])
@pytest.mark.parametrize("rows,n", [(100, 10), (7, 1), (5, 2), (9, 16), (4, 17), (33, 3)])
def test_short_row_softmax_matches_the_interpreter(cpu_check, monkeypatch, unroll_math,
                                                   short_vectors, rows, n):
    monkeypatch.setattr(elemental_reduce, "UNROLL_MATH", unroll_math)
    monkeypatch.setattr(elemental_reduce, "SHORT_VECTORS", short_vectors)
    got, want = cpu_check.run(_softmax_text(rows, n), *_softmax_inputs(rows, n))
    for g, w in zip(got, want):
        cpu_check.close(g, w, rtol=2e-6, atol=1e-6)


def _run_cpu(text: str, *args):
    comp = get_platform("cpu").compiler
    comp.clear_cache()
    return [np.ascontiguousarray(o) for o in flatten(comp.compile(parse(text)).run(*args))]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("rows,n", [(100, 10), (5, 2), (9, 16), (33, 3), (3, 15)])
def test_short_row_vectors_give_the_loops_bits(monkeypatch, dtype, rows, n):
    """The vector form computes the same values as the scalar loop, lane for lane, and
    combines them in the same order: every output bit for bit (NaN rows included), in the
    log-softmax's row kernel (an output loop and two hoisted sums) and the plain sums."""
    text = _softmax_text(rows, n).replace("f32", dtype)
    args = _softmax_inputs(rows, n, np.float32 if dtype == "f32" else np.float64)
    sums = 3 * np.random.default_rng(n).standard_normal((100, 10)).astype(args[0].dtype)
    sums[7, 3], sums[8, 0], sums[9, 9] = np.nan, np.inf, -np.inf
    results = {}
    for short in (False, True):
        monkeypatch.setattr(elemental_reduce, "SHORT_VECTORS", short)
        results[short] = (_run_cpu(text, *args)
                          + _run_cpu(_SUM_OF_EXPS.replace("f32", dtype), sums)
                          + _run_cpu(_plain_softmax_text(rows, n).replace("f32", dtype),
                                     args[0]))
    assert len(results[True]) == 4
    for a, b in zip(results[False], results[True]):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


_SUM_OF_EXPS = """HloModule sum_of_exps

add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[100,10] parameter(0)
  zero = f32[] constant(0)
  e = f32[100,10] exponential(x)
  ROOT s = f32[100] reduce(e, zero), dimensions={1}, to_apply=add_f32
}
"""


def _kernel_ir(tmp_path, monkeypatch, unroll_math: bool, short_vectors: bool,
               text: str = _SUM_OF_EXPS) -> str:
    """The unoptimized IR of a module (default: a sum of exps over rows of 10)."""
    monkeypatch.setattr(elemental_reduce, "UNROLL_MATH", unroll_math)
    monkeypatch.setattr(elemental_reduce, "SHORT_VECTORS", short_vectors)
    out = tmp_path / f"unroll{unroll_math}-short{short_vectors}"
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={out}")
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    comp = get_platform("cpu").compiler
    comp.clear_cache()
    comp.compile(parse(text))
    (ir_file,) = out.glob("*ir-no-opt.ll")
    return ir_file.read_text()


def _kernel_exp_calls(tmp_path, monkeypatch, unroll_math: bool) -> int:
    """Calls of the inlined scalar exp in the unoptimized IR of a sum of exps over rows of 10
    (without the short rows' vector form)."""
    text = _kernel_ir(tmp_path, monkeypatch, unroll_math, False)
    return len(re.findall(r'call float @"xlapy\.exp\.f32"', text))


def test_a_short_reduction_of_exps_is_a_loop(tmp_path, monkeypatch, cpu_check):
    assert _kernel_exp_calls(tmp_path, monkeypatch, False) == 1
    assert _kernel_exp_calls(tmp_path, monkeypatch, True) == 10
    x = np.random.default_rng(1).standard_normal((100, 10)).astype(np.float32)
    x[3, 4] = np.inf
    got, want = cpu_check.run(_SUM_OF_EXPS, x)
    cpu_check.close(got[0], want[0], rtol=2e-6)


def test_a_short_row_of_exps_is_one_masked_vector(tmp_path, monkeypatch, cpu_check):
    text = _kernel_ir(tmp_path, monkeypatch, False, True)
    assert not re.findall(r'call float @"xlapy\.exp\.f32"', text)
    assert len(re.findall(r'call <16 x float> @"xlapy\.exp\.v16f32"', text)) == 1
    # the row's 10 elements are read with a masked load: never the next row's, nor past
    # the end of the array on the last row
    (mask,) = re.findall(r'@"llvm\.masked\.load\.v16f32\.p0"\(ptr %"[^"]+", i32 4, '
                         r'<16 x i1> <([^>]*)>', text)
    assert mask.split(", ") == ["i1 1"] * 10 + ["i1 0"] * 6
    x = np.random.default_rng(2).standard_normal((100, 10)).astype(np.float32)
    x[5, 0] = np.nan
    got, want = cpu_check.run(_SUM_OF_EXPS, x)
    cpu_check.close(got[0], want[0], rtol=2e-6)


def test_a_short_softmax_row_kernel_is_vector_code(tmp_path, monkeypatch, cpu_check):
    """A softmax over rows of 10 is one row kernel whose exp(x - max) is kept in a row
    buffer for the output (row_kernel._tee): computed once per row as a vector, written to
    the buffer and read back masked, and stored masked: no scalar exp is left."""
    text = _kernel_ir(tmp_path, monkeypatch, False, True, _plain_softmax_text(100, 10))
    assert text.count("define internal void @\"k.") == 1  # (one kernel: the row kernel)
    assert not re.findall(r'call float @"xlapy\.exp\.f32"', text)
    assert len(re.findall(r'call <16 x float> @"xlapy\.exp\.v16f32"', text)) == 1
    assert len(re.findall(r'call void @"llvm\.masked\.store\.v16f32\.p0"', text)) == 2
    x = _softmax_inputs(100, 10)[0]
    got, want = cpu_check.run(_plain_softmax_text(100, 10), x)
    cpu_check.close(got[0], want[0], rtol=2e-6, atol=1e-7)


def test_a_target_with_its_own_math_library_keeps_the_loop():
    """The vector forms are xlapy's math functions: a target that supplies its own (the
    gpu's libdevice) keeps the scalar loop, whose functions are its own."""
    from llvmlite import ir

    from xlapy.backends.cpu.emitters.kernel_abi import CPU_TARGET
    from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
    from xlapy.backends.llvm import math as M
    from xlapy.backends.llvm.loop_kernel import emit_loop_kernel

    calls = []

    class OwnMath:
        kernel_function = staticmethod(CPU_TARGET.kernel_function)

        @staticmethod
        def math_function(module, name, ty):
            calls.append((name, str(ty)))
            return M.math_function(module, name, ty)

    module = run_cpu_pipeline(parse(_SUM_OF_EXPS))
    (kernel,) = [i for i in module.entry.instructions if i.opcode in ("fusion", "reduce")]
    for target, masked in ((CPU_TARGET, True), (OwnMath(), False)):
        llmod = ir.Module()
        emit_loop_kernel(target, llmod, kernel, "k")
        assert ("llvm.masked.load" in str(llmod)) == masked
    assert calls == [("exp", "float")]
