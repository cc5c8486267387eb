"""DeviceArray: an array in a gpu context's memory (what xp.jit(..., backend="gpu") returns
and takes without a copy), as jax.Array is for JAX's GPU backend.

  a.shape, a.dtype, a.ndim, a.size, a.device
  np.asarray(a)            waits for the work that computes it, downloads it (once: the
                           array is immutable, the host copy is kept)
  a.block_until_ready()    waits for it, returns a
  a + 1, a[0], float(a),   on the host, through the downloaded NumPy array
  a.sum(), a.T, ...
  del a                    its block goes back to the context's caching allocator

A context (the CUDA context of runtime/cuda.py, or the emulator's host memory) offers:
  allocator                a CachingAllocator (allocator.py)
  upload(addr, host)       from a C-contiguous NumPy array's own buffer (on the stream)
  download(addr, out)      into a preallocated C-contiguous NumPy array; waits
  copy(dst, src, nbytes)   device to device (on the stream)
  synchronize()            waits for the stream
  device                   the GpuDevice it is
Device memory holds an array in its layout's physical order (`order`: the logical
dimensions from major to minor; row-major when None) and pred as one byte per element.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from xlapy.errors import XlapyError


class GpuDevice:
    """A gpu device as jax.Device describes one (platform "gpu", or "gpu-emulator" for the
    host emulator's memory)."""

    def __init__(self, platform: str = "gpu", id: int = 0, device_kind: str = "gpu"):
        self.platform = platform
        self.id = id
        self.device_kind = device_kind
        self.process_index = 0

    def __repr__(self):
        return f"{'GpuDevice' if self.platform == 'gpu' else 'GpuEmulatorDevice'}(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, GpuDevice) and (other.platform, other.id) == \
            (self.platform, self.id)

    def __hash__(self):
        return hash((self.platform, self.id))


def storage_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.uint8) if dtype == np.bool_ else np.dtype(dtype)


class DeviceArray(NDArrayOperatorsMixin):
    __array_priority__ = 100
    __xlapy_device_array__ = True   # (how the frontend recognizes it without importing it)

    def __init__(self, ctx, addr: int, shape: tuple, dtype, order: tuple | None = None):
        self._ctx = ctx
        self._addr = addr
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._order = None if order is None or tuple(order) == tuple(range(len(shape))) \
            else tuple(order)   # (None: row-major)
        self._host = None

    # ---- making one ----------------------------------------------------------------------
    @classmethod
    def from_host(cls, ctx, host, order: tuple | None = None) -> "DeviceArray":
        """A copy of the NumPy array `host` in ctx's memory (physical order `order`)."""
        host = np.asarray(host)
        phys = host if order is None else np.transpose(host, order)
        phys = np.ascontiguousarray(phys, storage_dtype(host.dtype))
        addr = ctx.allocator.alloc(phys.nbytes)
        try:
            if phys.nbytes:
                ctx.upload(addr, phys)
        except BaseException:
            ctx.allocator.free(addr)
            raise
        return cls(ctx, addr, host.shape, host.dtype, order)

    # ---- queries -------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def order(self) -> tuple:
        """The logical dimensions from major to minor, as device memory holds them."""
        return self._order or tuple(range(self.ndim))

    @property
    def context(self):
        return self._ctx

    @property
    def device(self) -> GpuDevice:
        return self._ctx.device

    def devices(self) -> set:
        return {self.device}

    def unsafe_buffer_pointer(self) -> int:
        self._check_live()
        return self._addr

    is_fully_addressable = True
    is_fully_replicated = True
    committed = True
    weak_type = False

    # ---- synchronization and the host copy -----------------------------------------------
    def block_until_ready(self) -> "DeviceArray":
        self._check_live()
        if self._host is None:
            self._ctx.synchronize()
        return self

    def copy_to_host_async(self) -> None:
        """(xlapy's copy waits: the host copy is made now and kept.)"""
        self._value()

    def _value(self) -> np.ndarray:
        """The host copy (read-only, kept)."""
        if self._host is None:
            arr = self._download()
            arr.flags.writeable = False
            self._host = arr
        return self._host

    def _download(self) -> np.ndarray:
        self._check_live()
        order = self.order
        phys = np.empty([self.shape[d] for d in order], storage_dtype(self.dtype))
        if phys.nbytes:
            self._ctx.download(self._addr, phys)
        arr = phys.view(np.bool_) if self.dtype == np.bool_ else phys
        if self._order is not None:
            arr = np.ascontiguousarray(np.transpose(arr, np.argsort(order)))
        return arr

    def take(self) -> np.ndarray:
        """The value as a new writable NumPy array; the device block is freed (the
        executable's NumPy-out path: one download, no extra copy)."""
        arr = np.array(self._host) if self._host is not None else self._download()
        self.delete()
        return arr

    def __array__(self, dtype=None, copy=None):
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, DeviceArray) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*args, **kwargs)

    # ---- a NumPy-like surface through the host copy --------------------------------------
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        return iter(self._value())

    def __getitem__(self, key):
        return self._value()[key]

    def __float__(self):
        return float(self._value())

    def __int__(self):
        return int(self._value())

    def __index__(self):
        return self._value().__index__()

    def __bool__(self):
        return bool(self._value())

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def astype(self, dtype):
        return self._value().astype(dtype)

    def __getattr__(self, name: str):
        """Other ndarray methods and attributes (sum, reshape, T, ...) on the host copy."""
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._value()
        try:
            return getattr(value, name)
        except AttributeError:
            raise AttributeError(f"'DeviceArray' object has no attribute '{name}'") from None

    def __repr__(self) -> str:
        if self._addr is None:
            return f"DeviceArray(<deleted>, shape={self.shape}, dtype={self.dtype})"
        return "DeviceArray" + repr(self._value())[len("array"):]

    # ---- lifetime ------------------------------------------------------------------------
    def is_deleted(self) -> bool:
        return self._addr is None

    def delete(self) -> None:
        """Free the device memory now (the host copy, if made, goes too)."""
        addr, self._addr, self._host = self._addr, None, None
        if addr is not None:
            self._ctx.allocator.free(addr)

    def _check_live(self) -> None:
        if self._addr is None:
            raise XlapyError(f"DeviceArray of shape {self.shape} was deleted")

    def __del__(self):
        try:
            self.delete()
        except Exception:  # interpreter shutdown: the context may be gone already
            pass
