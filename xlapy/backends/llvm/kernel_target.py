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

A target may also set (read with getattr, so the cpu's target needs neither):

  linear_index   True: [start, end) ranges over the physical linear index of the whole
                 output (one element per GPU thread), not over the outermost loop
  math_function  (module, name, type) -> ir.Function for the math library's functions
                 (math.py names: exp, log, ...); None: xlapy's own (math.py). The gpu
                 maps them to libdevice's __nv_* functions.
  inner_loop_hints  (shape) -> dict of LLVM loop metadata for the innermost loop of a
                 loop-nest kernel over `shape`, or None (the cpu: a short row that the
                 vector width does not divide is vectorized with its remainder folded
                 into masked vector iterations instead of a scalar loop)

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


def linear_index(target) -> bool:
    return bool(getattr(target, "linear_index", False))


def target_math(target):
    """The target's math_function, or None for xlapy's own math library."""
    return getattr(target, "math_function", None)


def inner_loop_hints(target, shape) -> dict | None:
    """The target's loop metadata for a loop nest's innermost loop over `shape`, or None."""
    fn = getattr(target, "inner_loop_hints", None)
    return fn(shape) if fn is not None else None
