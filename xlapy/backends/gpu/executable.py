"""Running a compiled gpu program: arguments to device memory, the thunks queued on the
device's stream (runtime/executor.py), results left on the device.

  exe.run_device(*args)       NumPy arrays or DeviceArrays in (a DeviceArray of this
                              context is read in place), DeviceArrays out at once: the
                              work is queued, reading a result waits for it (what
                              xp.jit(..., backend="gpu") calls)
  exe.run(*arrays)            NumPy in, NumPy out (base.Executable: run-hlo, compat.v1)
  exe.device_put(x)           a NumPy array as a DeviceArray of this executable's context
  exe.program                 the Program: kernels (the plan), PTX, LLVM IR
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import Executable, check_argument
from xlapy.backends.gpu.runtime.device_array import DeviceArray
from xlapy.backends.gpu.runtime.executor import Executor
from xlapy.backends.gpu.runtime.program import Program
from xlapy.errors import InputError
from xlapy.hlo.ir import Module
from xlapy.hlo.shapes import Shape


class GpuExecutable(Executable):
    def __init__(self, module: Module, program: Program, device, platform_name: str = "gpu"):
        super().__init__(module, platform_name)
        self.program = program
        self.context = device.context
        self._executor = Executor(program, device)
        # per leaf: its shape and its physical order (None: row-major), as DeviceArray keeps it
        self._in_leaves = [(leaf, _order_or_none(leaf)) for s in self.parameter_shapes
                           for leaf in s.leaves()]
        self._out_leaves = [(leaf, _order_or_none(leaf)) for leaf in self.result_shape.leaves()]

    def _execute(self, args: list):
        given = {id(x) for a in args for x in _flat(a)}
        # each result as a writable NumPy array of its own; its block freed, unless the
        # result is an input DeviceArray itself
        outs = [np.array(d) if id(d) in given else d.take() for d in self._call(args)]
        return _unflatten(self.result_shape, iter(outs))

    def run_device(self, *args):
        """Queue a call; its results as DeviceArrays (a tuple tree for a tuple result)."""
        if len(args) != len(self.parameter_shapes):
            self.check_arguments(args)  # (raises the count error)
        return _unflatten(self.result_shape, iter(self._call(args)))

    def device_put(self, x) -> DeviceArray:
        return DeviceArray.from_host(self.context, np.asarray(x))

    def _call(self, args) -> list[DeviceArray]:
        leaves = args
        for a in args:
            if isinstance(a, (tuple, list)):
                leaves = [x for y in args for x in _flat(y)]
                break
        if len(leaves) != len(self._in_leaves):
            self.check_arguments(args)
        ctx = self.context
        inputs = []
        for k, (a, (shape, order)) in enumerate(zip(leaves, self._in_leaves)):
            if type(a) is DeviceArray:
                if a.shape != shape.dims or a.dtype != shape.dtype:
                    raise InputError(f"{self.module.name}: argument leaf {k}: expected "
                                     f"{shape.element_type.name}{list(shape.dims)}, got a "
                                     f"DeviceArray of {a.dtype}{list(a.shape)}")
                if a._ctx is ctx and a._order == order and a._addr is not None:
                    inputs.append(a._addr)
                    continue
                a = np.asarray(a)  # another context's memory or layout: through the host
            arr = check_argument(a, shape, f"{self.module.name}: argument leaf {k}")
            inputs.append(physical(arr, shape))
        outs = self._executor.start(inputs)
        result = []
        for o, (shape, order) in zip(outs, self._out_leaves):
            if type(o) is int:
                result.append(DeviceArray(ctx, o, shape.dims, shape.dtype, order))
            else:  # Borrowed: an input given as a DeviceArray of this context
                result.append(leaves[o.leaf])
        return result


def physical_order(shape: Shape) -> tuple:
    """The logical dimensions from major to minor (how device memory holds the array)."""
    return tuple(reversed(shape.minor_to_major)) if shape.rank else ()


def _order_or_none(shape: Shape):
    order = physical_order(shape)
    return None if order == tuple(range(shape.rank)) else order


def physical(arr: np.ndarray, shape: Shape) -> np.ndarray:
    """A logical array in the shape's physical (layout) order, as stored on the device."""
    if shape.rank:
        order = physical_order(shape)
        if order != tuple(range(shape.rank)):
            arr = np.transpose(arr, order)
    if shape.element_type.is_pred:
        arr = arr.view(np.uint8) if arr.dtype == np.bool_ else arr.astype(np.uint8)
    return np.ascontiguousarray(arr)




def _flat(a):
    if isinstance(a, (tuple, list)):
        return [x for y in a for x in _flat(y)]
    return [a]


def _unflatten(shape: Shape, it):
    if shape.is_tuple:
        return tuple(_unflatten(s, it) for s in shape.tuple_shapes)
    return next(it)
