"""The cpu backend's compiler: HLO module -> native code in this process.

Stages: clone the module (the caller's stays untouched); run the cpu pass pipeline
(passes/pipeline.py); emit LLVM IR (emitters/program.py and the rest); optimize and
generate machine code for the host CPU (codegen.py); load it (runtime/loader.py, through
executable.py). Results are cached twice:
  - in memory, keyed by the module's fingerprint (its text without metadata), the options
    and the target;
  - on disk (disk_cache.py), so another process that compiles the same module skips LLVM.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import threading
import time
import warnings

import numpy as np

from xlapy.backends.base import BuildOnce, Compiler
from xlapy.backends.cpu import codegen, disk_cache, parallel_compile
from xlapy.backends.cpu.executable import CpuExecutable, ExecutableSpec
from xlapy.backends.cpu.options import default_num_threads, gemm_choice, source_fingerprint
from xlapy.backends.cpu.runtime import guard_pages, loader
from xlapy.backends.cpu.runtime.blas import blas_int_bits
from xlapy.backends.cpu.split import defined_functions, join_parts, may_split, split_module
from xlapy.backends.cpu.target import emission, host, threads_available
from xlapy.errors import XlapyWarning
from xlapy.flags import flags
from xlapy.gc_control import collector_paused
from xlapy.hlo.dump import Dumper
from xlapy.hlo.ir import Module
from xlapy.hlo.opcodes import COLLECTIVES
from xlapy.hlo.printer import is_large_constant
from xlapy.hlo.verifier import verify

CODEGEN_VERSION = "12"  # (the key also hashes xlapy's sources: see source_fingerprint)
# A program that is one kernel on the thread pool runs through launch.py's precompiled entry
# instead of one of its own (benchmarks/compile_breakdown.py --launch switches it)
LAUNCH_SINGLE_KERNELS = True


MAX_DEFAULT_PARTS = 8


def codegen_split_count(fl) -> int:
    """How many parts a program's LLVM module is split into, to compile them concurrently
    (split.py): --xla_cpu_parallel_codegen_split_count=N, else one per core this process may
    run on, at most MAX_DEFAULT_PARTS (each part costs a target machine, a helper thread and
    about a millisecond of fixed LLVM work); 1 where llvmlite's lock cannot be passed
    (parallel_compile.available)."""
    n = fl.xla_cpu_parallel_codegen_split_count
    if n <= 0:
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:
            n = os.cpu_count() or 1
        n = min(n, MAX_DEFAULT_PARTS)
    return max(1, n) if parallel_compile.available() else 1


class CpuCompiler(Compiler):
    def __init__(self):
        # fingerprint -> CpuExecutable; threads asking for one key at once compile it once
        self._memory = BuildOnce()
        self._stats_lock = threading.Lock()
        self.stats = {"memory_hits": 0, "disk_hits": 0, "compiles": 0}

    def clear_cache(self) -> None:
        self._memory.clear()

    def fingerprint(self, module: Module, num_threads: int, threshold: int,
                    profile: bool = False, ftz: bool = True, fl=None) -> str:
        """The cache key: the module's text, every option and flag that changes the code
        made for it (`fl`: the Flags in effect, default the environment's), the target,
        and xlapy's own sources."""
        h = hashlib.sha256()
        # large constants (a model's weights) by their bytes, not their decimal text
        h.update(module.to_string(print_metadata=False, print_large_constants=False).encode())
        for instr in module.instructions():
            if is_large_constant(instr):
                h.update(np.ascontiguousarray(instr.literal).reshape(-1).view(np.uint8))
        h.update(f"|{num_threads}|{threshold}|{profile}|ftz={ftz}|{CODEGEN_VERSION}|".encode())
        h.update(_code_flags(fl if fl is not None else flags()).encode())
        h.update(_codegen_switches().encode())
        h.update(source_fingerprint().encode())
        h.update(f"{codegen.target_key()}|blas{blas_int_bits()}|gemm={gemm_choice()}".encode())
        return h.hexdigest()

    def compile(self, module: Module, num_threads: int | None = None,
                parallel_threshold: int = 100_000) -> CpuExecutable:
        verify(module)
        num_threads = num_threads or default_num_threads()
        dumper = Dumper(module, backend="cpu")
        profile = dumper.fl.xla_hlo_profile
        key = self.fingerprint(module, num_threads, parallel_threshold, profile,
                               dumper.fl.xla_cpu_ftz, dumper.fl)

        def build() -> CpuExecutable:
            loader.prepare_engine()  # (its engine is made while this thread works)
            spec = None
            if not dumper.active:  # dumps describe a compilation: never serve them a cache
                spec = disk_cache.load(key, module)
            if spec is not None:
                self._count("disk_hits")
                _import_symbol_providers(spec.objects)
            else:
                with collector_paused():
                    spec = self._compile(module, num_threads, parallel_threshold, dumper,
                                         profile)
                self._count("compiles")
                disk_cache.store(key, spec)
            return CpuExecutable(module, spec)

        if dumper.active:
            exe = build()
            self._memory.put(key, exe)
            return exe
        # (an executable runs guarded or not from its construction: XLAPY_GUARD_PAGES set
        # later is not served one made before)
        memory_key = key + "|guard-pages" if guard_pages.enabled() else key
        exe, built = self._memory.get_or_build(memory_key, build, f"module {module.name}")
        if not built:
            self._count("memory_hits")
        return exe

    def _count(self, what: str) -> None:
        with self._stats_lock:
            self.stats[what] += 1

    def _compile(self, module: Module, num_threads: int, threshold: int, dumper,
                 profile: bool = False) -> ExecutableSpec:
        t0 = time.perf_counter()
        run_cpu_pipeline, ModuleEmitter = _code_generator()
        # (modules, not their functions: benchmarks/compile_breakdown.py --marks switches them)
        from xlapy.backends.llvm import call_graph, fpmode, loop_analysis
        # (profile builds and collectives' plans keep mutable globals: one part)
        parts = 1 if profile or _has_collectives(module) else codegen_split_count(dumper.fl)
        parallel_compile.wake(parts - 1)  # the helper threads start while Python works
        dumper.module(module, "before_optimizations")
        observers = dumper.observers()
        optimized = run_cpu_pipeline(module.clone(), observers=observers)
        dumper.module(optimized, "cpu_after_optimizations")
        t1 = time.perf_counter()
        emitter = ModuleEmitter(optimized, num_threads, threshold,
                                use_threads=threads_available(), profile=profile,
                                flush_denormals=dumper.fl.xla_cpu_ftz)
        emitter.llmod.external_constants = {}  # large constants stay out of the IR
        emitter.emit("xlapy_entry")
        if dumper.fl.xla_cpu_ftz and fpmode.flush_bits():
            fpmode.declare_flushing(emitter.llmod)  # LLVM optimizes for the mode it runs in
        launched = None
        if not profile:  # (profile builds count cycles per kernel function)
            launched = emitter.single_launch("xlapy_entry") if LAUNCH_SINGLE_KERNELS else None
            # the entry's kernels stay functions of their own where they may go to other parts
            call_graph.inline_single_calls(
                emitter.llmod, ("xlapy_entry",) if may_split(emitter.llmod, parts)
                                else ())
            if launched is None:
                loop_analysis.optnone_if_only_calls(emitter.llmod.get_global("xlapy_entry"))
        if dumper.enabled:
            dumper.raw("ir-no-opt.ll", _launch_comment(launched) + str(emitter.llmod))
        scalar = scalar_functions(emitter.llmod)
        texts = split_module(emitter.llmod, "xlapy_entry", parts, scalar)
        if dumper.enabled and len(texts) > 1:
            dumper.raw("ir-parts.ll", join_parts(texts))
        t2 = time.perf_counter()
        objects = codegen.compile_objects(texts, dumper.raw if dumper.enabled else None,
                                      part_pipelines(texts, scalar))
        t3 = time.perf_counter()
        spec = ExecutableSpec.for_module(optimized, objects, emitter.arena_size)
        spec.profile_labels = emitter.profile_labels
        spec.launch = launched
        spec.constants = emitter.llmod.external_constants
        spec.aliases = dict(emitter.aliases)
        spec.collectives = getattr(emitter, "collectives", None)
        _warn_unused_donations(emitter)
        spec.compile_seconds = {"hlo_passes": t1 - t0, "llvm_ir_emission": t2 - t1,
                                "llvm_optimize_and_codegen": t3 - t2}
        return spec


def _code_generator():
    """(run_cpu_pipeline, ModuleEmitter), imported on the first compilation that misses
    every cache: a process whose programs all come from the disk cache never loads the
    passes and emitters (about half of the backend's import time). The dedicated emitters
    (emitters/registry.py) are imported when a program first needs one."""
    from xlapy.backends.cpu.emitters.program import ModuleEmitter  # (lazy: see above)
    from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline  # (lazy: see above)
    return run_cpu_pipeline, ModuleEmitter


# Runtime symbols that an emitter module registers with the loader when it is imported
# (runtime/loader.py: register_lazy): a program from the disk cache that calls one needs
# that module imported first, where no compilation in this process has imported it
EMITTER_SYMBOLS = ((b"xlapy_gemm_f", "xlapy.backends.cpu.emitters.gemm_kernel"),
                   (b"xlapy_gemm_bf", "xlapy.backends.cpu.emitters.gemm_kernel"),
                   (b"xlapy_gemm_narrow", "xlapy.backends.cpu.emitters.gemm_narrow_symbols"))


def _import_symbol_providers(objects: list) -> None:
    for prefix, name in EMITTER_SYMBOLS:
        # import_module also when the module is in sys.modules already: another thread may
        # still be running its body (which registers the symbols), and import_module waits
        # for it where a look at sys.modules would not
        if any(prefix in o for o in objects):
            importlib.import_module(name)


def _has_collectives(module: Module) -> bool:
    return any(i.opcode in COLLECTIVES for i in module.instructions())


def _launch_comment(launched) -> str:
    """The dump's note that the module has no entry function of its own (launch.py)."""
    if launched is None:
        return ""
    return (f"; no xlapy_entry: the runtime's xlapy_launch (launch.py) runs {launched.wrapper} "
            f"over [0, {launched.n}) in chunks of {launched.chunk} with pointers "
            f"{list(launched.sources)} ((0 param | 1 out | 2 arena, index | offset))"
            f"{', denormals flushed' if launched.flush_denormals else ''}\n")


def _code_flags(fl) -> str:
    """The XLAPY_FLAGS that change the code made (dump flags do not; profile and ftz are
    keyed by compile())."""
    return (f"disabled={','.join(sorted(set(fl.xla_disable_hlo_passes)))}|"
            f"split={fl.xla_cpu_parallel_codegen_split_count}|"
            f"winograd={fl.xla_cpu_winograd}|")


# elemental_reduce's switches with the values that module gives them (a test checks that
# they agree): until it is imported (see _code_generator) nothing can have changed them
REDUCE_SWITCHES = (("lanes", "LANES", 16), ("vectors", "DIRECT_VECTORS", True),
                   ("unroll_math", "UNROLL_MATH", False), ("short", "SHORT_VECTORS", True))


def _codegen_switches() -> str:
    """Module-level code generation switches that benchmarks flip (part of the cache key, so
    that a program compiled one way is never served for the other)."""
    reduce = sys.modules.get("xlapy.backends.llvm.elemental_reduce")
    return (f"direct={codegen.DIRECT_PIPELINE}|unroll={codegen.LOOP_UNROLLING}|"
            f"launch={LAUNCH_SINGLE_KERNELS}|" + "|".join(
                f"{key}={getattr(reduce, name, default)}"  # (None, or still importing)
                for key, name, default in REDUCE_SWITCHES))


def scalar_functions(llmod) -> frozenset:
    """The functions with a loop LLVM's vectorizer could still vectorize
    (loop_analysis.needs_vectorizer): a part defining one takes -O3 (part_pipelines)."""
    from xlapy.backends.llvm import loop_analysis  # (compiling only: _code_generator)
    ordered = ordered_fp_reductions()
    return frozenset(f.name for f in llmod.functions
                     if f.blocks and loop_analysis.needs_vectorizer(f, ordered))


def part_pipelines(texts: list[str], scalar: frozenset) -> list[str]:
    """The LLVM pipeline of each part (codegen.optimize): "direct" where the part defines
    none of the `scalar` functions, else "O3". codegen.DIRECT_PIPELINE False: "O3" for
    all."""
    if not codegen.DIRECT_PIPELINE:
        return ["O3"] * len(texts)
    return ["O3" if defined_functions(t) & scalar else "direct" for t in texts]


def ordered_fp_reductions() -> bool:
    """Whether LLVM's loop vectorizer vectorizes loops with ordered (not reassociable)
    floating-point reductions for the target code is made for (TargetTransformInfo::
    enableOrderedReductions: not on x86; AArch64 does). Where it does not, a loop that
    accumulates a float sum leaves the vectorizer nothing to do (loop_analysis.py)."""
    e = emission()
    triple = (e.target if e is not None else host()).triple
    return not triple.startswith(("x86_64", "i386", "i486", "i586", "i686"))


def _warn_unused_donations(emitter) -> None:
    unused = sorted(set(emitter.requested_aliases.items()) - set(emitter.aliases.items()))
    if unused:
        pairs = ", ".join(f"output {o} <- parameter leaf {p}" for o, p in unused)
        warnings.warn(f"module {emitter.hlo.name}: some donated buffers could not be reused "
                      f"({pairs}): the parameter is still read after the output is written, "
                      "or the output is not computed by its own kernel; those outputs get "
                      "fresh memory", XlapyWarning, stacklevel=3)
