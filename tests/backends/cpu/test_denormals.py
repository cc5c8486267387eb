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


@pytest.mark.parametrize("n", [4, 16, 21, 64])
def test_bf16_minmax_of_subnormals_flushes_at_every_width(monkeypatch, n):
    """A bf16 subnormal widened to f32 by a shift and passed through maximum's or clamp's
    compare-and-select came back unflushed from the vectorized loop and flushed from the
    scalar one (fuzz hlo 14006398); the f32 -> bf16 rounding now flushes, as XLA's
    vcvtneps2bf16 does, at every width, and keeps IEEE subnormals with --xla_cpu_ftz=false."""
    import ml_dtypes
    text = f"""HloModule m
ENTRY e {{
  p = bf16[{n}] parameter(0)
  r = bf16[{n}] reduce-precision(p), exponent_bits=8, mantissa_bits=7
  ROOT c = bf16[{n}] clamp(r, p, r)
}}"""
    x = np.resize(np.array([9.18355e-41, -9.18355e-41, 1.5, -0.0], np.float32), n)
    x = x.astype(ml_dtypes.bfloat16)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=true")
    got = CpuCompiler().compile(parse(text)).run(x).astype(np.float32)
    want = np.where(np.abs(x.astype(np.float32)) < 1e-38, 0.0, x.astype(np.float32))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(x.astype(np.float32)))  # -0 from -sub
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_ftz=false")
    ieee = CpuCompiler().compile(parse(text)).run(x).astype(np.float32)
    np.testing.assert_array_equal(ieee, x.astype(np.float32))
