"""Loading object code into this process (MCJIT) and resolving the symbols it calls.

  lib = LoadedObject(obj)          machine code held alive by lib; lib.address(name)

External symbols the generated code calls are registered with LLVM before loading, by
name, so cached object files stay valid across processes (addresses differ per process).
Each runtime library registers its names in LAZY_SYMBOLS (name -> function registering
it), called once when the first object mentioning the name is loaded, so rarely used
libraries are built or imported only when needed:
  xlapy_sgemm / xlapy_dgemm     BLAS gemm (blas.py)
  xlapy_spotrf / ...            LAPACK (blas.py)
  xlapy_parallel_for            xlapy's thread pool (threadpool.py)
  xlapy_gemm_f32 / _f64         xlapy's own gemm (emitters/gemm_kernel.py)
  __truncdfhf2 / ...            the compiler runtime's half-precision conversions, which
                                LLVM calls where the CPU has no instruction for them (f64 ->
                                f16 without AVX512-FP16): libgcc's (below)
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading

import llvmlite.binding as llvm

from xlapy.backends.cpu import codegen, elf
from xlapy.backends.cpu.target import init_llvm, new_target_machine
from xlapy.errors import LoweringError

# symbol name -> function registering it with LLVM (see the module docstring)
LAZY_SYMBOLS: dict = {}
_lazy_started: set = set()   # registrations begun (one thread's, under _lazy_lock)
_lazy_done: set = set()      # registrations finished: the symbol has its address
# Registrations run one at a time, and a thread loading an object that mentions a symbol
# another thread is still registering waits for it: MCJIT resolves a symbol nobody has
# registered yet to address 0 without a word, and the program then crashes when it calls
# it (two threads' first calls of programs using the same runtime routine). Reentrant: a
# registration loads objects of its own (the routine's code), which may need others.
_lazy_lock = threading.RLock()


def register_lazy(names, register) -> None:
    """Call register() (once) before loading the first object that mentions any of names."""
    done = []

    def once():
        if not done:
            register()
            done.append(True)
    for name in names:
        LAZY_SYMBOLS[name] = once


# ---- the compiler runtime ------------------------------------------------------------------
# LLVM lowers some conversions to libgcc / compiler-rt routines. The Python process has
# libgcc_s loaded, but not globally, so MCJIT would resolve them to nothing (a crash when
# called): they are registered from libgcc_s by name instead.
COMPILER_RUNTIME = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__extendhfdf2")


def _register_compiler_runtime(name: str) -> None:
    import ctypes.util  # (here: it imports subprocess, which nothing else on a cache hit needs)
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("gcc_s") or "libgcc_s.so.1")
        addr = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    except (OSError, AttributeError):
        raise LoweringError(f"the generated code calls the compiler runtime's {name}, which "
                            "this system's libgcc_s does not provide (GCC 12 or newer has "
                            "it)") from None
    llvm.add_symbol(name, addr)


for _name in COMPILER_RUNTIME:
    register_lazy([_name], functools.partial(_register_compiler_runtime, _name))


def _register_symbols_for(objs: list[bytes], provides: tuple) -> None:
    needed = [name for name in list(LAZY_SYMBOLS) if name not in _lazy_done
              and name not in provides and any(name.encode() in o for o in objs)]
    if not needed:
        return
    with _lazy_lock:
        for name in needed:
            # started and not done under this lock: this thread's own registration of it,
            # loading the object that defines it (which mentions it too)
            if name in _lazy_started:
                continue
            _lazy_started.add(name)
            try:
                LAZY_SYMBOLS[name]()
            except BaseException:
                _lazy_started.discard(name)
                raise
            _lazy_done.add(name)


# ---- engines -------------------------------------------------------------------------------
# An MCJIT engine starts from a module of its own (empty here), which it compiles when it is
# first finalized (about 0.5 ms of code generation set-up) after a target machine of its own
# (0.3 ms). After each load, the next engine is built on a helper thread and finalized once,
# so that the next program's load takes 0.08 ms instead of 0.82 (medians of 20,
# `.venv/bin/python benchmarks/runtime_costs.py`).
_spare = None        # concurrent.futures.Future of an engine, or None
_spare_pool = None   # a one-thread executor (forgotten after fork)
_spare_lock = threading.Lock()


def _new_engine():
    with codegen.llvm_lock():
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine())
        engine.finalize_object()
    return engine


def _prepare_engine() -> None:
    global _spare, _spare_pool
    with _spare_lock:
        if _spare is not None:
            return
        try:
            if _spare_pool is None:
                _spare_pool = concurrent.futures.ThreadPoolExecutor(
                    1, thread_name_prefix="xlapy-engine")
            _spare = _spare_pool.submit(_new_engine)
        except RuntimeError:  # no thread (a resource limit, or the interpreter shutting down)
            _spare = None


def prepare_engine() -> None:
    """Start building an engine on the helper thread now, if none is ready or under way:
    the compiler calls it when it starts on a program it has not loaded yet, so that the
    process's first engine (about 2 ms, more while LLVM's code is still being paged in) is
    made while Python traces, lowers and emits."""
    _prepare_engine()


def _take_engine():
    """The prepared engine (each is handed out once): when it is still being built, it is
    waited for (building another would wait for the same lock first); when the helper
    thread has not started it yet, it is cancelled and one is made here."""
    global _spare
    with _spare_lock:
        spare, _spare = _spare, None
    if spare is not None and (spare.done() or not spare.cancel()):
        try:
            return spare.result()
        except Exception:
            pass  # (made again below, where its error is raised)
    return _new_engine()


def _forget_engines_after_fork() -> None:
    # the helper thread did not survive the fork, and it may have held this lock (or the
    # future's own) when it happened; an engine it made is freed (no LLVM call was under way
    # at the fork: codegen.py holds llvmlite's lock across it)
    global _spare, _spare_pool, _spare_lock, _lazy_lock
    _spare = _spare_pool = None
    _spare_lock = threading.Lock()
    # a registration another thread had under way is gone: the child starts it again
    _lazy_lock = threading.RLock()
    _lazy_started.intersection_update(_lazy_done)


os.register_at_fork(after_in_child=_forget_engines_after_fork)


_process = None  # ctypes' handle of the process's global symbols (dlopen(NULL))


def _found_in_process(name: str) -> bool:
    """Whether MCJIT resolves `name` outside the objects: a symbol registered with LLVM
    (llvm.add_symbol) or one of the process's global symbols (libc's memcpy, ...)."""
    global _process
    if llvm.address_of_symbol(name):
        return True
    if _process is None:
        import ctypes  # (only for a name LLVM was not given: the C library's)
        _process = ctypes.CDLL(None)
    try:
        _process[name]
        return True
    except (AttributeError, ValueError):
        return False


def check_resolved(objs: list[bytes]) -> None:
    """Raise LoweringError for a symbol the objects call or read that neither they nor the
    process provide. MCJIT resolves such a symbol to address 0 without a word, and the
    program then crashes with SIGSEGV where it calls it."""
    infos = [elf.read(o) for o in objs if elf.is_elf64(o)]
    defined = set().union(*(i.defined() for i in infos))
    missing = sorted({n for i in infos for n in i.undefined(weak=False)
                      if n not in defined and not _found_in_process(n)})
    if missing:
        raise LoweringError(
            f"the compiled code needs {', '.join(missing)}, which nothing in this process "
            "provides (a runtime routine that was not registered with the loader); this is "
            "a bug in xlapy: please report it with XLAPY_FLAGS=--xla_dump_to=DIR's dump")


class LoadedObject:
    """Machine code loaded into this process (kept alive as long as this object is): one
    object file, or the parts of one program (split.py), linked together."""

    def __init__(self, obj: bytes | list[bytes], symbols: tuple = (), provides: tuple = ()):
        """`symbols`: names whose addresses to look up right away, before the next engine
        is prepared on the helper thread (which holds llvmlite's lock for about a
        millisecond: a lookup made meanwhile waits for it). `provides`: names the object
        defines itself (a runtime library's own entry points), not registered for it."""
        init_llvm()
        objs = [obj] if isinstance(obj, bytes) else list(obj)
        _register_symbols_for(objs, provides)
        check_resolved(objs)
        engine = _take_engine()
        with codegen.llvm_lock():
            self.engine = engine
            for o in objs:
                self.engine.add_object_file(llvm.ObjectFileRef.from_data(o))
            self.engine.finalize_object()
            self._addresses = {n: self.engine.get_function_address(n) for n in symbols}
        _prepare_engine()  # for the next program

    def address(self, name: str) -> int:
        addr = self._addresses.get(name) or self.engine.get_function_address(name)
        if not addr:
            raise LoweringError(f"symbol {name} is missing from the compiled object")
        return addr
