"""The CUDA driver through cuda-python (cuda-bindings): context, stream, device memory,
module loading and kernel launch. Optional: `pip install 'xlapy[gpu]'`.

  ctx = default_context()          # XlapyError when cuda-python, the driver or a GPU is missing
  device = ctx.device_for(program) # an executor.Device holding the program's PTX module

Everything a call does goes on the context's one stream, in order; download() waits for
the stream, so results are synchronized when they are read.
"""

from __future__ import annotations

import ctypes
import functools
import threading

from xlapy.backends.gpu.runtime.program import Gemm
from xlapy.errors import XlapyError

INSTALL_HINT = ("install the gpu extra: pip install 'xlapy[gpu]' (cuda-python and "
                "nvidia-cublas-cu12; an NVIDIA driver and GPU are needed to run)")


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python < 12.6 names
        except ImportError:
            raise XlapyError(f"the gpu backend needs cuda-python: {INSTALL_HINT}") from None
    return driver


def check(result, what: str):
    """cuda-python returns (CUresult, values...): the values, or XlapyError naming the
    call and the driver's error."""
    drv = _driver()
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != drv.CUresult.CUDA_SUCCESS:
        name = drv.cuGetErrorName(err)
        label = name[1].decode() if isinstance(name, tuple) and name[1] else str(err)
        raise XlapyError(f"CUDA {what} failed: {label}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def pack_kernel_args(addresses: list) -> tuple:
    """cuLaunchKernel's kernelParams: an array of pointers, each to one argument's value (a
    64-bit device address). Returns (keep_alive, address of the pointer array)."""
    values = (ctypes.c_uint64 * max(len(addresses), 1))(*addresses)
    size = ctypes.sizeof(ctypes.c_uint64)
    ptrs = (ctypes.c_void_p * max(len(addresses), 1))(
        *[ctypes.addressof(values) + k * size for k in range(len(addresses))])
    return (values, ptrs), ctypes.addressof(ptrs)


class CudaContext:
    """Device 0's primary context and one stream."""

    def __init__(self):
        drv = _driver()
        self.drv = drv
        try:
            check(drv.cuInit(0), "cuInit")
        except XlapyError as e:
            raise XlapyError(f"no usable CUDA driver or GPU ({e}); {INSTALL_HINT}") from None
        if check(drv.cuDeviceGetCount(), "cuDeviceGetCount") == 0:
            raise XlapyError(f"no CUDA GPU is present; {INSTALL_HINT}")
        self.device = check(drv.cuDeviceGet(0), "cuDeviceGet")
        attr = drv.CUdevice_attribute
        major = check(drv.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device), "attribute")
        minor = check(drv.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device), "attribute")
        self.arch = min(major * 10 + minor, 90)
        self.context = check(drv.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        self.make_current()
        self.stream = check(drv.cuStreamCreate(0), "cuStreamCreate")
        self.lock = threading.Lock()

    def make_current(self) -> None:
        check(self.drv.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def device_for(self, program) -> "CudaDevice":
        return CudaDevice(self, program.ptx)


@functools.lru_cache(maxsize=1)
def default_context() -> CudaContext:
    return CudaContext()


class CudaDevice:
    """executor.Device for one loaded PTX module."""

    def __init__(self, ctx: CudaContext, ptx: str):
        self.ctx = ctx
        drv = ctx.drv
        ctx.make_current()
        self.module = check(drv.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        self._functions: dict = {}
        self._pending: list = []    # host buffers of uploads in flight
        self._blas = None

    def _function(self, name: str):
        f = self._functions.get(name)
        if f is None:
            f = check(self.ctx.drv.cuModuleGetFunction(self.module, name.encode()),
                      f"cuModuleGetFunction({name})")
            self._functions[name] = f
        return f

    def alloc(self, nbytes: int) -> int:
        return int(check(self.ctx.drv.cuMemAlloc(max(nbytes, 1)), "cuMemAlloc"))

    def free(self, addr: int) -> None:
        check(self.ctx.drv.cuMemFree(addr), "cuMemFree")

    def upload(self, addr: int, data: bytes) -> None:
        buf = ctypes.create_string_buffer(data, len(data))
        self._pending.append(buf)
        check(self.ctx.drv.cuMemcpyHtoDAsync(addr, ctypes.addressof(buf), len(data),
                                             self.ctx.stream), "cuMemcpyHtoDAsync")

    def download(self, addr: int, nbytes: int) -> bytes:
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        if nbytes:
            check(self.ctx.drv.cuMemcpyDtoHAsync(ctypes.addressof(buf), addr, nbytes,
                                                 self.ctx.stream), "cuMemcpyDtoHAsync")
        self.synchronize()
        return buf.raw[:nbytes]

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        check(self.ctx.drv.cuMemcpyDtoDAsync(dst, src, nbytes, self.ctx.stream),
              "cuMemcpyDtoDAsync")

    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None:
        keep, params = pack_kernel_args(args)
        check(self.ctx.drv.cuLaunchKernel(self._function(kernel), *grid, *block, shared_bytes,
                                          self.ctx.stream, params, 0),
              f"cuLaunchKernel({kernel})")
        self._pending.append(keep)

    def gemm(self, t: Gemm, out: int, lhs: int, rhs: int) -> None:
        from xlapy.backends.gpu.runtime import cublas  # loaded with the first dot
        if self._blas is None:
            self._blas = cublas.Handle(int(self.ctx.stream))
        self._blas.gemm(t, out, lhs, rhs)

    def synchronize(self) -> None:
        check(self.ctx.drv.cuStreamSynchronize(self.ctx.stream), "cuStreamSynchronize")
        self._pending.clear()


@functools.lru_cache(maxsize=1)
def gpu_available() -> bool:
    """Whether a CUDA GPU can be used here (cuda-python installed, a driver, a device);
    never raises. XLAPY_DISABLE_GPU=1 answers False (tests of the no-GPU paths)."""
    import os
    if os.environ.get("XLAPY_DISABLE_GPU"):
        return False
    try:
        default_context()
    except Exception:
        return False
    return True
