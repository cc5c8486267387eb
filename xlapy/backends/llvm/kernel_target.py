"""What a target supplies when a kernel is emitted (the target-independent kernel emitters,
loop_kernel.py and the rest, are written against this).

A kernel computes the output elements whose outermost (most-major, physical) loop index
lies in a range [start, end) that the target gives it:

  cpu  void kernel(ptr out_0, ..., ptr in_0, ..., i64 start, i64 end): the thread pool or
       the calling thread hands out ranges of the outer loop (backends/cpu/emitters/
       kernel_abi.py)
  gpu  the range is computed from the thread and block indices (one kernel launch covers
       the whole outer loop)

    kf = target.kernel_function(module, name, n_pointers)
    ... emit into kf.builder, addressing kf.pointers, looping over [kf.start, kf.end) ...
    kf.builder.ret_void()

Pointers are `noalias`: a kernel that computes in place (its output in an input's buffer)
reads that input through the output pointer instead.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from llvmlite import ir


class KernelFunction(NamedTuple):
    function: ir.Function
    pointers: list            # outputs then inputs (the leaves of each, in order)
    builder: ir.IRBuilder     # positioned in the body
    start: ir.Value           # i64: first outer index this invocation computes
    end: ir.Value             # i64: one past the last


class KernelTarget(Protocol):
    def kernel_function(self, module: ir.Module, name: str, n_pointers: int
                        ) -> KernelFunction: ...
