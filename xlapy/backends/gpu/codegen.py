"""LLVM IR -> PTX through llvmlite's NVPTX target, with libdevice linked in.

  ptx = compile_ptx(llvm_ir_text, arch=90)
  optimized = optimize_ir(llvm_ir_text, arch)     (the IR the PTX comes from)

libdevice (NVIDIA's math library as LLVM bitcode) is linked when the kernels call one of
its __nv_* functions; every function but the kernels is then internalized, so the
optimizer drops what is unused and inlines the rest. libdevice asks __nvvm_reflect
whether to flush denormals: the module flag nvvm-reflect-ftz answers (0: no, as XLA
without --xla_gpu_ftz), and the NVPTX target's NVVMReflect pass folds the calls.
"""

from __future__ import annotations

import functools
import os
import re
import threading

import llvmlite.binding as llvm

from xlapy.backends.gpu.ptx_workarounds import integer_minmax_as_select
from xlapy.backends.gpu.target import TRIPLE, arch_name
from xlapy.errors import XlapyError

LIBDEVICE_PATHS = ("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc",)
_LOCK = threading.Lock()


def libdevice_path() -> str | None:
    """XLAPY_LIBDEVICE, the CUDA toolkit's, or pip's nvidia-cuda-nvcc-cu12 copy."""
    env = os.environ.get("XLAPY_LIBDEVICE")
    candidates = [env] if env else []
    candidates += list(LIBDEVICE_PATHS)
    try:
        import nvidia.cuda_nvcc as nvcc  # optional: pip's toolkit pieces
        candidates.append(os.path.join(list(nvcc.__path__)[0], "nvvm", "libdevice",
                                       "libdevice.10.bc"))
    except ImportError:
        pass
    for c in candidates:
        if c and os.path.exists(c):
            return c
    return None


@functools.lru_cache(maxsize=1)
def _libdevice_bitcode() -> bytes:
    path = libdevice_path()
    if path is None:
        raise XlapyError("libdevice.10.bc was not found (looked in XLAPY_LIBDEVICE, "
                         f"{', '.join(LIBDEVICE_PATHS)}, and pip's nvidia-cuda-nvcc-cu12); the "
                         "gpu backend's math functions need it")
    with open(path, "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def _initialized() -> bool:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return True


def target_machine(arch: int):
    _initialized()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=arch_name(arch), features="+ptx80", opt=3)


FTZ_FLAG = '!llvm.module.flags = !{{!{n}}}\n!{n} = !{{i32 4, !"nvvm-reflect-ftz", i32 0}}\n'


def with_ftz_flag(text: str) -> str:
    """The module text with the nvvm-reflect-ftz flag (0), as metadata numbered after the
    module's own (loop hints: NOT_VECTORIZED)."""
    if "nvvm-reflect-ftz" in text:
        return text
    n = max((int(k) for k in re.findall(r"!(\d+)\b", text)), default=-1) + 1
    return text + "\n" + FTZ_FLAG.format(n=n)


def optimize_ir(text: str, arch: int) -> "llvm.ModuleRef":
    """Parse, link libdevice where needed, internalize, optimize at O3 for the arch."""
    with _LOCK:
        tm = target_machine(arch)
        mod = llvm.parse_assembly(with_ftz_flag(text))
        if "__nv_" in text:
            lib = llvm.parse_bitcode(_libdevice_bitcode())
            lib.triple = TRIPLE
            lib.data_layout = mod.data_layout
            mod.link_in(lib)
        _internalize(mod, kernel_names(text))
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pb = llvm.create_pass_builder(tm, pto)
        dce = llvm.create_new_module_pass_manager()  # drop unused libdevice first
        dce.add_global_dead_code_eliminate_pass()
        dce.run(mod, pb)
        pb.getModulePassManager().run(mod, pb)
        return mod


def kernel_names(text: str) -> set:
    return set(m.group(1) for m in _KERNEL_RE.finditer(text))


_KERNEL_RE = re.compile(r'^define\s+ptx_kernel\s+void\s+@"?([^"(\s]+)"?\(', re.M)


def _internalize(mod, kernels: set) -> None:
    """Every defined function that is not a kernel becomes internal (libdevice's included),
    so the optimizer removes the unused ones."""
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in kernels:
            fn.linkage = "internal"
    for g in mod.global_variables:
        if not g.is_declaration and g.name.startswith("__nv"):
            g.linkage = "internal"


def compile_ptx(text: str, arch: int) -> str:
    mod = optimize_ir(text, arch)
    with _LOCK:
        ptx = target_machine(arch).emit_assembly(mod)
    return integer_minmax_as_select(ptx)   # (around a ptxas bug: ptx_workarounds.py)
