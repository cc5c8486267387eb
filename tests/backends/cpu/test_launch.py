"""Programs that are one kernel on the thread pool run through the runtime's precompiled
xlapy_launch instead of an entry function of their own (launch.py)."""

import ctypes
import pickle

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu import compiler as cpu_compiler
from xlapy.backends.cpu import launch
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.executable import CpuExecutable
from xlapy.backends.cpu.jit import threads_available
from xlapy.backends.llvm import fpmode
from xlapy.hlo import parse

pytestmark = pytest.mark.skipif(not threads_available(), reason="no thread pool here")

SOFTMAX = """HloModule softmax
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[512,256] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[512] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mb = f32[512,256] broadcast(m), dimensions={0}
  d = f32[512,256] subtract(x, mb)
  ex = f32[512,256] exponential(d)
  zero = f32[] constant(0)
  s = f32[512] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sb = f32[512,256] broadcast(s), dimensions={0}
  ROOT y = f32[512,256] divide(ex, sb)
}"""

# two outputs, one of them the parameter itself: a copy in the entry, so no launch
WITH_COPY = """HloModule with_copy
ENTRY e {
  x = f32[262144] parameter(0)
  y = f32[262144] add(x, x)
  ROOT t = (f32[262144], f32[262144]) tuple(y, x)
}"""

# a matrix product and an elementwise kernel: more than one piece of work
TWO_STEPS = """HloModule two_steps
ENTRY e {
  a = f32[128,128] parameter(0)
  b = f32[128,128] parameter(1)
  d = f32[128,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[128,128] sine(d)
}"""


def _compile(text):
    return CpuCompiler().compile(parse(text), num_threads=2, parallel_threshold=1000)


def test_one_pool_kernel_has_no_entry_and_matches_the_interpreter():
    exe = _compile(SOFTMAX)
    got = exe.spec.launch
    assert isinstance(got, launch.Launch)
    assert got.n == 512 and got.sources == ((launch.OUT, 0), (launch.PARAM, 0))
    assert exe._code.engine.get_function_address("xlapy_entry") == 0
    x = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32) * 10
    want = get_platform("interpreter").compiler.compile(parse(SOFTMAX)).run(x)
    np.testing.assert_allclose(exe.run(x), want, rtol=2e-6, atol=1e-7)
    # the plain ctypes path (no trampoline) passes the descriptor too
    exe._trampoline = None
    np.testing.assert_allclose(exe.run(x), want, rtol=2e-6, atol=1e-7)


def test_programs_with_other_work_keep_their_entry():
    for text in (WITH_COPY, TWO_STEPS):
        exe = _compile(text)
        assert exe.spec.launch is None
        assert exe._code.engine.get_function_address("xlapy_entry") != 0
    x = np.arange(262144, dtype=np.float32)
    y, same = _compile(WITH_COPY).run(x)
    np.testing.assert_array_equal(y, x + x)
    np.testing.assert_array_equal(same, x)


def test_switched_off_gives_an_entry_and_the_same_result(monkeypatch):
    x = np.random.default_rng(1).standard_normal((512, 256)).astype(np.float32)
    launched = _compile(SOFTMAX).run(x)
    monkeypatch.setattr(cpu_compiler, "LAUNCH_SINGLE_KERNELS", False)
    exe = _compile(SOFTMAX)
    assert exe.spec.launch is None
    np.testing.assert_array_equal(exe.run(x), launched)


def test_the_spec_survives_the_disk_cache_round_trip():
    exe = _compile(SOFTMAX)
    spec = pickle.loads(pickle.dumps(exe.spec))
    again = CpuExecutable(parse(SOFTMAX), spec)
    x = np.random.default_rng(2).standard_normal((512, 256)).astype(np.float32)
    np.testing.assert_array_equal(again.run(x), exe.run(x))


@pytest.mark.skipif(not fpmode.supported(), reason="x86-64 and AArch64 only")
def test_denormals_flushed_and_the_callers_mode_restored(monkeypatch):
    text = """HloModule double
ENTRY e {
  x = f32[262144] parameter(0)
  two = f32[] constant(2)
  t = f32[262144] broadcast(two), dimensions={}
  ROOT y = f32[262144] multiply(x, t)
}"""
    x = np.full(262144, 1e-39, np.float32)
    for ftz in (True, False):
        monkeypatch.setenv("XLAPY_FLAGS", f"--xla_cpu_ftz={'true' if ftz else 'false'}")
        exe = _compile(text)
        assert exe.spec.launch is not None and exe.spec.launch.flush_denormals is ftz
        got = exe.run(x)
        np.testing.assert_array_equal(got, np.zeros_like(x) if ftz else x * np.float32(2))
        assert x[0] * np.float32(2) != 0       # NumPy on this thread: still IEEE afterwards


def test_arena_pointers_are_offsets_into_the_arena():
    """The descriptor's third kind (an arena slot), driven by hand: the softmax kernel
    writes into the arena at a given offset instead of an output."""
    exe = _compile(SOFTMAX)
    lo = exe.spec.launch
    handmade = launch.Launch(lo.wrapper, lo.n, lo.chunk, True,
                             ((launch.ARENA, 128), (launch.PARAM, 0)))
    desc = np.array(handmade.descriptor(exe._code.address(lo.wrapper)), np.int64)
    x = np.random.default_rng(3).standard_normal((512, 256)).astype(np.float32)
    arena = np.zeros(128 + x.nbytes + 64, np.uint8)
    params = (ctypes.c_void_p * 1)(x.ctypes.data)
    outs = (ctypes.c_void_p * 1)(0)
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4)(launch.launcher_address())
    fn(params, outs, arena.ctypes.data, desc.ctypes.data)
    got = arena[128:128 + x.nbytes].view(np.float32).reshape(x.shape)
    np.testing.assert_array_equal(got, exe.run(x))
    assert not arena[:128].any() and not arena[128 + x.nbytes:].any()


def test_dump_says_where_the_entry_went(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path}")
    _compile(SOFTMAX)
    (ll,) = tmp_path.glob("*ir-no-opt.ll")
    text = ll.read_text()
    assert text.startswith("; no xlapy_entry: the runtime's xlapy_launch")
    assert "define external void @\"xlapy_entry\"" not in text
