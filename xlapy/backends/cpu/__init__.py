"""The cpu backend: HLO -> LLVM IR -> native code for the host, run in-process.

Layers, each importing only from those below it (tests/test_layering.py checks them):

  compiler.py      the pipeline of one compilation, the in-memory and disk caches
  executable.py    running compiled code (disk_cache.py: what the disk cache stores)
  emitters/        HLO -> LLVM IR (program, kernels, gemm, sort, scatter, LAPACK calls)
  passes/          the cpu HLO pipeline and the plans the emitters follow
  runtime/         what compiled code calls and how it is called (loader, thread pool,
                   launcher, trampoline, BLAS, output pool); never imports the compiler
  codegen.py       LLVM IR text -> object code (split.py, parallel_compile.py)
  target.py        the CPU being compiled for
  options.py       settings from the environment
"""

from xlapy.backends.base import Platform, register_platform
from xlapy.backends.cpu.compiler import CpuCompiler


class CpuPlatform(Platform):
    name = "cpu"

    def __init__(self):
        self.compiler = CpuCompiler()


register_platform("cpu", CpuPlatform)
