"""The cpu backend: HLO -> LLVM IR -> native code for the host, run in-process."""

from xlapy.backends.base import Platform, register_platform
from xlapy.backends.cpu import gemm, gemm_epilogue, gemm_update
# dedicated emitters (importing registers them)
from xlapy.backends.cpu import (custom_calls, dynamic_update_slice, lapack, scatter,
                                select_and_scatter, sort)
from xlapy.backends.cpu.compiler import CpuCompiler


class CpuPlatform(Platform):
    name = "cpu"

    def __init__(self):
        self.compiler = CpuCompiler()


register_platform("cpu", CpuPlatform)
