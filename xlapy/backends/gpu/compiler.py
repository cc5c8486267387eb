"""The gpu backend's compiler: HLO module -> a Program of kernels (PTX) and thunks.

  program = compile_program(module, arch=90)              no GPU needed (PTX in .ptx)
  program = compile_program(module, emulate=True)         kernels for the host emulator
  exe = GpuCompiler(device_factory, arch).compile(module)

Stages: verify; clone; the gpu pass pipeline (passes/pipeline.py); emit the kernels and
thunks (emitters/program.py); LLVM -> PTX (codegen.py). Executables are cached in memory by
the module's text and the options.
"""

from __future__ import annotations

import hashlib
import threading

from xlapy.backends.base import Compiler
from xlapy.backends.gpu import codegen
from xlapy.backends.gpu.emitters.program import ProgramEmitter
from xlapy.backends.gpu.executable import GpuExecutable
from xlapy.backends.gpu.passes.pipeline import run_gpu_pipeline
from xlapy.backends.gpu.runtime.program import Program
from xlapy.backends.gpu.target import parse_arch
from xlapy.hlo.ir import Module
from xlapy.hlo.verifier import verify


def emit_program(module: Module, emulate: bool = False) -> tuple[Program, str]:
    """(program, LLVM IR text) of a module, before code generation. emulate: the form the
    host emulator runs (xlapy's own math instead of libdevice)."""
    verify(module)
    optimized = run_gpu_pipeline(module.clone())
    pe = ProgramEmitter(optimized, use_libdevice=not emulate)
    program = pe.emit()
    program.llvm_ir = str(pe.llmod)
    return program, program.llvm_ir


def compile_program(module: Module, arch: int | str | None = None,
                    emulate: bool = False) -> Program:
    program, text = emit_program(module, emulate)
    if not emulate:
        program.ptx = codegen.compile_ptx(text, parse_arch(arch))
    return program


class GpuCompiler(Compiler):
    """device_factory(program) -> an executor.Device holding the program's kernels."""

    def __init__(self, device_factory, arch: int | str | None = None, emulate: bool = False,
                 platform_name: str = "gpu"):
        self.device_factory = device_factory
        self.arch = parse_arch(arch)
        self.emulate = emulate
        self.platform_name = platform_name
        self._memory: dict[str, GpuExecutable] = {}
        self._lock = threading.Lock()

    def clear_cache(self) -> None:
        with self._lock:
            self._memory.clear()

    def compile(self, module: Module) -> GpuExecutable:
        key = hashlib.sha256(f"{module.to_string(print_metadata=False)}|{self.arch}|"
                             f"{self.emulate}".encode()).hexdigest()
        with self._lock:
            exe = self._memory.get(key)
        if exe is not None:
            return exe
        program = compile_program(module, self.arch, self.emulate)
        exe = GpuExecutable(module, program, self.device_factory(program), self.platform_name)
        with self._lock:
            self._memory[key] = exe
        return exe
