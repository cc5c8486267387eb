"""The floating-point control register in generated code: denormal flushing.

XLA's CPU runtime runs compiled code with denormals flushed to zero (TensorFlow and JAX set
flush-to-zero and denormals-are-zero on the threads that execute it: `jax.jit(lambda x: x *
2)(np.float32(1e-39))` is 0), while compiling with them off. xlapy's cpu programs do the
same by default (`--xla_cpu_ftz`, XLAPY_FLAGS): the entry function sets the mode for its
run and restores the caller's on return, and the thread pool's workers take the caller's
mode for every chunk they run, so the semantics do not depend on which thread computes an
element. Arithmetic on denormals is also slow on x86 (a microcode assist per operation):
an MNIST training step fed with fresh batches took 148.7 us with them and 60.4 flushed
(`.venv/bin/python benchmarks/runtime_costs.py`).

  supported(triple=None)          # x86-64 and AArch64
  mode = get_mode(b)              # i64: MXCSR (x86-64) or FPCR (AArch64), else None
  set_mode(b, mode)
  saved = flush_denormals(b)      # set FTZ and DAZ (x86-64) / FZ (AArch64); the old mode

The machine is the module's (its `triple`, set when generating code for another machine:
ahead-of-time compilation), else this host. Other architectures: no flushing (get_mode
returns None and the rest does nothing). Not
covered: OpenBLAS's own threads, which a large gemm sent to OpenBLAS (XLAPY_GEMM=blas)
runs on, keep their IEEE mode.
"""

from __future__ import annotations

import platform

from llvmlite import ir

from xlapy.backends.llvm.loops import entry_alloca
from xlapy.backends.llvm.types import I32, I64, PTR, VOID

_X86_FTZ_DAZ = 0x8000 | 0x0040      # MXCSR flush-to-zero (bit 15), denormals-are-zero (bit 6)
_ARM_FZ = 1 << 24                   # FPCR flush-to-zero


def _arch(triple: str | None = None) -> str:
    """"x86", "arm" or "" for the machine of an LLVM triple (None or unknown: this host)."""
    m = (triple or "").split("-")[0]
    if m in ("", "unknown"):
        m = platform.machine()
    return "x86" if m in ("x86_64", "AMD64") else "arm" if m in ("aarch64", "arm64") else ""


def _module_arch(b: ir.IRBuilder) -> str:
    return _arch(b.module.triple)


def supported(triple: str | None = None) -> bool:
    """Whether the floating-point mode can be read and set on that machine (this host)."""
    return bool(_arch(triple))


def _call(b: ir.IRBuilder, name: str, fty: ir.FunctionType, args: list):
    return b.call(b.module.declare_intrinsic(name, (), fty), args)


def get_mode(b: ir.IRBuilder):
    """The thread's floating-point control register as an i64 (None where unsupported)."""
    arch = _module_arch(b)
    if arch == "x86":
        slot = entry_alloca(b, I32)   # in the entry block: callers emit this in loops
        _call(b, "llvm.x86.sse.stmxcsr", ir.FunctionType(VOID, [PTR]), [slot])
        return b.zext(b.load(slot, typ=I32), I64)
    if arch == "arm":
        return _call(b, "llvm.aarch64.get.fpcr", ir.FunctionType(I64, []), [])
    return None


def set_mode(b: ir.IRBuilder, mode) -> None:
    arch = _module_arch(b)
    if mode is None:
        return
    if arch == "x86":
        slot = entry_alloca(b, I32)   # in the entry block: callers emit this in loops
        b.store(b.trunc(mode, I32), slot)
        _call(b, "llvm.x86.sse.ldmxcsr", ir.FunctionType(VOID, [PTR]), [slot])
    elif arch == "arm":
        _call(b, "llvm.aarch64.set.fpcr", ir.FunctionType(VOID, [I64]), [mode])


_MODE_INTRINSICS = frozenset({"llvm.x86.sse.stmxcsr", "llvm.x86.sse.ldmxcsr",
                              "llvm.aarch64.get.fpcr", "llvm.aarch64.set.fpcr"})


def is_mode_intrinsic(name: str) -> bool:
    """Whether `name` is one of the intrinsics get_mode and set_mode call."""
    return name in _MODE_INTRINSICS


def flush_bits(triple: str | None = None) -> int:
    """The mode bits that flush denormals: FTZ|DAZ in MXCSR, FZ in FPCR (0 elsewhere)."""
    return {"x86": _X86_FTZ_DAZ, "arm": _ARM_FZ}.get(_arch(triple), 0)


def flush_denormals(b: ir.IRBuilder):
    """Turn on denormal flushing for this thread; returns the previous mode (for set_mode)."""
    saved = get_mode(b)
    if saved is not None:
        set_mode(b, b.or_(saved, ir.Constant(I64, flush_bits(b.module.triple))))
    return saved
