"""The cpu backend's compiler: HLO module -> native code in this process.

Stages: clone the module (the caller's stays untouched); run the cpu pass pipeline; emit
LLVM IR (program.py, kernels.py, the elemental emitter); optimize and generate machine code
for the host CPU (jit.py); load it. Results are cached twice:
  - in memory, keyed by the module's fingerprint (its text without metadata), the options
    and the target;
  - on disk (~/.cache/xlapy, or XLAPY_CACHE_DIR; XLAPY_DISABLE_CACHE=1 turns it off): the
    object code and what the executable needs to run it, so another process that compiles
    the same module skips LLVM entirely.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import pickle
import threading

from xlapy.backends.base import Compiler
from xlapy.backends.cpu import jit, parallel_compile
from xlapy.backends.cpu.executable import CpuExecutable, ExecutableSpec
from xlapy.hlo.ir import Module

CODEGEN_VERSION = "12"  # (the key also hashes xlapy's sources: see source_fingerprint)
# A program that is one kernel on the thread pool runs through launch.py's precompiled entry
# instead of one of its own (benchmarks/compile_breakdown.py --launch switches it)
LAUNCH_SINGLE_KERNELS = True


def default_num_threads() -> int:
    value = os.environ.get("XLAPY_NUM_THREADS")
    if value:
        try:
            n = int(value)
        except ValueError:
            from xlapy.errors import XlapyError
            raise XlapyError("XLAPY_NUM_THREADS must be a positive integer, "
                             f"got '{value}'") from None
        return max(n, 1)
    return os.cpu_count() or 1


_SOURCE_HASH: list = []


def source_fingerprint() -> str:
    """A hash of xlapy's own source files: the disk cache never serves code compiled by
    another version of the compiler (a changed pass or emitter changes every key)."""
    if not _SOURCE_HASH:
        root = pathlib.Path(__file__).resolve().parents[2]
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            try:
                h.update(path.read_bytes())
            except OSError:
                pass
        _SOURCE_HASH.append(h.hexdigest()[:16])
    return _SOURCE_HASH[0]


def cache_dir() -> pathlib.Path | None:
    if os.environ.get("XLAPY_DISABLE_CACHE", "") not in ("", "0"):
        return None
    root = os.environ.get("XLAPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xlapy")
    return pathlib.Path(root)


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
        self._memory: dict[str, CpuExecutable] = {}
        self._lock = threading.Lock()
        self.stats = {"memory_hits": 0, "disk_hits": 0, "compiles": 0}

    def clear_cache(self) -> None:
        with self._lock:
            self._memory.clear()

    def fingerprint(self, module: Module, num_threads: int, threshold: int,
                    profile: bool = False, ftz: bool = True) -> str:
        h = hashlib.sha256()
        h.update(module.to_string(print_metadata=False).encode())
        h.update(f"|{num_threads}|{threshold}|{profile}|ftz={ftz}|{CODEGEN_VERSION}|".encode())
        h.update(_codegen_switches().encode())
        h.update(source_fingerprint().encode())
        h.update(jit.target_description().encode())
        return h.hexdigest()

    def compile(self, module: Module, num_threads: int | None = None,
                parallel_threshold: int = 100_000) -> CpuExecutable:
        from xlapy.hlo.verifier import verify
        from xlapy.tools.dump import Dumper
        verify(module)
        num_threads = num_threads or default_num_threads()
        dumper = Dumper(module, backend="cpu")
        profile = dumper.fl.xla_hlo_profile
        key = self.fingerprint(module, num_threads, parallel_threshold, profile,
                               dumper.fl.xla_cpu_ftz)
        if not dumper.active:  # dumps describe a compilation: never serve them from a cache
            with self._lock:
                exe = self._memory.get(key)
                if exe is not None:
                    self.stats["memory_hits"] += 1
                    return exe
            spec = self._load_from_disk(key)
        else:
            spec = None
        if spec is not None:
            self.stats["disk_hits"] += 1
        else:
            spec = self._compile(module, num_threads, parallel_threshold, dumper, profile)
            self.stats["compiles"] += 1
            self._store_on_disk(key, spec)
        exe = CpuExecutable(module, spec)
        with self._lock:
            self._memory[key] = exe
        return exe

    def _compile(self, module: Module, num_threads: int, threshold: int, dumper,
                 profile: bool = False) -> ExecutableSpec:
        from xlapy.backends.cpu.pipeline import run_cpu_pipeline
        from xlapy.backends.cpu.program import ModuleEmitter
        from xlapy.backends.cpu.split import join_parts, may_split, split_module
        import time
        t0 = time.perf_counter()
        parts = 1 if profile else codegen_split_count(dumper.fl)
        parallel_compile.wake(parts - 1)  # the helper threads start while Python works
        dumper.module(module, "before_optimizations")
        observers = dumper.observers()
        optimized = run_cpu_pipeline(module.clone(), observers=observers)
        dumper.module(optimized, "cpu_after_optimizations")
        t1 = time.perf_counter()
        emitter = ModuleEmitter(optimized, num_threads, threshold,
                                use_threads=jit.threads_available(), profile=profile,
                                flush_denormals=dumper.fl.xla_cpu_ftz)
        emitter.emit("xlapy_entry")
        launched = None
        if not profile:  # (profile builds count cycles per kernel function)
            from xlapy.backends.llvm.call_graph import inline_single_calls, optnone_if_only_calls
            launched = emitter.single_launch("xlapy_entry") if LAUNCH_SINGLE_KERNELS else None
            # the entry's kernels stay functions of their own where they may go to other parts
            inline_single_calls(emitter.llmod, ("xlapy_entry",) if may_split(emitter.llmod, parts)
                                else ())
            if launched is None:
                optnone_if_only_calls(emitter.llmod.get_global("xlapy_entry"))
        if dumper.enabled:
            dumper.raw("ir-no-opt.ll", _launch_comment(launched) + str(emitter.llmod))
        texts = split_module(emitter.llmod, "xlapy_entry", parts)
        if dumper.enabled and len(texts) > 1:
            dumper.raw("ir-parts.ll", join_parts(texts))
        t2 = time.perf_counter()
        objects = jit.compile_objects(texts, dumper.raw if dumper.enabled else None,
                                      part_pipelines(emitter.llmod, texts))
        t3 = time.perf_counter()
        spec = ExecutableSpec.for_module(optimized, objects, emitter.arena_size)
        spec.profile_labels = emitter.profile_labels
        spec.launch = launched
        spec.aliases = dict(emitter.aliases)
        _warn_unused_donations(emitter)
        spec.compile_seconds = {"hlo_passes": t1 - t0, "llvm_ir_emission": t2 - t1,
                                "llvm_optimize_and_codegen": t3 - t2}
        return spec

    def _load_from_disk(self, key: str) -> ExecutableSpec | None:
        root = cache_dir()
        if root is None:
            return None
        path = root / f"{key}.xlapy"
        try:
            with open(path, "rb") as f:
                spec = pickle.load(f)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError):
            return None
        return spec if isinstance(spec, ExecutableSpec) else None

    def _store_on_disk(self, key: str, spec: ExecutableSpec) -> None:
        root = cache_dir()
        if root is None:
            return
        try:
            root.mkdir(parents=True, exist_ok=True)
            tmp = root / f"{key}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                pickle.dump(spec, f)
            os.replace(tmp, root / f"{key}.xlapy")
        except OSError:
            pass  # a read-only or full cache directory only costs a recompile


def _launch_comment(launched) -> str:
    """The dump's note that the module has no entry function of its own (launch.py)."""
    if launched is None:
        return ""
    return (f"; no xlapy_entry: the runtime's xlapy_launch (launch.py) runs {launched.wrapper} "
            f"over [0, {launched.n}) in chunks of {launched.chunk} with pointers "
            f"{list(launched.sources)} ((0 param | 1 out | 2 arena, index | offset))"
            f"{', denormals flushed' if launched.flush_denormals else ''}\n")


def _codegen_switches() -> str:
    """Module-level code generation switches that benchmarks flip (part of the cache key, so
    that a program compiled one way is never served for the other)."""
    from xlapy.backends.llvm import elemental_reduce
    return (f"direct={jit.DIRECT_PIPELINE}|unroll={jit.LOOP_UNROLLING}|"
            f"launch={LAUNCH_SINGLE_KERNELS}|"
            f"lanes={elemental_reduce.LANES}|vectors={elemental_reduce.DIRECT_VECTORS}")


def part_pipelines(llmod, texts: list[str]) -> list[str]:
    """The LLVM pipeline of each part (jit.optimize): "direct" where no function the part
    defines has a loop LLVM's vectorizer could still vectorize (loop_analysis.py), else
    "O3". jit.DIRECT_PIPELINE False: "O3" for all."""
    from xlapy.backends.cpu.split import defined_functions
    from xlapy.backends.llvm.loop_analysis import needs_vectorizer
    if not jit.DIRECT_PIPELINE:
        return ["O3"] * len(texts)
    scalar = {f.name for f in llmod.functions if f.blocks and needs_vectorizer(f)}
    return ["O3" if defined_functions(t) & scalar else "direct" for t in texts]


def _warn_unused_donations(emitter) -> None:
    unused = sorted(set(emitter.requested_aliases.items()) - set(emitter.aliases.items()))
    if unused:
        import warnings
        from xlapy.errors import XlapyWarning
        pairs = ", ".join(f"output {o} <- parameter leaf {p}" for o, p in unused)
        warnings.warn(f"module {emitter.hlo.name}: some donated buffers could not be reused "
                      f"({pairs}): the parameter is still read after the output is written, "
                      "or the output is not computed by its own kernel; those outputs get "
                      "fresh memory", XlapyWarning, stacklevel=3)
