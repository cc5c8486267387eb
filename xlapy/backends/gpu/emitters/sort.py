"""sort on the gpu, simply: one thread per row (every index of the other dimensions), a
stable insertion sort of the row in the output buffers, all operands moved together.

Correct for any comparator and stable (an element moves left only past elements it is
strictly less than); quadratic in the row length and one thread per row, so it is meant
for the short rows of index bookkeeping, not for large sorts (XLA sorts those with a
bitonic network over shared memory: not done here).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import global_thread_index, libdevice_math, \
    new_kernel
from xlapy.backends.gpu.emitters.launch import LaunchDims, loop_launch
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter
from xlapy.backends.llvm.loops import c64, for_range, index_of, linear_of, step_down_while
from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape


def sort_rows(instr: Instruction) -> int:
    shape = instr.operands[0].shape
    n = shape.dims[instr.attrs["dimensions"][0]]
    return shape.size // n if n else 0


def sort_launch(instr: Instruction) -> LaunchDims:
    return loop_launch(sort_rows(instr))


def emit_sort(module: ir.Module, instr: Instruction, name: str,
              use_libdevice: bool = True) -> ir.Function:
    shapes = [op.shape for op in instr.operands]
    # the outputs' own layouts (an operand laid out {0,2,1} sorted into a {2,1,0} result:
    # jax 25200290, found on an H100)
    out_shapes = instr.shape.leaves()
    k = len(shapes)
    fn, b = new_kernel(module, name, 2 * k)
    outs, ins = fn.args[:k], fn.args[k:]
    em = ElementalEmitter(b, module, math=libdevice_math if use_libdevice else None)
    d = instr.attrs["dimensions"][0]
    s0 = shapes[0]
    n = s0.dims[d]
    rows = sort_rows(instr)
    row_shape = Shape.array(s0.element_type, tuple(1 if i == d else s for i, s in
                                                   enumerate(s0.dims)), s0.minor_to_major)
    gid = global_thread_index(b)
    with b.if_then(b.icmp_signed("<", gid, c64(rows))):
        base = index_of(b, row_shape, gid)

        def addr(j, shape, ptr, index_j):
            idx = list(base)
            idx[d] = index_j
            return b.gep(ptr, [linear_of(b, shape, idx)], inbounds=True,
                         source_etype=T.storage_type(shape.element_type))

        with for_range(b, 0, n, name="c") as j:   # the row, copied to the outputs
            for s, so, o, i in zip(shapes, out_shapes, outs, ins):
                v = b.load(addr(j, s, i, j), typ=T.storage_type(s.element_type))
                b.store(v, addr(j, so, o, j))
        with for_range(b, 1, n, name="i") as i:
            # j = i; while j > 0 and less(row[j], row[j-1]): swap; j -= 1
            loaded = []   # the elements at j and j - 1 (the test's loads, for the swap)

            def less(j, jm):
                cur = [T.load(b, addr(j, s, o, j), s.element_type)
                       for s, o in zip(out_shapes, outs)]
                prev = [T.load(b, addr(jm, s, o, jm), s.element_type)
                        for s, o in zip(out_shapes, outs)]
                loaded[:] = cur, prev
                with em.scope():
                    return em.call_scalar(instr.attrs["to_apply"],
                                          [x for pair in zip(cur, prev) for x in pair])

            def swap(j, jm):
                for s, o, c, p in zip(out_shapes, outs, *loaded):
                    T.store(b, p, addr(j, s, o, j), s.element_type)
                    T.store(b, c, addr(jm, s, o, jm), s.element_type)

            step_down_while(b, i, c64(0), less, swap, name="ins")
    b.ret_void()
    return fn
