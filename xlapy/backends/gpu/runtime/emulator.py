"""The host emulator: a Device (executor.py) that runs a program's kernels on this CPU.

The kernels' LLVM IR (the same text the PTX is made from, emitted with xlapy's own math in
place of libdevice's) is compiled for the host. Kernels without warp operations get a
driver `<kernel>.emu(args, grid, block)` that runs every (block, thread) pair in turn, the
special registers (tid.x, ctaid.x, ntid.x, nctaid.x) read from globals it sets. Kernels
with warp shuffles and barriers (row reductions) run each block's threads as OS threads:
shfl.sync.down exchanges values through the warp's slots between two warp barriers,
barrier0 is a barrier of the block's threads, shared memory (addrspace 3) is a plain
global (one block runs at a time), and the special registers come from the thread.
Thread indices, launch dimensions, warp-level reductions, buffer bookkeeping and the
thunks' control flow are exercised as on a GPU; libdevice is not (ptxas checks its PTX).
"""

from __future__ import annotations

import ctypes
import re
import threading

import llvmlite.binding as llvm
import ml_dtypes
import numpy as np

from xlapy.backends.gpu.runtime.allocator import CachingAllocator
from xlapy.backends.gpu.runtime.device_array import GpuDevice
from xlapy.backends.gpu.runtime.program import Gemm
from xlapy.errors import XlapyError

_SREGS = tuple(f"{r}.{a}" for r in ("tid", "ctaid", "ntid", "nctaid") for a in "xyz")
_KERNEL_RE = re.compile(r'^define\s+ptx_kernel\s+void\s+@"?([^"(\s]+)"?\(([^)]*)\)', re.M)
_DRIVER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)


def host_ir(text: str) -> tuple[str, dict, set]:
    """The kernels' IR made runnable on the host: (IR text, {kernel: number of args},
    the kernels that use warp shuffles or barriers and run threaded)."""
    kernels = {m.group(1): (len([a for a in m.group(2).split(",") if a.strip()]))
               for m in _KERNEL_RE.finditer(text)}
    if "__nv_" in text:
        raise XlapyError("the emulator has no libdevice: compile the program with "
                         "use_libdevice=False")
    threaded = {k for k, body in _bodies(text).items()
                if k in kernels and ("llvm.nvvm.shfl" in body or "llvm.nvvm.barrier" in body)}
    out = []
    for line in text.splitlines():
        if line.startswith(("target triple", "target datalayout")):
            continue
        if line.startswith("declare") and "llvm.nvvm." in line:
            continue
        line = line.replace("ptx_kernel ", "").replace(" addrspace(3)", "")
        line = re.sub(r'@"?llvm\.nvvm\.read\.ptx\.sreg\.([a-z.]+?)"?\(',
                      r'@"xlapy_emu_sreg.\1"(', line)
        line = re.sub(r'@"?llvm\.nvvm\.shfl\.sync\.down\.i32"?\(', '@"xlapy_emu_shfl"(', line)
        line = re.sub(r'@"?llvm\.nvvm\.barrier0"?\(', '@"xlapy_emu_barrier"(', line)
        out.append(line)
    out.append("@emu.threaded = internal global i32 0")
    out.append('declare i32 @"xlapy_emu_shfl"(i32, i32, i32, i32)')
    out.append('declare void @"xlapy_emu_barrier"()')
    out.append('declare i32 @"xlapy_emu_thread_sreg"(i32)')
    for k, s_ in enumerate(_SREGS):
        g = s_.replace(".", "_")
        # single-threaded launches: the driver's globals; threaded: this thread's values
        one = s_.startswith("n") and not s_.endswith("x")  # ntid.y .. nctaid.z: 1
        out.append(f"@emu.{g} = internal global i32 {int(one)}")
        out.append(f"""define internal i32 @"xlapy_emu_sreg.{s_}"() {{
  %t = load i32, ptr @emu.threaded
  %c = icmp ne i32 %t, 0
  br i1 %c, label %thread, label %global
thread:
  %v1 = call i32 @"xlapy_emu_thread_sreg"(i32 {k})
  ret i32 %v1
global:
  %v = load i32, ptr @emu.{g}
  ret i32 %v
}}""")
    out.append("define void @xlapy_emu_set_threaded(i32 %on) {\n"
               "  store i32 %on, ptr @emu.threaded\n  ret void\n}")
    for name, n in kernels.items():
        out.append(_driver(name, n))
    return "\n".join(out) + "\n", kernels, threaded


def _bodies(text: str) -> dict:
    """{function name: its text} for the functions defined in an LLVM IR text."""
    out = {}
    for m in re.finditer(r'^define[^@]*@"?([^"(\s]+)"?\(.*?^}', text, re.M | re.S):
        out[m.group(1)] = m.group(0)
    return out


def _driver(name: str, n: int) -> str:
    """`{name}.emu`(args, grid, block): the kernel called for every block index (ctaid.x)
    and, inside, every thread index (tid.x), one after the other."""
    loads = "".join(f"  %p{k} = getelementptr ptr, ptr %args, i64 {k}\n"
                    f"  %a{k} = load ptr, ptr %p{k}\n" for k in range(n))
    args = ", ".join(f"ptr %a{k}" for k in range(n))
    call = f'  call void @"{name}"({args})\n'
    threads = _count_loop("t", "block", "tid_x", "bb", "te", call)
    blocks = _count_loop("b", "grid", "ctaid_x", "entry", "done",
                         f"  br label %th\n{threads}te:\n")
    return f"""define void @"{name}.emu"(ptr %args, i32 %grid, i32 %block) {{
entry:
  store i32 %grid, ptr @emu.nctaid_x
  store i32 %block, ptr @emu.ntid_x
{loads}  br label %bh
{blocks}done:
  ret void
}}"""


def _count_loop(v: str, bound: str, sreg: str, pred: str, exit_: str, body: str) -> str:
    """IR text of `for (%{v}i = 0; %{v}i < %{bound}; ++)`, entered from block `pred`,
    leaving to `exit_`: the header {v}h, then {v}b storing the index to @emu.{sreg} and
    running `body` (which may add blocks), then the latch {v}l."""
    return f"""{v}h:
  %{v}i = phi i32 [0, %{pred}], [%{v}n, %{v}l]
  %{v}c = icmp slt i32 %{v}i, %{bound}
  br i1 %{v}c, label %{v}b, label %{exit_}
{v}b:
  store i32 %{v}i, ptr @emu.{sreg}
{body}  br label %{v}l
{v}l:
  %{v}n = add i32 %{v}i, 1
  br label %{v}h
"""


_ENGINES: list = []   # keep the engines (their code) alive as long as the process


class _Block:
    """One threaded block's shared state: its barrier, its warps' exchange slots."""

    def __init__(self, ctaid: tuple, grid: tuple, block: tuple):
        self.ctaid, self.grid, self.block = ctaid, grid, block
        threads = block[0] * block[1] * block[2]
        self.barrier = threading.Barrier(threads, timeout=BARRIER_TIMEOUT)
        warps = -(-threads // WARP)
        self.warp_barriers = [threading.Barrier(min(WARP, threads - w * WARP),
                                                timeout=BARRIER_TIMEOUT) for w in range(warps)]
        self.slots = [[0] * WARP for _ in range(warps)]
        self.error: BaseException | None = None


WARP = 32
BARRIER_TIMEOUT = 30.0
_thread = threading.local()   # .tid (linear), .xyz, .block of the emulated GPU thread here


@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
def _thread_sreg(k):
    """The special register _SREGS[k] of this thread: tid, ctaid, ntid, nctaid (x y z)."""
    blk = _thread.block
    return (_thread.xyz + blk.ctaid + blk.block + blk.grid)[k]


@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                  ctypes.c_int32)
def _shfl_down(mask, value, delta, clamp):
    """shfl.sync.down: lane l gets lane l + delta's value, its own past the clamp lane."""
    blk, tid = _thread.block, _thread.tid
    try:
        w, lane = divmod(tid, WARP)
        slots = blk.slots[w]
        slots[lane] = value
        blk.warp_barriers[w].wait()
        src = lane + delta
        out = slots[src] if src <= (clamp & 31) and src < len(slots) else value
        blk.warp_barriers[w].wait()
        return out
    except BaseException as e:  # a broken barrier: the kernel diverged
        blk.error = blk.error or e
        return 0


@ctypes.CFUNCTYPE(None)
def _barrier():
    blk = _thread.block
    try:
        blk.barrier.wait()
    except BaseException as e:
        blk.error = blk.error or e


_SYMBOLS_ADDED = False
_LAUNCH_LOCK = threading.Lock()


def _add_symbols() -> None:
    global _SYMBOLS_ADDED
    if not _SYMBOLS_ADDED:
        for name, fn in (("xlapy_emu_thread_sreg", _thread_sreg), ("xlapy_emu_shfl", _shfl_down),
                         ("xlapy_emu_barrier", _barrier)):
            llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
        _SYMBOLS_ADDED = True


class EmulatedContext:
    """The emulator's memory (device_array.py's context): host blocks from a caching
    allocator, copies with memmove; every emulated program shares it, as the programs of
    one CUDA context share its memory. `raw` counts the blocks held (for tests)."""

    def __init__(self):
        self.device = GpuDevice("gpu-emulator", 0, "host emulator")
        self._blocks: dict[int, ctypes.Array] = {}
        self._lock = threading.Lock()
        self.allocator = CachingAllocator(self._raw_alloc, self._raw_free)

    def _raw_alloc(self, nbytes: int) -> int:
        buf = ctypes.create_string_buffer(nbytes)
        addr = ctypes.addressof(buf)
        with self._lock:
            self._blocks[addr] = buf
        return addr

    def _raw_free(self, addr: int) -> None:
        with self._lock:
            del self._blocks[addr]

    def upload(self, addr: int, host: np.ndarray) -> None:
        ctypes.memmove(addr, host.ctypes.data, host.nbytes)

    def download(self, addr: int, out: np.ndarray) -> None:
        ctypes.memmove(out.ctypes.data, addr, out.nbytes)

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)

    def synchronize(self) -> None:
        """(Emulated work has finished when its call returns.)"""


_CONTEXT: EmulatedContext | None = None
_CONTEXT_LOCK = threading.Lock()


def emulated_context() -> EmulatedContext:
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            _CONTEXT = EmulatedContext()
        return _CONTEXT


class EmulatedDevice:
    """executor.Device on host memory; kernels compiled from the program's LLVM IR."""

    def __init__(self, llvm_ir: str):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _add_symbols()
        text, kernels, threaded = host_ir(llvm_ir)
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
        self._threaded = {k: ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * kernels[k])(
            engine.get_function_address(k)) for k in threaded}
        self._set_threaded = ctypes.CFUNCTYPE(None, ctypes.c_int32)(
            engine.get_function_address("xlapy_emu_set_threaded"))
        self._n_args = kernels
        self.context = emulated_context()
        self.launches: list = []   # (kernel, grid, block): what ran, for tests

    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None:
        if kernel not in self._threaded and (tuple(grid[1:]) != (1, 1)
                                             or tuple(block[1:]) != (1, 1)):
            raise XlapyError(f"the emulator runs one-dimensional launches only ({kernel}: "
                             f"grid {grid}, block {block})")
        if len(args) != self._n_args[kernel]:
            raise XlapyError(f"kernel {kernel} takes {self._n_args[kernel]} pointers, "
                             f"got {len(args)}")
        arr = (ctypes.c_void_p * max(len(args), 1))(*args)
        self.launches.append((kernel, tuple(grid), tuple(block)))
        if kernel in self._threaded:
            self._launch_threaded(self._threaded[kernel], tuple(grid), tuple(block), args)
        else:
            self._drivers[kernel](ctypes.addressof(arr), grid[0], block[0])

    def _launch_threaded(self, fn, grid: tuple, block: tuple, args: list) -> None:
        """A kernel with warp shuffles or barriers: each block's threads as OS threads
        (ctypes releases the GIL while they run), block after block."""
        bx, by, bz = block
        ids = [(x, y, z) for z in range(bz) for y in range(by) for x in range(bx)]

        def run(blk, xyz):
            _thread.block, _thread.xyz = blk, xyz
            _thread.tid = xyz[0] + bx * (xyz[1] + by * xyz[2])
            try:
                fn(*args)
            except BaseException as e:
                blk.error = blk.error or e

        with _LAUNCH_LOCK:
            self._set_threaded(1)
            try:
                blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1])
                          for x in range(grid[0])]
                for b in blocks:
                    blk = _Block(b, grid, block)
                    threads = [threading.Thread(target=run, args=(blk, t)) for t in ids]
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
                    if blk.error is not None:
                        raise XlapyError(f"emulated block {b} failed: {blk.error!r}")
            finally:
                self._set_threaded(0)

    def gemm(self, t: Gemm, out: int, lhs: int, rhs: int) -> None:
        dt = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}.get(t.dtype)
        if dt is None:
            raise XlapyError(f"the emulator's gemm has no {t.dtype}")
        a = np.empty((t.batch, t.m, t.k), dt)
        b = np.empty((t.batch, t.k, t.n), dt)
        self.context.download(lhs, a)
        self.context.download(rhs, b)
        c = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)
        self.context.upload(out, np.ascontiguousarray(c))
