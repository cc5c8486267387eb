"""ArrayImpl: the type of xlapy's results outside jit.

xlapy computes on the host, so a result is a NumPy array in host memory. It is returned as
ArrayImpl, a numpy.ndarray subclass (a view of the same buffer, no copy) that adds the
methods JAX code calls on jax.Array: `.at[...]` updates (attached by xlapy.numpy),
`block_until_ready()`, `copy_to_host_async()`, `device`, `devices()`, `sharding`-free
queries such as `is_fully_addressable`, and a repr that reads `Array(...)`. Everything
else is NumPy's: operators and methods follow NumPy (see the README's differences from
JAX), `np.asarray(x)` gives the plain ndarray back, and ArrayImpl arguments take jit's
fast path like plain ndarrays.
"""

from __future__ import annotations

import numpy as np


class ArrayImpl(np.ndarray):
    """A NumPy array with jax.Array's methods (see the module docstring)."""

    def block_until_ready(self):
        """The array itself: xlapy's computations have finished when they return."""
        return self

    def copy_to_host_async(self) -> None:
        """Nothing to do: the array is in host memory."""

    @property
    def device(self):
        from xlapy.frontend import devices  # devices imports this module (and CpuDevice)
        return devices.local_devices()[0]

    def devices(self) -> set:
        return {self.device}

    is_fully_addressable = True
    is_fully_replicated = True
    committed = False
    weak_type = False

    def is_deleted(self) -> bool:
        return False

    def unsafe_buffer_pointer(self) -> int:
        return self.ctypes.data

    def __repr__(self) -> str:
        return "Array" + repr(self.view(np.ndarray))[len("array"):]


def as_result(x):
    """x as ArrayImpl when it is a plain ndarray (a view: no copy), else x."""
    return x.view(ArrayImpl) if type(x) is np.ndarray else x


# exact types jit's fast path takes: NumPy's, and a backend's device array type once one
# was passed to a jitted function (a class with __xlapy_device_array__ = True, e.g. the gpu
# runtime's DeviceArray; the frontend never imports a backend for it)
ARRAY_TYPES = {np.ndarray, ArrayImpl}


def is_device_array(x) -> bool:
    """Whether x is a backend's array in device memory (the gpu's DeviceArray)."""
    return getattr(type(x), "__xlapy_device_array__", False)
