"""Devices and arrays, as JAX names them: devices, local_devices, device_count,
default_backend, device_put, block_until_ready, Array.

xlapy runs on the host: one CPU device per process (the compiled code uses every core
through its own thread pool), arrays are NumPy arrays in host memory and every
computation has finished when its call returns. So device_put only canonicalizes dtypes
(64-bit values become 32-bit with jax_enable_x64 off, as JAX's device_put does) and
block_until_ready returns its argument.

The gpu backend (xp.jit(..., backend="gpu")) is the exception: its results are DeviceArrays
that stay in the GPU's memory (reading one waits for the work computing it), and
`devices("gpu")`, `device_put(x, "gpu")` or `device_put(x, devices("gpu")[0])` put an
array there; block_until_ready waits for them. ("gpu-emulator" is the same on the host
emulator.)

Array: xlapy's results are NumPy arrays (ArrayImpl, frontend/array.py, a numpy.ndarray
subclass with jax.Array's methods), so xlapy.Array is an abstract base class with
numpy.ndarray and xlapy's traced values registered as virtual subclasses:
isinstance(xp.jit(f)(x), xp.Array) and isinstance(tracer, xp.Array) are True, as in JAX,
and `x: xp.Array` annotations read as in JAX code. (A NumPy array made by NumPy itself is an
xlapy.Array too: there is no separate device array type.)
"""

from __future__ import annotations

import abc
import os
import re

import numpy as np

from xlapy.frontend.array import as_result, is_device_array
from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import canonicalize_value


class Array(abc.ABC):  # noqa: B024 (a type to test against: virtual subclasses only)
    """The type of xlapy's arrays (numpy.ndarray and traced values are registered; a
    backend's device arrays are recognized by their __xlapy_device_array__ marker)."""

    @classmethod
    def __subclasshook__(cls, C):
        return True if getattr(C, "__xlapy_device_array__", False) else NotImplemented


Array.register(np.ndarray)
Array.register(Tracer)


class CpuDevice:
    """A host CPU device: xlapy's one device per process (or one of the devices that
    --xla_force_host_platform_device_count in XLA_FLAGS simulates, as JAX's host platform)."""

    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int = 0, process_index: int = 0):
        self.id = id
        self.process_index = process_index

    @property
    def host_id(self) -> int:
        return self.process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, CpuDevice) and other.id == self.id

    def __hash__(self):
        return hash(("cpu", self.id))


_CPU = CpuDevice(0)
_BACKENDS = ("cpu", "interpreter")
_GPU_BACKENDS = ("gpu", "gpu-emulator")


def _gpu_platform(name: str):
    """The gpu (or gpu-emulator) platform: XlapyError saying why when there is no GPU."""
    from xlapy.backends.base import get_platform  # the backend is loaded when asked for
    return get_platform(name)


def _check_backend(backend):
    if backend is not None and backend not in _BACKENDS:
        raise XlapyError(f"unknown backend '{backend}': xlapy has {', '.join(_BACKENDS)} "
                         "(both run on the host CPU)")


def forced_host_device_count() -> int | None:
    """The device count XLA_FLAGS=--xla_force_host_platform_device_count=N asks for (as
    JAX's host platform reads it), or None."""
    m = re.search(r"--xla_force_host_platform_device_count=(\S+)",
                  os.environ.get("XLA_FLAGS", ""))
    if m is None:
        return None
    try:
        n = int(m.group(1))
    except ValueError:
        n = 0
    if n < 1:
        raise XlapyError(f"XLA_FLAGS: --xla_force_host_platform_device_count needs a "
                         f"positive integer, got {m.group(1)!r}")
    return n


def local_device_count(backend=None) -> int:
    """1 per process (the compiled code uses every core), or the forced host count."""
    _check_backend(backend)
    if process_count() > 1:
        return 1
    return forced_host_device_count() or 1


def devices(backend=None) -> list:
    """Every process's devices: [CpuDevice(id=0)] in one process; under an MPI job of N
    processes, N devices, device r on process r. devices("gpu"): the GPU (an error
    saying why when there is none)."""
    if backend in _GPU_BACKENDS:
        return [_gpu_platform(backend).context.device]
    _check_backend(backend)
    n = process_count()
    if n > 1:
        return [CpuDevice(r, r) for r in range(n)]
    forced = forced_host_device_count()
    return [CpuDevice(i) for i in range(forced)] if forced else [_CPU]


def local_devices(process_index=None, backend=None) -> list:
    """The devices of process `process_index` (this one by default)."""
    if backend in _GPU_BACKENDS:
        return devices(backend)
    _check_backend(backend)
    me = process_index if process_index is not None else globals()["process_index"]()
    return [d for d in devices() if d.process_index == me]


def device_count(backend=None) -> int:
    if backend in _GPU_BACKENDS:
        return len(devices(backend))
    _check_backend(backend)
    return len(devices())


def default_backend() -> str:
    return "cpu"


def process_index() -> int:
    """This process's rank in an MPI job (xlapy.distributed), else 0."""
    from xlapy.backends.interpreter import mpi  # optional runtime: MPI only when launched so
    return mpi.world().rank if mpi.launched_by_mpi() else 0


def process_count() -> int:
    """The number of processes of an MPI job (xlapy.distributed), else 1."""
    from xlapy.backends.interpreter import mpi  # optional runtime: MPI only when launched so
    return mpi.world().size if mpi.launched_by_mpi() else 1


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """x (a pytree) as xlapy arrays with canonical dtypes: on the host (NumPy arrays;
    arrays already canonical are returned as they are), or with device "gpu" (or a gpu
    Device from devices("gpu")) in the GPU's memory as DeviceArrays."""
    name = device if isinstance(device, str) else getattr(device, "platform", None)
    if device is not None and name in _GPU_BACKENDS:
        return _put_on_gpu(x, name)
    if device is not None and name != "cpu":
        raise XlapyError(f"device_put: unknown device {device!r}: xlapy has the host CPU "
                         f"and, with the gpu backend, {', '.join(map(repr, _GPU_BACKENDS))}")

    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        arr = _host_array(leaf)
        return as_result(canonicalize_value(arr))

    return pytree.tree_map(put, x)


def _host_array(leaf) -> np.ndarray:
    arr = np.asarray(leaf)
    if arr.dtype.kind not in "biufc" and arr.dtype.name != "bfloat16":
        raise XlapyError(f"device_put: {type(leaf).__name__} of dtype {arr.dtype} is not "
                         "an array xlapy can hold")
    return arr


def _put_on_gpu(x, name: str):
    platform = _gpu_platform(name)

    def put(leaf):
        if isinstance(leaf, Tracer):
            raise XlapyError("device_put: a traced value has no value to put on a device "
                             "(call device_put outside jit/grad/vmap)")
        if is_device_array(leaf) and leaf.context is platform.context:
            return leaf
        return platform.device_put(canonicalize_value(_host_array(leaf)))

    return pytree.tree_map(put, x)


def device_get(x):
    """x (a pytree) with its arrays as NumPy arrays on the host (jax.device_get); other
    leaves (Python scalars, strings) are returned as they are."""
    def get(leaf):
        if isinstance(leaf, Tracer):
            raise XlapyError("device_get: a traced value has no concrete value here (call "
                             "device_get outside jit/grad/vmap)")
        if isinstance(leaf, np.ndarray) or is_device_array(leaf):
            return np.asarray(leaf)  # (an ArrayImpl becomes a plain numpy.ndarray)
        return leaf

    return pytree.tree_map(get, x)


def print_environment_info(return_string: bool = False):
    """The versions of xlapy, Python, NumPy, llvmlite and the platform (as
    jax.print_environment_info); printed, or returned with return_string=True."""
    import platform
    import sys

    version = sys.modules["xlapy"].__version__  # (the package, loaded before its frontend)
    lines = [f"xlapy:    {version}", f"numpy:    {np.__version__}"]
    try:
        import llvmlite
        lines.append(f"llvmlite: {llvmlite.__version__}")
    except ImportError:  # (the interpreter backend runs without it)
        lines.append("llvmlite: not installed")
    lines += [f"python:   {sys.version.splitlines()[0]}",
              f"device info: cpu-{device_count()}, {local_device_count()} local devices",
              f"process_count: {process_count()}", f"platform: {platform.uname()}"]
    text = "\n".join(lines) + "\n"
    if return_string:
        return text
    print(text, end="")


def block_until_ready(x):
    """x, once the computations of its device arrays have finished (xlapy's host
    computations have finished when they return)."""
    if isinstance(x, np.ndarray):
        return x
    if is_device_array(x):
        return x.block_until_ready()
    for leaf in pytree.flatten(x)[0]:
        if is_device_array(leaf):
            leaf.block_until_ready()
    return x
