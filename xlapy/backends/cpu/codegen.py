"""LLVM IR text -> optimized object code for a CPU: the one place machine code is made.

  obj = compile_to_object(llvm_ir_text)        parse, verify, optimize, emit (host CPU)
  objs = compile_objects(texts, dump, pipelines)   the parts of one program, concurrently
  obj = cached_object(build, name)             the same through the disk cache (the
                                               runtime's own fixed modules)

The output is an object file: the JIT loads it into this process (runtime/loader.py);
ahead-of-time compilation writes it to disk.

Optimization: -O3 with loop and SLP vectorization for the target's features, or a short
pipeline for code emitted as vector code already (optimize(), PIPELINES); no fast-math flags
are ever put on instructions, so results follow IEEE semantics.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings

import llvmlite.binding as llvm

from xlapy.backends.cpu import cache_file, parallel_compile
from xlapy.backends.cpu.options import runtime_cache_dirs, source_fingerprint
from xlapy.backends.cpu.split import join_parts
from xlapy.backends.cpu.target import RELOC, host, init_llvm, new_target_machine, target_machine
from xlapy.errors import LoweringError, XlapyWarning

LOOP_UNROLLING = False  # and the loop vectorizer's interleaving: see optimize()
DIRECT_PIPELINE = True  # the short "direct" pipeline for vector code: see optimize()

# llvmlite's global context and xlapy's target machines are not thread safe: every use of
# them (compiling here, creating and loading engines in runtime/loader.py) holds this lock
_lock = threading.Lock()


def llvm_lock() -> threading.Lock:
    return _lock


# Printing a module (llvmlite's LLVMPY_PrintModuleToString) saves the process's locale, sets
# "C" and restores the saved one. The parts of a split module compile on several threads at
# once (parallel_compile.py), and two prints at the same time could save each other's "C"
# and leave the whole process in the C locale (ASCII: text read later without an explicit
# encoding failed to decode). One print at a time.
_print_lock = threading.Lock()


# Forking while another thread compiles. The child has only the forking thread: a lock some
# other thread held at fork time stays held there forever. llvmlite takes its own lock around
# every LLVM call, so a child forked during one could never call LLVM again (nor free an
# engine), and LLVM's own state could be half updated. So the fork waits for the LLVM call in
# progress to end, holding llvmlite's lock across the fork (the parent's compilation then
# goes on; in the child it is simply gone), and xlapy's lock, held for a whole compilation,
# is replaced in the child.
_held_for_fork: list = []


def _before_fork() -> None:
    lock = parallel_compile.llvmlite_lock()
    if lock is not None:
        lock.acquire()
        _held_for_fork.append(lock)


def _after_fork_in_parent() -> None:
    while _held_for_fork:
        _held_for_fork.pop().release()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    while _held_for_fork:  # (the forking thread is the child's own thread: it owns it)
        _held_for_fork.pop().release()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


def target_key() -> str:
    """Identifies the code generation target (part of every cache key)."""
    t = host()
    return f"{t.triple}|{t.cpu}|{t.features}|llvm{llvm.llvm_version_info}|reloc={RELOC}"


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
    try:
        mpm.run(module_ref, pb)
    finally:
        _free_pass_manager(mpm)


def _free_pass_manager(mpm) -> None:
    """Free a module pass manager now. llvmlite (0.44 to at least 0.50) never does:
    ObjectRef's empty _dispose precedes NewPassManager's in ModulePassManager's method
    order, so each optimize() leaked the whole pipeline with what its passes keep between
    runs, about 140 KB of native memory per compiled program (tests/backends/cpu/
    test_memory.py). A pass builder is not reused instead: llvmlite registers callbacks in
    it on every run that are never removed, and each run then got slower."""
    from llvmlite.binding import ffi  # (llvmlite's private classes, as parallel_compile)
    from llvmlite.binding.newpassmanagers import NewPassManager
    if type(mpm)._dispose is ffi.ObjectRef._dispose and not mpm.closed:
        NewPassManager._dispose(mpm)
        mpm.detach()
    else:
        mpm.close()


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
    init_llvm()
    try:
        mod = llvm.parse_assembly(text, context=context)
        mod.verify()
    except RuntimeError as e:
        raise LoweringError(f"LLVM rejected the generated IR: {e}\n  This is a bug in xlapy; "
                            "rerun with XLAPY_FLAGS=--xla_dump_to=DIR and report the "
                            "dump") from None
    tm = tm or target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    return mod


def compile_one(text: str, tm, pipeline: str, dump: bool, context=None):
    """(object code, optimized IR, assembly) of one module; the last two only with dump."""
    mod = parse_ir(text, tm, context)
    optimize(mod, pipeline, tm)
    optimized_ir = asm = None
    if dump:
        with _print_lock:
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


def _compile_in_own_context(text: str, pipeline: str, dump: bool):
    """compile_one in a fresh LLVM context, closed after: types and constants LLVM makes
    while optimizing live as long as their context (about 3 KB per program in the global
    one, never freed)."""
    ctx = llvm.create_context()
    try:
        return compile_one(text, target_machine(), pipeline, dump, ctx)
    finally:
        ctx.close()


def compile_objects(texts: list[str], dump=None, pipelines: list[str] | None = None
                    ) -> list[bytes]:
    """Object code for each of several modules (the parts of one program, split.py), compiled
    concurrently on one thread each when there are several (parallel_compile.py), each with
    its pipeline (optimize(); default "O3"). `dump(name, text)` receives the optimized IR and
    the assembly of all parts."""
    pipelines = pipelines or ["O3"] * len(texts)
    init_llvm()
    with _lock:
        if len(texts) == 1 or not parallel_compile.available():
            results = [_compile_in_own_context(t, p, dump is not None)
                       for t, p in zip(texts, pipelines)]
        else:
            results = parallel_compile.compile_all(texts, pipelines, dump is not None,
                                                   compile_one, new_target_machine)
    if dump is not None:
        for k, name in ((1, "ir-with-opt.ll"), (2, "s")):
            dump(name, join_parts([r[k] for r in results]) if len(results) > 1 else results[0][k])
    return [r[0] for r in results]


def cached_object(build, name: str, pipeline: str = "O3") -> bytes:
    """compile_to_object for the runtime's own fixed modules (trampoline, thread pool, gemm,
    launcher), through the runtime's disk cache (options.runtime_cache_dirs: next to the
    installation, then the program cache), so a new process does not run LLVM for them
    again, even with an empty program cache: on the TF softmax tutorial's cold-cache run
    the trampoline's LLVM was 7-10 ms CPU of the first compile.

    build() returns the module's IR; `name` identifies the module and its parameters
    ("gemm-f32-512"). The key is the name, xlapy's source fingerprint (the builders are
    sources), the target and the pipeline, so a cache hit skips building the IR as well:
    building and printing the gemm kernel's IR took 166 ms of a process's first training
    step on a warm cache (examples/mnist_softmax.py --xla, cProfile)."""
    dirs = runtime_cache_dirs()
    data = f"{name}|{source_fingerprint()}|{target_key()}|pipeline={pipeline}"
    key = hashlib.sha256(data.encode()).hexdigest()
    file = f"runtime-{key}.xlapy"
    for root in dirs:
        path = root / file
        try:
            found = cache_file.read(path, "cpu-runtime-object", key)
            if found is not None and len(found[1]) == 1 and found[1][0]:
                return found[1][0]
        except cache_file.BadEntry as e:
            warnings.warn(f"xlapy's disk cache: discarded {path}: {e}; compiling {name} "
                          "again", XlapyWarning, stacklevel=2)
        except OSError:
            pass
    obj = compile_to_object(build(), pipeline=pipeline)
    for root in dirs:  # the first directory that takes it
        try:
            root.mkdir(parents=True, exist_ok=True)
            cache_file.write(root / file, "cpu-runtime-object", key, {"name": name}, [obj])
            break
        except OSError:
            continue
    return obj
