"""The loader's lazily registered runtime symbols (runtime/loader.py register_lazy): a thread
loading code that mentions a symbol another thread is still registering waits for it. MCJIT
resolves a symbol nobody registered to address 0 without a word (the program then crashes
when it calls it), so a second thread's first call of a program using the same runtime
routine must not go ahead of the first thread's registration."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import ctypes, threading, time
    import llvmlite.binding as llvm
    from xlapy.backends.cpu.codegen import compile_to_object
    from xlapy.backends.cpu.runtime import loader

    NAME = "xlapy_test_slow_symbol"
    calls = []
    CB = ctypes.CFUNCTYPE(None, ctypes.c_int64)
    callback = CB(lambda v: calls.append(v))
    registered = []

    def register():  # slow, as building and loading a runtime routine can be
        time.sleep(0.5)
        llvm.add_symbol(NAME, ctypes.cast(callback, ctypes.c_void_p).value)
        registered.append(threading.current_thread().name)

    loader.register_lazy([NAME], register)
    def program(k):
        return compile_to_object(f'''
    declare void @{NAME}(i64)
    define void @f{k}(i64 %v) {{
      call void @{NAME}(i64 %v)
      ret void
    }}''')
    objs = [program(k) for k in range(2)]

    def run(k):
        lib = loader.LoadedObject(objs[k], symbols=(f"f{k}",))
        CB(lib.address(f"f{k}"))(k + 10)
        lib.keep = lib

    threads = [threading.Thread(target=run, args=(k,), name=f"t{k}") for k in range(2)]
    threads[0].start()
    time.sleep(0.1)   # t0 is registering (sleeping in register) when t1 loads
    threads[1].start()
    for t in threads:
        t.join()
    print("registered", len(registered), "calls", sorted(calls), flush=True)
""")


def test_a_load_waits_for_another_threads_registration():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert "registered 1 calls [10, 11]" in r.stdout, r.stdout


def _object(body: str) -> bytes:
    from xlapy.backends.cpu.codegen import compile_to_object
    return compile_to_object(body)


def test_a_symbol_nothing_provides_is_an_error_not_a_crash():
    from xlapy.backends.cpu.runtime.loader import LoadedObject
    from xlapy.errors import LoweringError
    obj = _object("""
declare void @xlapy_test_never_registered(ptr)
define void @f(ptr %p) {
  call void @xlapy_test_never_registered(ptr %p)
  ret void
}""")
    with pytest.raises(LoweringError, match="xlapy_test_never_registered, which nothing"):
        LoadedObject(obj, symbols=("f",))


def test_symbols_of_the_c_library_and_of_other_parts_resolve():
    import ctypes

    import numpy as np

    from xlapy.backends.cpu.runtime.loader import LoadedObject
    caller = _object("""
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare float @expf(float)
declare void @g_other_part(ptr)
define void @f(ptr %d, ptr %s, i64 %n) {
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 0)
  %x = load float, ptr %s
  %e = call float @expf(float %x)
  store float %e, ptr %d
  call void @g_other_part(ptr %d)
  ret void
}""")
    callee = _object("""
define void @g_other_part(ptr %d) {
  %p = getelementptr float, ptr %d, i64 1
  store float 42.0, ptr %p
  ret void
}""")
    lib = LoadedObject([caller, callee], symbols=("f",))
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        lib.address("f"))(b.ctypes.data, a.ctypes.data, 32)
    np.testing.assert_array_equal(b, [1, 42, 2, 3, 4, 5, 6, 7])


TWO_FIRST_CALLS = textwrap.dedent("""
    import threading, numpy as np
    import xlapy as xp, xlapy.numpy as xnp
    barrier, out = threading.Barrier(2), {}
    def work(k):
        f = xp.jit(lambda x, w: xnp.tanh(x @ w) * (k + 1))
        x, w = np.ones((64, 100), np.float32), np.ones((100, 10), np.float32)
        barrier.wait()
        out[k] = float(f(x, w).sum())
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(sorted(out.items()))
""")


def test_two_threads_first_calls_of_a_product(tmp_path):
    """As a user's threads (or compat.v1's queue runners) make them: two programs whose
    product registers the same runtime kernel (x . W with 10 columns: a narrow gemm kernel
    on AVX-512, BLAS elsewhere), called for the first time at once. On the head before the
    fix this child crashed with SIGSEGV every time (warm caches or cold)."""
    env = dict(os.environ, XLAPY_RUNTIME_CACHE_DIR=str(tmp_path / "runtime"),
               XLAPY_CACHE_DIR=str(tmp_path / "programs"))
    r = subprocess.run([sys.executable, "-c", TWO_FIRST_CALLS], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert r.stdout.strip().splitlines()[-1] == "[(0, 640.0), (1, 1280.0)]", r.stdout
