"""LLVM for the host CPU: target machine, optimization pipeline, object code, loading.

  tm = target_machine()                    host CPU name and features (llvmlite), -O3
  obj = compile_to_object(llvm_ir_text)    parse, verify, optimize (new pass manager), emit
  lib = load_object(obj)                   MCJIT engine holding the code; lib.address(name)

External symbols the generated code calls are registered with LLVM before loading, by
name, so cached object files stay valid across processes (addresses differ per process):
  xlapy_sgemm / xlapy_dgemm     BLAS gemm: NumPy's bundled OpenBLAS (ILP64) when present,
                                else the one inside scipy (scipy.linalg.cython_blas, LP64)
  xlapy_parallel_for            xlapy's thread pool (threadpool.py), registered when the
                                first object that calls it is loaded
  xlapy_gemm_f32 / _f64         xlapy's own gemm (gemm_kernel.py), built, cached and
                                registered when the first object that calls it is loaded

Optimization: -O3 with loop and SLP vectorization for the host's features, or a short
pipeline for code emitted as vector code already (optimize(), PIPELINES); no fast-math flags
are ever put on instructions, so results follow IEEE semantics.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import threading

import llvmlite.binding as llvm

from xlapy.errors import LoweringError

_lock = threading.Lock()

# Static relocation with the JIT's (large) code model: code addresses constants and other
# functions absolutely, patched when loaded. Position-independent code would go through a
# global offset table, which MCJIT's ELF loader gets wrong when one engine loads several
# objects that use one (the parts of a split module: split.py); the first object's
# constant-pool loads then read through the second one's table and crash.
RELOC = "static"
LOOP_UNROLLING = False  # and the loop vectorizer's interleaving: see optimize()
DIRECT_PIPELINE = True  # the short "direct" pipeline for vector code: see optimize()


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    _register_symbols()


def new_target_machine():
    """A fresh TargetMachine for the host. An MCJIT engine takes ownership of the one it is
    given (and frees it with the engine), so every engine needs its own."""
    triple, cpu, features = _host()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=3, reloc=RELOC, codemodel="jitdefault", jit=True)


@functools.lru_cache(maxsize=None)
def _host() -> tuple[str, str, str]:
    _init()
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), \
        llvm.get_host_cpu_features().flatten()


@functools.lru_cache(maxsize=None)
def target_machine():
    """The TargetMachine used for optimization and code generation (never given to an
    engine)."""
    return new_target_machine()


def target_description() -> str:
    """Identifies the code generation target (part of every cache key)."""
    from xlapy.backends.cpu.gemm_kernel import gemm_choice
    triple, cpu, features = _host()
    return (f"{triple}|{cpu}|blas{BLAS_INT_BITS}|{features}|llvm{llvm.llvm_version_info}|"
            f"reloc={RELOC}|gemm={gemm_choice()}")


def capsule_pointer(capsule) -> int:
    """The C pointer inside a Cython __pyx_capi__ capsule (scipy's BLAS/LAPACK functions)."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype = ctypes.c_void_p
    get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_ptr(capsule, get_name(capsule))


BLAS_INT_BITS = 32  # integer width of the gemm registered as xlapy_sgemm/xlapy_dgemm


def _numpy_openblas():
    """NumPy's bundled OpenBLAS (ILP64, symbols scipy_sgemm_64_...), when present: it is the
    gemm NumPy's matmul uses, so xlapy's dots run at exactly NumPy's speed."""
    import glob
    import os
    import numpy
    pattern = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs",
                           "libscipy_openblas64_*.so")
    for path in glob.glob(pattern):
        try:
            lib = ctypes.CDLL(path)
            return {n: ctypes.cast(getattr(lib, f"scipy_{n}_64_"), ctypes.c_void_p).value
                    for n in ("sgemm", "dgemm")}
        except (OSError, AttributeError):
            continue
    return None


def _register_symbols() -> None:
    global BLAS_INT_BITS
    found = _numpy_openblas()
    if found:
        BLAS_INT_BITS = 64
        for name, addr in found.items():
            llvm.add_symbol(f"xlapy_{name}", addr)
        return
    from scipy.linalg import cython_blas  # LP64 Fortran BLAS inside scipy
    for name in ("sgemm", "dgemm"):
        llvm.add_symbol(f"xlapy_{name}", capsule_pointer(cython_blas.__pyx_capi__[name]))


_THROTTLING_AVX512 = ("skylake-avx512", "cascadelake", "cooperlake", "knl", "knm")


@functools.lru_cache(maxsize=None)
def preferred_vector_width() -> int | None:
    """512 on AVX-512 hosts whose wide vectors do not cost clock speed (LLVM's default
    prefers 256 bits everywhere because older Xeons throttle); None: keep LLVM's choice."""
    _init()
    features = llvm.get_host_cpu_features()
    if features.get("avx512f") and llvm.get_host_cpu_name() not in _THROTTLING_AVX512:
        return 512
    return None


def threads_available() -> bool:
    """Whether xlapy's thread pool can run on this platform."""
    import platform
    import sys
    from xlapy.backends.cpu.threadpool import _SYS_FUTEX
    return sys.platform.startswith("linux") and platform.machine() in _SYS_FUTEX


# symbol name -> function registering it with LLVM; called (once) when an object that
# references the name is loaded, so rarely used libraries are imported only when needed
LAZY_SYMBOLS: dict = {}
_lazy_done: set = set()

_pool_registered = False


def _ensure_pool_symbol() -> None:
    global _pool_registered
    if _pool_registered:
        return
    from xlapy.backends.cpu.compiler import default_num_threads
    from xlapy.backends.cpu.threadpool import pool
    p = pool(default_num_threads())
    if p is None:
        raise LoweringError("this code uses the thread pool, which is not available here; "
                            "compile with XLAPY_NUM_THREADS=1")
    llvm.add_symbol("xlapy_parallel_for", p.parallel_for)
    _pool_registered = True


PIPELINES = ("O3", "direct", "light")


def optimize(module_ref, pipeline: str = "O3", tm=None) -> None:
    """Optimize a module with one of PIPELINES:

    "O3"      -O3 with the loop and SLP vectorizers, without loop unrolling and without the
              loop vectorizer's interleaving (one vector per iteration). Unrolling and
              interleaving enlarge the code LLVM optimizes and translates: without them a row
              softmax 8192x1024 compiled in about 22 ms instead of 29 and ran in 2.9 ms
              instead of 2.7 (`benchmarks/compile_breakdown.py --unroll` switches
              LOOP_UNROLLING). The loops are memory-bound or already vector code, so the
              trade favours the first call.
    "direct"  for code emitted as vector code already (loop_analysis.needs_vectorizer is
              false for every function): inline the alwaysinline helpers, promote stack
              slots, combine and simplify once, rotate loops. About half of -O3's time on
              such code at the same run time (`compile_breakdown.py --pipelines`).
    "light"   -O2 without the vectorizers, for the hand-vectorized gemm kernel."""
    if pipeline not in PIPELINES:
        raise ValueError(f"unknown LLVM pipeline {pipeline!r}; one of {PIPELINES}")
    pb = pass_builder(tm, pipeline)
    mpm = direct_passes() if pipeline == "direct" else pb.getModulePassManager()
    mpm.run(module_ref, pb)


def direct_passes():
    """The "direct" pipeline's module pass manager."""
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.add_sroa_pass()
    mpm.add_instruction_combine_pass()
    mpm.add_simplify_cfg_pass()
    mpm.add_loop_rotate_pass()
    mpm.add_dead_code_elimination_pass()
    return mpm


def pass_builder(tm=None, pipeline: str = "O3"):
    """The pass builder of optimize()'s pipeline (its analyses; benchmarks time its passes)."""
    light = pipeline != "O3"
    pto = llvm.create_pipeline_tuning_options(speed_level=2 if light else 3)
    pto.loop_vectorization = pto.slp_vectorization = not light
    pto.loop_unrolling = pto.loop_interleaving = LOOP_UNROLLING and not light
    return llvm.create_pass_builder(tm or target_machine(), pto)


def parse_ir(text: str, tm=None, context=None):
    _init()
    try:
        mod = llvm.parse_assembly(text, context=context)
        mod.verify()
    except RuntimeError as e:
        raise LoweringError(
            f"LLVM rejected the generated IR: {e}\n  This is a bug in xlapy; "
            "rerun with XLAPY_FLAGS=--xla_dump_to=DIR and report the dump") from None
    tm = tm or target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    return mod


def _compile(text: str, tm, pipeline: str, dump: bool, context=None):
    """(object code, optimized IR, assembly) of one module; the last two only with dump."""
    mod = parse_ir(text, tm, context)
    optimize(mod, pipeline, tm)
    optimized_ir = asm = None
    if dump:
        optimized_ir = f"; optimized with the {pipeline} pipeline\n{mod}"
        # Code generation mutates the module: emit the assembly from a separate copy.
        copy = llvm.parse_assembly(optimized_ir, context=context)
        copy.triple, copy.data_layout = mod.triple, mod.data_layout
        asm = tm.emit_assembly(copy)
    return tm.emit_object(mod), optimized_ir, asm


def compile_to_object(text: str, dump=None, pipeline: str = "O3") -> bytes:
    """LLVM IR text -> optimized object code. `dump(name, text)` receives the IR after
    optimization and the assembly, when given."""
    return compile_objects([text], dump, [pipeline])[0]


def compile_objects(texts: list[str], dump=None, pipelines: list[str] | None = None
                    ) -> list[bytes]:
    """Object code for each of several modules (the parts of one program, split.py), compiled
    concurrently on one thread each when there are several (parallel_compile.py), each with
    its pipeline (optimize(); default "O3"). `dump(name, text)` receives the optimized IR and
    the assembly of all parts."""
    pipelines = pipelines or ["O3"] * len(texts)
    from xlapy.backends.cpu import parallel_compile
    _init()
    with _lock:  # llvmlite's global context and xlapy's target machines are not thread safe
        if len(texts) == 1 or not parallel_compile.available():
            results = [_compile(t, target_machine(), p, dump is not None)
                       for t, p in zip(texts, pipelines)]
        else:
            results = parallel_compile.compile_all(texts, pipelines, dump is not None)
    if dump is not None:
        from xlapy.backends.cpu.split import join_parts
        for k, name in ((1, "ir-with-opt.ll"), (2, "s")):
            dump(name, join_parts([r[k] for r in results]) if len(results) > 1 else results[0][k])
    return [r[0] for r in results]


def cached_object(build, name: str, pipeline: str = "O3") -> bytes:
    """compile_to_object for the runtime's own fixed modules (trampoline, thread pool, gemm,
    launcher), through the disk cache, so a new process does not run LLVM for them again.

    build() returns the module's IR; `name` identifies the module and its parameters
    ("gemm-f32-512"). The key is the name, xlapy's source fingerprint (the builders are
    sources), the target and the pipeline, so a cache hit skips building the IR as well:
    building and printing the gemm kernel's IR took 166 ms of a process's first training
    step on a warm cache (examples/mnist_softmax.py --xla, cProfile)."""
    import hashlib
    from xlapy.backends.cpu.compiler import cache_dir, source_fingerprint
    root = cache_dir()
    data = (f"{name}|{source_fingerprint()}|{target_description()}|pipeline={pipeline}"
            ).encode()
    key = hashlib.sha256(data).hexdigest()
    path = root / f"runtime-{key}.o" if root is not None else None
    if path is not None:
        try:
            return path.read_bytes()
        except OSError:
            pass
    obj = compile_to_object(build(), pipeline=pipeline)
    if path is not None:
        try:
            root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(obj)
            os.replace(tmp, path)
        except OSError:
            pass
    return obj


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
    with _lock:
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine())
        engine.finalize_object()
    return engine


def _prepare_engine() -> None:
    global _spare, _spare_pool
    import concurrent.futures
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


def _take_engine():
    """The prepared engine when it is ready (each is handed out once), else a new one."""
    global _spare
    with _spare_lock:
        spare = _spare
        if spare is not None and spare.done():
            _spare = None
        else:
            spare = None
    if spare is not None and spare.exception() is None:
        return spare.result()
    return _new_engine()


def _forget_engines_after_fork() -> None:
    # the helper thread did not survive the fork; it may have held these locks when it
    # happened, and no other thread of the child can release them
    global _spare, _spare_pool, _spare_lock, _lock
    _spare = _spare_pool = None
    _spare_lock = threading.Lock()
    _lock = threading.Lock()


def _finish_engine_before_fork() -> None:
    # no LLVM work may be under way on the helper when the process forks: the child would
    # inherit llvmlite's lock held by a thread it does not have
    spare = _spare
    if spare is not None:
        try:
            spare.exception(timeout=10)
        except Exception:
            pass


os.register_at_fork(before=_finish_engine_before_fork,
                    after_in_child=_forget_engines_after_fork)


class LoadedObject:
    """Machine code loaded into this process (kept alive as long as this object is): one
    object file, or the parts of one program (split.py), linked together."""

    def __init__(self, obj: bytes | list[bytes], uses_pool: bool | None = None,
                 symbols: tuple = ()):
        """`symbols`: names whose addresses to look up right away, before the next engine
        is prepared on the helper thread (which holds llvmlite's lock for about a
        millisecond: a lookup made meanwhile waits for it)."""
        _init()
        objs = [obj] if isinstance(obj, bytes) else list(obj)
        if uses_pool is None:
            uses_pool = any(b"xlapy_parallel_for" in o for o in objs)
        if uses_pool:
            _ensure_pool_symbol()
        for name, register in list(LAZY_SYMBOLS.items()):
            if name not in _lazy_done and any(name.encode() in o for o in objs):
                _lazy_done.add(name)  # first: the object defining the symbol mentions it too
                try:
                    register()
                except BaseException:
                    _lazy_done.discard(name)
                    raise
        engine = _take_engine()
        with _lock:
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
