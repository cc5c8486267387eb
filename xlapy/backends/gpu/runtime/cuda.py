"""The CUDA driver through cuda-python (cuda-bindings): context, stream, device memory,
module loading and kernel launch. Optional: `pip install 'xlapy[gpu]'`.

  ctx = default_context()          # XlapyError when cuda-python, the driver or a GPU is missing
  device = ctx.device_for(program) # an executor.Device holding the program's PTX module

The context holds the memory (device_array.py's context: a caching allocator, uploads
from and downloads into NumPy arrays' own buffers, device copies). Everything a call does
goes on the context's one stream, in order; download() waits for the stream, so results
are synchronized when they are read. The cached blocks are freed at exit.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import threading

import numpy as np

from xlapy.backends.gpu.runtime.allocator import CachingAllocator
from xlapy.backends.gpu.runtime.device_array import GpuDevice
from xlapy.backends.gpu.runtime.program import Gemm
from xlapy.errors import XlapyError

INSTALL_HINT = ("install the gpu extra: pip install 'xlapy[gpu]' (cuda-python and "
                "nvidia-cublas-cu12; an NVIDIA driver and GPU are needed to run)")


_DRIVER = None


def _driver():
    global _DRIVER
    if _DRIVER is not None:
        return _DRIVER
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python < 12.6 names
        except ImportError:
            raise XlapyError(f"the gpu backend needs cuda-python: {INSTALL_HINT}") from None
    _DRIVER = driver
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


def device_name(raw) -> str:
    """cuDeviceGetName's answer (bytes padded with NULs, or a str) as text."""
    if isinstance(raw, str):
        return raw.split("\0")[0]
    return bytes(raw).split(b"\0")[0].decode(errors="replace")


_THREAD = threading.local()


def _close_quietly(allocator) -> None:
    """At exit: the cached blocks back to the driver (which may be shutting down too)."""
    try:
        allocator.close()
    except Exception:
        pass


class CudaContext:
    """Device 0's primary context, one stream, and the memory: a caching allocator."""

    def __init__(self):
        drv = _driver()
        self.drv = drv
        try:
            check(drv.cuInit(0), "cuInit")
        except XlapyError as e:
            raise XlapyError(f"no usable CUDA driver or GPU ({e}); {INSTALL_HINT}") from None
        if check(drv.cuDeviceGetCount(), "cuDeviceGetCount") == 0:
            raise XlapyError(f"no CUDA GPU is present; {INSTALL_HINT}")
        self.cu_device = check(drv.cuDeviceGet(0), "cuDeviceGet")
        attr = drv.CUdevice_attribute
        major = check(drv.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.cu_device), "attribute")
        minor = check(drv.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.cu_device), "attribute")
        self.arch = min(major * 10 + minor, 90)
        try:
            self.name = device_name(check(drv.cuDeviceGetName(256, self.cu_device),
                                          "cuDeviceGetName"))
        except Exception:  # (only a label: never a reason to refuse the GPU)
            self.name = "CUDA device 0"
        self.device = GpuDevice("gpu", 0, self.name)
        self.context = check(drv.cuDevicePrimaryCtxRetain(self.cu_device),
                             "cuDevicePrimaryCtxRetain")
        self.make_current()
        self.stream = check(drv.cuStreamCreate(0), "cuStreamCreate")
        self.lock = threading.Lock()
        self.allocator = CachingAllocator(self._raw_alloc, self._raw_free)
        atexit.register(_close_quietly, self.allocator)

    def make_current(self) -> None:
        check(self.drv.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        _THREAD.current = self

    def here(self) -> None:
        """Make the context current on this thread, once per thread (the driver's calls
        act on the calling thread's current context)."""
        if getattr(_THREAD, "current", None) is not self:
            self.make_current()

    def device_for(self, program) -> "CudaDevice":
        return CudaDevice(self, program.ptx)

    # ---- memory --------------------------------------------------------------------------
    def _raw_alloc(self, nbytes: int) -> int:
        self.here()
        return int(check(self.drv.cuMemAlloc(nbytes), f"cuMemAlloc({nbytes} bytes)"))

    def _raw_free(self, addr: int) -> None:
        self.here()
        check(self.drv.cuMemFree(addr), "cuMemFree")

    def upload(self, addr: int, host: np.ndarray) -> None:
        """From the array's own (pageable) buffer: the driver has copied it when this
        returns, the transfer to the device is ordered on the stream."""
        self.here()
        check(self.drv.cuMemcpyHtoDAsync(addr, host.ctypes.data, host.nbytes, self.stream),
              "cuMemcpyHtoDAsync")

    def download(self, addr: int, out: np.ndarray) -> None:
        self.here()
        check(self.drv.cuMemcpyDtoHAsync(out.ctypes.data, addr, out.nbytes, self.stream),
              "cuMemcpyDtoHAsync")
        self.synchronize()

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        self.here()
        check(self.drv.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream), "cuMemcpyDtoDAsync")

    def synchronize(self) -> None:
        self.here()
        check(self.drv.cuStreamSynchronize(self.stream), "cuStreamSynchronize")


@functools.lru_cache(maxsize=1)
def default_context() -> CudaContext:
    return CudaContext()


class CudaDevice:
    """executor.Device for one loaded PTX module (memory: its context's)."""

    def __init__(self, ctx: CudaContext, ptx: str):
        self.context = ctx
        drv = ctx.drv
        ctx.make_current()
        self.module = check(drv.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        self._functions: dict = {}
        self._packed: dict = {}     # kernel -> its argument arrays, refilled per launch
        self._launch_lock = threading.Lock()
        self._blas = None

    def _function(self, name: str):
        f = self._functions.get(name)
        if f is None:
            f = check(self.context.drv.cuModuleGetFunction(self.module, name.encode()),
                      f"cuModuleGetFunction({name})")
            self._functions[name] = f
        return f

    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None:
        ctx = self.context
        ctx.here()
        # the driver copies the argument values when the launch is queued, so one pair of
        # arrays per kernel is refilled for each launch (under the lock)
        with self._launch_lock:
            packed = self._packed.get(kernel)
            if packed is None or len(packed[0][0]) != max(len(args), 1):
                packed = self._packed[kernel] = pack_kernel_args(args)
            elif args:
                packed[0][0][:len(args)] = args
            check(ctx.drv.cuLaunchKernel(self._function(kernel), *grid, *block, shared_bytes,
                                         ctx.stream, packed[1], 0),
                  f"cuLaunchKernel({kernel})")

    def gemm(self, t: Gemm, out: int, lhs: int, rhs: int) -> None:
        from xlapy.backends.gpu.runtime import cublas  # loaded with the first dot
        self.context.here()
        if self._blas is None:
            self._blas = cublas.Handle(int(self.context.stream))
        self._blas.gemm(t, out, lhs, rhs)


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
