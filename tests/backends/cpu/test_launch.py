"""Programs that are one kernel on the thread pool run through the runtime's precompiled
xlapy_launch instead of an entry function of their own (launch.py). Denormal flushing
under the launch: test_denormals.py."""

import ctypes

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu import compiler as cpu_compiler
from xlapy.backends.cpu import disk_cache
from xlapy.backends.cpu.runtime import launch
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.executable import CpuExecutable
from xlapy.backends.cpu.target import threads_available
from xlapy.backends.interpreter import evaluate

pytestmark = pytest.mark.skipif(not threads_available(), reason="no thread pool here")


def softmax(x):
    e = xnp.exp(x - xnp.max(x, axis=1, keepdims=True))
    return e / xnp.sum(e, axis=1, keepdims=True)


def _module(fn, *args):
    return xp.jit(fn).lower(*args).module


def _compile(module):
    return CpuCompiler().compile(module, num_threads=2, parallel_threshold=1000)


X = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32) * 10


def test_one_pool_kernel_has_no_entry_and_matches_the_interpreter():
    module = _module(softmax, X)
    exe = _compile(module)
    got = exe.spec.launch
    assert isinstance(got, launch.Launch)
    assert got.n == 512 and got.sources == ((launch.OUT, 0), (launch.PARAM, 0))
    assert exe._code.engine.get_function_address("xlapy_entry") == 0
    want = evaluate(module, X)
    np.testing.assert_allclose(exe.run(X), want, rtol=2e-6, atol=1e-7)
    # the plain ctypes path (no trampoline) passes the descriptor too
    exe._trampoline = None
    np.testing.assert_allclose(exe.run(X), want, rtol=2e-6, atol=1e-7)


def test_programs_with_other_work_keep_their_entry():
    x = np.arange(262144, dtype=np.float32)
    a = np.ones((128, 128), np.float32)
    copy = _compile(_module(lambda x: (x + x, x), x))      # an output copied from a parameter
    two_steps = _compile(_module(lambda a, b: xnp.sin(a @ b), a, a))  # a gemm and a kernel
    for exe in (copy, two_steps):
        assert exe.spec.launch is None
        assert exe._code.engine.get_function_address("xlapy_entry") != 0
    y, same = copy.run(x)
    np.testing.assert_array_equal(y, x + x)
    np.testing.assert_array_equal(same, x)


def test_switched_off_gives_an_entry_and_the_same_result(monkeypatch):
    module = _module(softmax, X)
    launched = _compile(module).run(X)
    monkeypatch.setattr(cpu_compiler, "LAUNCH_SINGLE_KERNELS", False)
    exe = _compile(module)
    assert exe.spec.launch is None
    np.testing.assert_array_equal(exe.run(X), launched)


def test_the_spec_survives_the_disk_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path))
    module = _module(softmax, X)
    exe = _compile(module)
    disk_cache.store("k", exe.spec)
    spec = disk_cache.load("k", module)
    assert spec.launch == exe.spec.launch and spec.launch is not None
    again = CpuExecutable(module, spec)
    np.testing.assert_array_equal(again.run(X), exe.run(X))


def test_arena_pointers_are_offsets_into_the_arena():
    """The descriptor's third kind (an arena slot), driven by hand: the softmax kernel
    writes into the arena at a given offset instead of an output."""
    exe = _compile(_module(softmax, X))
    lo = exe.spec.launch
    handmade = launch.Launch(lo.wrapper, lo.n, lo.chunk, True,
                             ((launch.ARENA, 128), (launch.PARAM, 0)))
    desc = np.array(handmade.descriptor(exe._code.address(lo.wrapper)), np.int64)
    arena = np.zeros(128 + X.nbytes + 64, np.uint8)
    params = (ctypes.c_void_p * 1)(X.ctypes.data)
    outs = (ctypes.c_void_p * 1)(0)
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4)(launch.launcher_address())
    fn(params, outs, arena.ctypes.data, desc.ctypes.data)
    got = arena[128:128 + X.nbytes].view(np.float32).reshape(X.shape)
    np.testing.assert_array_equal(got, exe.run(X))
    assert not arena[:128].any() and not arena[128 + X.nbytes:].any()


def test_dump_says_where_the_entry_went(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path}")
    _compile(_module(softmax, X))
    (ll,) = tmp_path.glob("*ir-no-opt.ll")
    text = ll.read_text()
    assert text.startswith("; no xlapy_entry: the runtime's xlapy_launch")
    assert "define external void @\"xlapy_entry\"" not in text
