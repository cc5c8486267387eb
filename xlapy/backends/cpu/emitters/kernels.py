"""Kernels of elemental instructions and loop fusions on the cpu: the target-independent
loop kernel (backends/llvm/loop_kernel.py) in the cpu's kernel ABI (kernel_abi.py), or a
column-reduction kernel (column_kernel.py), with a thread-pool wrapper when parallel.

  kernel = emit_kernel(module, instr, name, parallel, shared_inputs)
  outer, cost = kernel_cost(instr)      the parallel dimension's trip count and the work
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.column_kernel import emit_column_kernel
from xlapy.backends.cpu.emitters.kernel_abi import CPU_TARGET, Kernel, parallel_wrapper
from xlapy.backends.cpu.passes.column_plan import column_plan
from xlapy.backends.llvm.loop_kernel import (emit_loop_kernel, flat_ok, inner_work,
                                             outer_trip_count, output_leaves)
from xlapy.hlo.ir import Instruction


def kernel_cost(instr: Instruction) -> tuple[int, int]:
    """(outer trip count, work estimate) of the loop kernel for instr."""
    plan = column_plan(instr)
    if plan is not None:
        return plan.blocks, plan.red.operands[0].shape.size
    loop_shape = output_leaves(instr.shape)[0]
    if flat_ok(instr):
        return loop_shape.size, loop_shape.size
    return outer_trip_count(loop_shape), loop_shape.size * inner_work(instr)


def emit_kernel(module: ir.Module, instr: Instruction, name: str, parallel: bool,
                shared_inputs: frozenset = frozenset()) -> Kernel:
    """shared_inputs: input leaf indices that occupy the output's buffer (in-place, see
    passes/inplace.py); the kernel reads them through its output pointer."""
    if column_plan(instr) is not None:
        return emit_column_kernel(module, instr, name, parallel, shared_inputs)
    fn = emit_loop_kernel(CPU_TARGET, module, instr, name, shared_inputs)
    n_out = len(output_leaves(instr.shape))
    n_in = sum(len(op.shape.leaves()) for op in instr.operands)
    outer, cost = kernel_cost(instr)
    wrapper = parallel_wrapper(module, fn, n_out + n_in, outer) if parallel else None
    return Kernel(fn, wrapper, n_out, n_in, outer, cost)
