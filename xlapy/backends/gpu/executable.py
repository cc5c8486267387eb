"""Running a compiled gpu program: arguments to device memory, the thunks on the device's
stream (runtime/executor.py), results back as NumPy arrays.

  exe.run(*arrays)            NumPy in, NumPy out (base.Executable)
  exe.program                 the Program: kernels (the plan), PTX, LLVM IR
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import Executable
from xlapy.backends.gpu.runtime.executor import Executor
from xlapy.backends.gpu.runtime.program import Program
from xlapy.hlo.ir import Module
from xlapy.hlo.shapes import Shape


class GpuExecutable(Executable):
    def __init__(self, module: Module, program: Program, device, platform_name: str = "gpu"):
        super().__init__(module, platform_name)
        self.program = program
        self._executor = Executor(program, device)

    def _execute(self, args: list):
        return self._start(args).result()

    def run_async(self, *args) -> "GpuFuture":
        """Dispatch a call and return at once; the result is synchronized when read
        (GpuFuture.result(), or np.asarray of an array result)."""
        return self._start(self.check_arguments(args))

    def _start(self, args: list) -> "GpuFuture":
        shapes = [leaf for s in self.parameter_shapes for leaf in s.leaves()]
        leaves = [physical(a, s) for a, s in zip([x for y in args for x in _flat(y)], shapes)]
        return GpuFuture(self._executor.start(leaves), self.result_shape)


class GpuFuture:
    """A dispatched call's result: result() (or np.asarray for an array result) waits for
    the device and returns NumPy arrays shaped like the entry's root."""

    def __init__(self, pending, shape: Shape):
        self._pending = pending
        self._shape = shape

    @property
    def done(self) -> bool:
        return self._pending.done

    def result(self):
        return _unflatten(self._shape, iter(self._pending.result()))

    def __array__(self, dtype=None, copy=None):
        value = self.result()
        if isinstance(value, tuple):
            raise TypeError("a tuple result is not an array: call result()")
        return value if dtype is None else value.astype(dtype)


def physical(arr: np.ndarray, shape: Shape) -> np.ndarray:
    """A logical array in the shape's physical (layout) order, as stored on the device."""
    if shape.rank:
        arr = np.transpose(arr, list(reversed(shape.minor_to_major)))
    if shape.element_type.is_pred:
        arr = arr.astype(np.uint8)
    return np.ascontiguousarray(arr)


def _flat(a):
    if isinstance(a, tuple):
        return [x for y in a for x in _flat(y)]
    return [a]


def _unflatten(shape: Shape, it):
    if shape.is_tuple:
        return tuple(_unflatten(s, it) for s in shape.tuple_shapes)
    data = next(it)
    t = shape.element_type
    dtype = np.dtype(np.uint8) if t.is_pred else shape.dtype
    phys_dims = [shape.dims[d] for d in reversed(shape.minor_to_major)]
    arr = np.frombuffer(data, dtype=dtype, count=shape.size).reshape(phys_dims)
    if shape.rank:
        # physical (major-to-minor) order back to logical dimension order
        order = list(reversed(shape.minor_to_major))
        arr = np.transpose(arr, np.argsort(order))
    arr = arr.astype(np.bool_) if t.is_pred else arr
    return np.array(arr, order="C")
