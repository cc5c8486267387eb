"""The host emulator: a Device (executor.py) that runs a program's kernels on this CPU.

The kernels' LLVM IR (the same text the PTX is made from, emitted without the kernels that
need a warp: row reductions then take the loop kernel's form, and with xlapy's own math in
place of libdevice's) is compiled for the host with the special registers (tid.x, ctaid.x,
ntid.x, nctaid.x) read from globals; each kernel gets a driver `<kernel>.emu(args, grid,
block)` that runs every (block, thread) pair in turn. Thread indices, launch dimensions,
buffer bookkeeping and the thunks' control flow are exercised as on a GPU; warp shuffles,
barriers and libdevice are not (ptxas checks those kernels' PTX only).
"""

from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import ml_dtypes
import numpy as np

from xlapy.backends.gpu.runtime.program import Gemm
from xlapy.errors import XlapyError

_SREGS = ("tid.x", "ctaid.x", "ntid.x", "nctaid.x")
_KERNEL_RE = re.compile(r'^define\s+ptx_kernel\s+void\s+@"?([^"(\s]+)"?\(([^)]*)\)', re.M)
_DRIVER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)


def host_ir(text: str) -> tuple[str, dict]:
    """The kernels' IR made runnable on the host: (IR text, {kernel: number of args})."""
    kernels = {m.group(1): (len([a for a in m.group(2).split(",") if a.strip()]))
               for m in _KERNEL_RE.finditer(text)}
    if "addrspace(3)" in text or "llvm.nvvm.shfl" in text or "llvm.nvvm.barrier" in text:
        raise XlapyError("the emulator runs kernels without warps: compile the program "
                         "without row reductions (ProgramEmitter(row_reductions=False))")
    if "__nv_" in text:
        raise XlapyError("the emulator has no libdevice: compile the program with "
                         "use_libdevice=False")
    out = []
    for line in text.splitlines():
        if line.startswith(("target triple", "target datalayout")):
            continue
        if line.startswith("declare") and "llvm.nvvm.read.ptx.sreg." in line:
            continue
        line = line.replace("ptx_kernel ", "")
        out.append(re.sub(r'@"?llvm\.nvvm\.read\.ptx\.sreg\.([a-z.]+?)"?\(',
                          r'@"xlapy_emu_sreg.\1"(', line))
    for s in _SREGS:
        g = s.replace(".", "_")
        out.append(f"@emu.{g} = internal global i32 0")
        out.append(f"define internal i32 @\"xlapy_emu_sreg.{s}\"() {{\n"
                   f"  %v = load i32, ptr @emu.{g}\n  ret i32 %v\n}}")
    for name, n in kernels.items():
        out.append(_driver(name, n))
    return "\n".join(out) + "\n", kernels


def _driver(name: str, n: int) -> str:
    loads = "".join(f"  %p{k} = getelementptr ptr, ptr %args, i64 {k}\n"
                    f"  %a{k} = load ptr, ptr %p{k}\n" for k in range(n))
    args = ", ".join(f"ptr %a{k}" for k in range(n))
    return f"""define void @"{name}.emu"(ptr %args, i32 %grid, i32 %block) {{
entry:
  store i32 %grid, ptr @emu.nctaid_x
  store i32 %block, ptr @emu.ntid_x
{loads}  br label %bh
bh:
  %bi = phi i32 [0, %entry], [%bn, %bl]
  %bc = icmp slt i32 %bi, %grid
  br i1 %bc, label %bb, label %done
bb:
  store i32 %bi, ptr @emu.ctaid_x
  br label %th
th:
  %ti = phi i32 [0, %bb], [%tn, %tb]
  %tc = icmp slt i32 %ti, %block
  br i1 %tc, label %tb, label %bl
tb:
  store i32 %ti, ptr @emu.tid_x
  call void @"{name}"({args})
  %tn = add i32 %ti, 1
  br label %th
bl:
  %bn = add i32 %bi, 1
  br label %bh
done:
  ret void
}}"""


_ENGINES: list = []   # keep the engines (their code) alive as long as the process


class EmulatedDevice:
    """executor.Device on host memory; kernels compiled from the program's LLVM IR."""

    def __init__(self, llvm_ir: str):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        text, kernels = host_ir(llvm_ir)
        mod = llvm.parse_assembly(text)
        mod.triple = llvm.get_process_triple()
        mod.verify()
        # the host's CPU and features (half-precision conversions as instructions, not
        # compiler-rt calls the JIT could not resolve)
        tm = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
            opt=1)
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        _ENGINES.append(engine)
        self._drivers = {k: _DRIVER(engine.get_function_address(f"{k}.emu")) for k in kernels}
        self._n_args = kernels
        self._memory: dict[int, ctypes.Array] = {}
        self.launches: list = []   # (kernel, grid, block): what ran, for tests

    def alloc(self, nbytes: int) -> int:
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        addr = ctypes.addressof(buf)
        self._memory[addr] = buf
        return addr

    def free(self, addr: int) -> None:
        self._memory.pop(addr, None)

    def upload(self, addr: int, data: bytes) -> None:
        ctypes.memmove(addr, data, len(data))

    def download(self, addr: int, nbytes: int) -> bytes:
        return ctypes.string_at(addr, nbytes)

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)

    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None:
        if grid[1:] != (1, 1) or block[1:] != (1, 1):
            raise XlapyError(f"the emulator runs one-dimensional launches only ({kernel}: "
                             f"grid {grid}, block {block})")
        if len(args) != self._n_args[kernel]:
            raise XlapyError(f"kernel {kernel} takes {self._n_args[kernel]} pointers, "
                             f"got {len(args)}")
        arr = (ctypes.c_void_p * max(len(args), 1))(*args)
        self.launches.append((kernel, tuple(grid), tuple(block)))
        self._drivers[kernel](ctypes.addressof(arr), grid[0], block[0])

    def gemm(self, t: Gemm, out: int, lhs: int, rhs: int) -> None:
        dt = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}.get(t.dtype)
        if dt is None:
            raise XlapyError(f"the emulator's gemm has no {t.dtype}")
        size = np.dtype(dt).itemsize
        a = np.frombuffer(self.download(lhs, t.batch * t.m * t.k * size), dt)
        b = np.frombuffer(self.download(rhs, t.batch * t.k * t.n * size), dt)
        c = np.matmul(a.reshape(t.batch, t.m, t.k).astype(np.float32),
                      b.reshape(t.batch, t.k, t.n).astype(np.float32)).astype(dt)
        self.upload(out, c.tobytes())
