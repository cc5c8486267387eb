"""The machine code generation targets: LLVM's view of a CPU, and the facts code generation
takes from it.

  host()                      Target(triple, cpu, features) of this process's machine
  target_machine(target)      LLVM TargetMachine for a Target (the host's: cached)
  new_target_machine()        a fresh host TargetMachine (an MCJIT engine owns the one it gets)
  preferred_vector_width()    512 where wide vectors do not cost clock speed, else None
  vector_bits()               the vector width hand-vectorized code is written for
  self_contained()            whether emitted code must not call the runtime (BLAS, LAPACK)
  threads_available()         whether xlapy's thread pool runs on this platform
  llvm_tables(triple)         (CPU names, feature names) LLVM knows for a triple
  widest_vector_bits(tm, triple)  512, 256 or 128: a TargetMachine's widest vectors

XLAPY_HOST_CPU=<LLVM CPU name>[,+feature,-feature...] makes the JIT generate code for that
CPU (its default features, changed by those given) instead of this machine's: the code
paths of another machine (haswell's AVX2, skylake-avx512's 256-bit preference) tested on
this one. The CPU must be one whose instructions this machine has; code for another one
stops with SIGILL.

A Target names a triple, a CPU and its features, so code can be generated for another
machine than this one (ahead-of-time compilation, xlapy/aot); the JIT uses host(). The
emitters and passes ask the functions above, which answer for the host unless code is being
generated for an Emission (`with emitting_for(emission):`, set by the AOT driver around
its pipeline and emission): its target's vector widths, and self-contained code (every dot
on xlapy's own gemm, no symbol resolved by the JIT's loader).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import platform
import subprocess
import sys
from dataclasses import dataclass

import llvmlite.binding as llvm

from xlapy.errors import XlapyError

# Static relocation with the JIT's (large) code model: code addresses constants and other
# functions absolutely, patched when loaded. Position-independent code would go through a
# global offset table, which MCJIT's ELF loader gets wrong when one engine loads several
# objects that use one (the parts of a split module: split.py); the first object's
# constant-pool loads then read through the second one's table and crash.
RELOC = "static"

# Linux system call numbers of futex, by machine (the thread pool waits with it)
SYS_FUTEX = {"x86_64": 202, "aarch64": 98, "arm64": 98}


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str  # LLVM's "+avx2,-avx512f,..." form


@functools.lru_cache(maxsize=None)
def init_llvm() -> None:
    """LLVM's native target, assembly printer and parser (once per process)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


def _host_cpu_override() -> str:
    """XLAPY_HOST_CPU's value ("" when unset)."""
    return os.environ.get("XLAPY_HOST_CPU", "").strip()


@functools.lru_cache(maxsize=None)
def host() -> Target:
    """This machine, or the CPU XLAPY_HOST_CPU names (with its default features)."""
    init_llvm()
    triple = llvm.get_process_triple()
    value = _host_cpu_override()
    if value:
        cpu, *features = [x.strip() for x in value.split(",")]
        try:
            cpus, known = llvm_tables(triple)
        except RuntimeError as e:
            raise XlapyError(f"XLAPY_HOST_CPU={value}: {e}") from None
        if cpu not in cpus:
            raise XlapyError(f"XLAPY_HOST_CPU={value}: {cpu} is not a CPU LLVM knows for "
                             f"{triple}; valid: {', '.join(sorted(cpus))}")
        for f in features:
            if len(f) < 2 or f[0] not in "+-" or f[1:] not in known:
                raise XlapyError(f"XLAPY_HOST_CPU={value}: '{f}' is not '+name' or '-name' "
                                 f"with a feature LLVM knows; valid names: "
                                 f"{', '.join(sorted(known))}")
        return Target(triple, cpu, ",".join(features))
    return Target(triple, llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


@functools.lru_cache(maxsize=None)
def llvm_tables(triple: str) -> tuple[frozenset, frozenset]:
    """(CPU names, feature names) LLVM lists for a triple's target: its -mcpu=help output,
    which LLVM prints to stderr when a target machine is made for the CPU "help", once per
    process (hence a child process). RuntimeError when it cannot be listed."""
    code = ("import llvmlite.binding as l; l.initialize_all_targets(); "
            f"l.Target.from_triple({triple!r}).create_target_machine(cpu='help')")
    try:
        text = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60).stderr
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"could not list LLVM's CPUs for {triple}: {e}") from None
    cpus: set = set()
    feats: set = set()
    section = None
    for line in text.splitlines():
        if line.startswith("Available CPUs"):
            section = cpus
        elif line.startswith("Available features"):
            section = feats
        elif section is not None and line.startswith("  ") and " - " in line:
            section.add(line.split(" - ")[0].strip())
    if not cpus:
        raise RuntimeError(f"could not list LLVM's CPUs for {triple}: {text.strip()[:200]}")
    return frozenset(cpus), frozenset(feats)


_PROBE = """
define <16 x float> @probe(<16 x float> %a, <16 x float> %b) {
  %c = fadd <16 x float> %a, %b
  ret <16 x float> %c
}
"""


def widest_vector_bits(tm, triple: str) -> int:
    """A target machine's widest vector registers, read off the code LLVM makes for a
    16-float add (zmm: 512, ymm: 256, else 128: SSE, NEON); called with LLVM's lock."""
    mod = llvm.parse_assembly(_PROBE)
    mod.triple = triple
    asm = tm.emit_assembly(mod)
    return 512 if "zmm" in asm else 256 if "ymm" in asm else 128


def new_target_machine():
    """A fresh TargetMachine for the host. An MCJIT engine takes ownership of the one it is
    given (and frees it with the engine), so every engine needs its own."""
    t = host()
    return llvm.Target.from_triple(t.triple).create_target_machine(
        cpu=t.cpu, features=t.features, opt=3, reloc=RELOC, codemodel="jitdefault", jit=True)


@functools.lru_cache(maxsize=None)
def target_machine():
    """The host TargetMachine used for optimization and code generation (never given to an
    engine)."""
    return new_target_machine()


_THROTTLING_AVX512 = ("skylake-avx512", "cascadelake", "cooperlake", "knl", "knm")


@dataclass(frozen=True)
class Emission:
    """Code generation for another target than the JIT's host (ahead-of-time compilation).

    target                  the machine the code runs on
    vector_bits             its widest vector registers (512, 256 or 128)
    prefer_vector_width     the "prefer-vector-width" kernels ask LLVM for, or None
    self_contained          True: the code may call nothing the JIT's loader resolves (BLAS,
                            LAPACK, the runtime's own modules): every f32/f64 dot with a
                            contraction runs on xlapy's own gemm (dot_plan.py), Cholesky
                            on IR instead of LAPACK (emitters/potrf_ir.py)"""
    target: Target
    vector_bits: int
    prefer_vector_width: int | None
    self_contained: bool = True


_emission: contextvars.ContextVar = contextvars.ContextVar("xlapy_cpu_emission", default=None)


@contextlib.contextmanager
def emitting_for(emission: Emission):
    """Passes and emitters run inside generate code for `emission` instead of the host."""
    token = _emission.set(emission)
    try:
        yield emission
    finally:
        _emission.reset(token)


def emission() -> Emission | None:
    """The Emission code is being generated for, or None for the JIT's host."""
    return _emission.get()


def self_contained() -> bool:
    e = _emission.get()
    return e is not None and e.self_contained


def preferred_vector_width() -> int | None:
    """512 on AVX-512 hosts whose wide vectors do not cost clock speed (LLVM's default
    prefers 256 bits everywhere because older Xeons throttle); None: keep LLVM's choice.
    Inside emitting_for: the emission's."""
    e = _emission.get()
    return _host_preferred_vector_width() if e is None else e.prefer_vector_width


def prefers_wide_vectors(cpu: str, has_avx512f: bool) -> bool:
    """Whether a CPU's 512-bit vectors are worth asking for (see preferred_vector_width)."""
    return has_avx512f and cpu not in _THROTTLING_AVX512


@functools.lru_cache(maxsize=None)
def _host_preferred_vector_width() -> int | None:
    init_llvm()
    t = host()
    if _host_cpu_override():  # (the named CPU's features are LLVM's defaults for it)
        avx512f = widest_vector_bits(new_target_machine(), t.triple) >= 512
    else:
        avx512f = "+avx512f" in t.features.split(",")
    return 512 if prefers_wide_vectors(t.cpu, avx512f) else None


def vector_bits() -> int:
    """The vector width code is written for by hand (the gemm's micro-kernel)."""
    e = _emission.get()
    return (_host_preferred_vector_width() or 256) if e is None else e.vector_bits


def threads_available() -> bool:
    """Whether xlapy's thread pool can run on this platform."""
    return sys.platform.startswith("linux") and platform.machine() in SYS_FUTEX
