"""The cpu backend's kernel ABI (its backends/llvm KernelTarget) and thread-pool wrappers.

  void kernel(ptr out_0, ..., ptr in_0, ..., i64 start, i64 end)

computes the output elements whose outer (most-major) index lies in [start, end). All
pointer arguments are `noalias`, which lets LLVM vectorize without run-time alias checks.

A parallel kernel also gets a wrapper `void kernel.par(ptr ctx, i64 start, i64 end)` for
xlapy's thread pool (runtime/threadpool.py): ctx holds the kernel's pointers; the pool
hands out chunks of the outer dimension to the calling thread and its workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from xlapy.backends.cpu.target import preferred_vector_width
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.kernel_target import KernelFunction
from xlapy.backends.llvm.loops import c64


@dataclass
class Kernel:
    function: ir.Function
    wrapper: ir.Function | None
    n_out: int
    n_in: int
    outer: int       # trip count of the outermost loop (the parallel dimension)
    cost: int        # rough work estimate (element operations) for the threading decision


def kernel_function(module: ir.Module, name: str, n_pointers: int) -> KernelFunction:
    """An internal kernel function of the ABI above, its body ready to be emitted."""
    fty = ir.FunctionType(T.VOID, [T.PTR] * n_pointers + [T.I64, T.I64])
    fn = ir.Function(module, fty, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    for a in fn.args[:-2]:
        a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    return KernelFunction(fn, list(fn.args[:-2]), b, fn.args[-2], fn.args[-1])


# Rows at most this long whose length the widest vector (16 f32) does not divide have their
# remainder folded into masked vector iterations (inner_loop_hints). Longer rows keep the
# scalar remainder: masking every iteration cost more than it saved there (tanh(x + b) over
# 256 rows, CPU time, AMD EPYC, 256-bit vectors: 20 wide 16.9 -> 14.9 us, 60 wide 26.3 ->
# 20.0, but 100 wide 26.9 -> 29.8, 500 wide 81 -> 104; x * b + 1 unchanged up to 60).
FOLDED_ROW_MAX = 64


def inner_loop_hints(shape) -> dict | None:
    """Loop metadata for the innermost loop of a loop-nest kernel over `shape`: a short row
    whose length is not a multiple of the vector width (an LSTM's 60-wide gates: seven
    8-lane vectors and 4 elements) would leave LLVM's vectorizer a scalar remainder loop,
    which costs as much as the vector part when the row's values are exp and tanh chains;
    "predicate.enable" folds it into masked vector iterations instead (where the target has
    masked loads and stores: AVX-512, AVX2; elsewhere LLVM keeps the scalar remainder)."""
    inner = next((shape.dims[d] for d in shape.minor_to_major if shape.dims[d] != 1), 1)
    if inner < 8 or inner > FOLDED_ROW_MAX or inner % 16 == 0:
        return None
    return {"llvm.loop.vectorize.predicate.enable": 1}


class CpuKernelTarget:
    """backends/llvm's KernelTarget for the cpu."""
    kernel_function = staticmethod(kernel_function)
    inner_loop_hints = staticmethod(inner_loop_hints)


CPU_TARGET = CpuKernelTarget()


def set_vector_width(fn: ir.Function) -> None:
    """Ask LLVM for the host's best vector width in this kernel (target.py)."""
    width = preferred_vector_width()
    if width:
        add_string_attribute(fn, f'"prefer-vector-width"="{width}"')


def add_string_attribute(fn: ir.Function, attr: str) -> None:
    """A function attribute such as '"prefer-vector-width"="512"'. llvmlite has no API for
    string attributes: its printer emits the known set verbatim."""
    fn.attributes._known = fn.attributes._known | {attr}
    fn.attributes.add(attr)


def parallel_wrapper(module: ir.Module, kernel: ir.Function, n_ptrs: int, outer: int = 0):
    """void kernel.par(ptr ctx, i64 start, i64 end): ctx = [ptr x n_ptrs], the kernel's
    pointer arguments; runs the kernel on [start, end) of its outer loop."""
    w = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]), kernel.name + ".par")
    w.linkage = "internal"
    w.attributes.add("nounwind")  # as the kernel: no unwind tables (-O3 inferred it)
    set_vector_width(w)  # the kernel is inlined here: the wrapper needs the width too
    b = ir.IRBuilder(w.append_basic_block("entry"))
    ctx, start, end = w.args
    ptrs = [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR) for k in range(n_ptrs)]
    b.call(kernel, ptrs + [start, end])
    b.ret_void()
    return w
