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
        shapes = [leaf for s in self.parameter_shapes for leaf in s.leaves()]
        leaves = [physical(a, s) for a, s in zip([x for y in args for x in _flat(y)], shapes)]
        raw = self._executor.run(leaves)
        it = iter(raw)
        return _unflatten(self.result_shape, it)


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
