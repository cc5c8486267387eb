"""Denormal flushing (fpmode.py, --xla_cpu_ftz): compiled cpu code runs with denormals
flushed to zero, as XLA's CPU runtime runs it, on the calling thread and on the pool's
workers alike; the caller's own mode is restored; --xla_cpu_ftz=false keeps IEEE gradual
underflow."""

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.llvm import fpmode
from xlapy.hlo import parse

pytestmark = pytest.mark.skipif(not fpmode.supported(), reason="x86-64 and AArch64 only")

TINY = np.array([1e-10, 1e-39, -3e-39, 1.5e-38], np.float32)   # the middle two denormal

# big enough to run on the pool's workers (with more than one thread)
DOUBLE = """HloModule double
ENTRY e {
  x = f32[1048576] parameter(0)
  two = f32[] constant(2)
  t = f32[1048576] broadcast(two), dimensions={}
  ROOT y = f32[1048576] multiply(x, t)
}"""


def _compile(monkeypatch, ftz: bool):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_cpu_ftz={'true' if ftz else 'false'}")
    return CpuCompiler().compile(parse(DOUBLE), num_threads=2, parallel_threshold=1000)


def test_denormals_are_flushed_as_xla_does():
    jax = pytest.importorskip("jax")
    fns = [lambda x: x * 2, lambda x: x * np.float32(1e-30), lambda x: x - np.float32(1e-38)]
    for fn in fns:
        got = np.asarray(xp.jit(fn)(TINY))
        want = np.asarray(jax.jit(fn)(TINY))
        np.testing.assert_array_equal(got, want)
    e = np.array([-100.0, -88.0, -80.0], np.float32)   # exp underflows into denormals
    np.testing.assert_array_equal(np.asarray(xp.jit(xnp.exp)(e)),
                                  np.asarray(jax.jit(jax.numpy.exp)(e)))
    assert np.asarray(xp.jit(xnp.exp)(e))[0] == 0.0


def test_workers_flush_and_follow_the_callers_mode(monkeypatch):
    x = np.full(1 << 20, 1e-39, np.float32)
    exe = _compile(monkeypatch, True)
    # one kernel on the pool: run by the runtime's xlapy_launch (launch.py), which sets and
    # restores the mode as generated entries do
    assert exe.spec.launch is not None and exe.spec.launch.flush_denormals
    flushed = exe.run(x)
    assert not np.any(flushed)                          # every chunk, whichever thread ran it
    assert x[0] * np.float32(2) != 0                    # NumPy on this thread: still IEEE
    exe = _compile(monkeypatch, False)                  # the same workers, now without FTZ
    assert exe.spec.launch is not None and not exe.spec.launch.flush_denormals
    np.testing.assert_array_equal(exe.run(x), x * np.float32(2))
    assert not np.any(_compile(monkeypatch, True).run(x))


def test_the_callers_mode_is_restored():
    xp.jit(lambda x: x * 2)(TINY)
    assert TINY[1] * np.float32(2) != 0                   # NumPy on this thread: still IEEE


def test_ftz_off_keeps_gradual_underflow(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=false")
    xp.clear_caches()
    got = np.asarray(xp.jit(lambda x: x * 2)(TINY))
    np.testing.assert_array_equal(got, TINY * np.float32(2))
    xp.clear_caches()


def test_aarch64_mode_code_compiles_to_fpcr_accesses():
    """The AArch64 form (FPCR.FZ, bit 24), cross-compiled: this project's machines are x86.
    The module's triple picks it (ahead-of-time objects are made that way)."""
    import llvmlite.binding as llvm
    from llvmlite import ir
    try:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        target = llvm.Target.from_triple("aarch64-unknown-linux-gnu")
    except RuntimeError:
        pytest.skip("llvmlite without the AArch64 target")
    m = ir.Module()
    m.triple = "aarch64-unknown-linux-gnu"
    f = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "f")
    b = ir.IRBuilder(f.append_basic_block("entry"))
    fpmode.set_mode(b, fpmode.flush_denormals(b))
    b.ret_void()
    mod = llvm.parse_assembly(str(m))
    mod.verify()
    asm = target.create_target_machine().emit_assembly(mod)
    assert asm.count("msr\tFPCR") == 2 and "mrs\t" in asm and "#0x1000000" in asm


@pytest.mark.parametrize("t", ["bf16", "f32", "f64"])
@pytest.mark.parametrize("n", [4, 16, 21, 64])
def test_minmax_of_equal_subnormals_flushes_at_every_width(monkeypatch, t, n):
    """maximum/minimum/clamp read a subnormal as zero under DAZ (x86's max/min), but LLVM
    folds maximum(a, a) to a and its vector lowering can return an operand's bits: the
    vectorized loop gave the subnormal back where the scalar one gave 0 (fuzz hlo 14006398,
    XLA 0). Their results are now flushed at every width; with --xla_cpu_ftz=false they
    keep IEEE subnormals."""
    import ml_dtypes
    dt = {"bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}[t]
    eb, mb = {"bf16": (8, 7), "f32": (8, 20), "f64": (11, 50)}[t]
    tiny = {"bf16": 2.0 ** -127, "f32": 2.0 ** -130, "f64": 2.0 ** -1030}[t]  # subnormals
    text = f"""HloModule m
ENTRY e {{
  p = {t}[{n}] parameter(0)
  r = {t}[{n}] reduce-precision(p), exponent_bits={eb}, mantissa_bits={mb}
  c = {t}[{n}] clamp(r, p, r)
  x = {t}[{n}] maximum(p, r)
  y = {t}[{n}] minimum(r, p)
  ROOT o = ({t}[{n}], {t}[{n}], {t}[{n}]) tuple(c, x, y)
}}"""
    x = np.resize(np.array([tiny, -tiny], np.float64), n).astype(dt)
    assert x.astype(np.float64)[0] == np.float64(dt(tiny))  # (exact in each type: rp keeps it)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=true")
    out = [np.asarray(o).astype(np.float64)
           for o in CpuCompiler().compile(parse(text)).run_leaves(x)]
    for o in out:
        assert not np.any(o), o                                  # zeros of the input's sign
        np.testing.assert_array_equal(np.signbit(o), np.signbit(x.astype(np.float64)))
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=false")
    ieee = [np.asarray(o).astype(np.float64)
            for o in CpuCompiler().compile(parse(text)).run_leaves(x)]
    for o in ieee:
        np.testing.assert_array_equal(o, x.astype(np.float64))


@pytest.mark.parametrize("src,dst", [("f32", "bf16"), ("bf16", "f32")])
def test_bf16_conversions_keep_subnormals_everywhere(src, dst):
    """f32 <-> bf16 is bit arithmetic in compiled code (xlapy's and XLA's): a subnormal is
    kept with denormals flushed, and the interpreter's flushing mode (the reference the
    fuzzer judges compiled code by) says so too (fuzz c10, jax 16005391)."""
    import ml_dtypes
    from xlapy.backends.base import flatten, get_platform
    from xlapy.hlo.evaluator import Evaluator
    jax = pytest.importorskip("jax")
    x = np.array([5.8774718e-39, -1e-39, 1.0, 0.0], np.float32)
    if src == "bf16":
        x = x.astype(ml_dtypes.bfloat16)
    module = parse(f"HloModule m\nENTRY e {{\n  p = {src}[4] parameter(0)\n"
                   f"  ROOT c = {dst}[4] convert(p)\n}}")
    cpu = flatten(get_platform("cpu").compiler.compile(module).run(x))[0]
    ftz = flatten(Evaluator(flush_denormals=True).evaluate(module, [x]))[0]
    want = np.asarray(jax.jit(lambda v: v.astype(
        jax.numpy.bfloat16 if dst == "bf16" else jax.numpy.float32))(x))
    assert want[0] != 0 and want[1] != 0
    np.testing.assert_array_equal(np.asarray(cpu).view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(np.asarray(ftz).view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("op", ["multiply", "dot"])
def test_bf16_result_flushed_in_f32_before_its_rounding(op):
    """bf16 arithmetic runs in f32 registers: a product 1.17549e-38 * -0.996 is -1.1709e-38
    in f32, subnormal and flushed to -0 before the rounding to bf16 (which would round it
    up to the smallest normal bf16). Compiled code, XLA and the interpreter's flushing mode
    agree (fuzz c19, jax 27004049: an outer-product dot); the IEEE interpreter keeps the
    rounded normal."""
    import ml_dtypes
    from xlapy.backends.base import flatten, get_platform
    from xlapy.hlo.evaluator import Evaluator
    jax = pytest.importorskip("jax")
    bf16 = ml_dtypes.bfloat16
    x = np.array([1.17549e-38, 0.5, 3.0], bf16)
    y = np.array([-0.996094, 2.0, 1e-38], bf16)
    body = ("ROOT r = bf16[3] multiply(a, b)" if op == "multiply" else
            "ROOT r = bf16[3,3] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}")
    module = parse(f"HloModule m\nENTRY e {{\n  a = bf16[3] parameter(0)\n"
                   f"  b = bf16[3] parameter(1)\n  {body}\n}}")
    fn = (lambda a, b: a * b) if op == "multiply" else (lambda a, b: jax.numpy.outer(a, b))
    want = np.asarray(jax.jit(fn)(x, y))
    cpu = flatten(get_platform("cpu").compiler.compile(module).run(x, y))[0]
    ftz = flatten(Evaluator(flush_denormals=True).evaluate(module, [x, y]))[0]
    ieee = flatten(Evaluator().evaluate(module, [x, y]))[0]
    assert want.ravel()[0] == 0 and np.signbit(want.ravel()[0])
    assert np.float32(np.asarray(ieee).ravel()[0]) == np.float32(bf16(-1.17549e-38))
    for got in (cpu, ftz):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("n", [2, 64])
def test_divide_by_a_subnormal_constant_divides_by_zero(monkeypatch, t, n):
    """x / c for a subnormal power of two c (2^-127, 2^-1023): LLVM rewrote it as
    x * (1 / c), exact in IEEE, where the code runs with denormals read as zero and XLA
    divides by zero (fuzz jax 33004101: 0 / 2^-1023 was 0, XLA NaN). Scalar and vector
    loops; with --xla_cpu_ftz=false the division is IEEE's."""
    c = {"f32": "5.877471754111438e-39", "f64": "1.1125369292536007e-308"}[t]
    dt = {"f32": np.float32, "f64": np.float64}[t]
    text = f"""HloModule m
ENTRY e {{
  x = {t}[{n}] parameter(0)
  c = {t}[] constant({c})
  b = {t}[{n}] broadcast(c), dimensions={{}}
  ROOT d = {t}[{n}] divide(x, b)
}}"""
    x = np.resize(np.array([0.0, 1.0, -2.0, 0.0], dt), n)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=true")
    got = np.asarray(CpuCompiler().compile(parse(text)).run(x))
    with np.errstate(all="ignore"):
        want = x / dt(0.0)   # XLA's: the divisor read as +0
    np.testing.assert_array_equal(got, want)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=false")
    ieee = np.asarray(CpuCompiler().compile(parse(text)).run(x))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ieee, x / dt(float(c)))
