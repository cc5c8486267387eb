"""Column-reduction kernels (their plan: passes/column_plan.py). Column reductions: a reduce
that keeps only the input's minor (contiguous) dimension, e.g. [R, C] -> [C] (every bias
gradient), possibly followed by an elementwise epilogue in the same fusion (the bias
update).

The elemental form computes each output element with its own strided inner loop over the
rows. This kernel instead walks the rows outermost and a block of columns innermost,
accumulating into a small stack array: the inner loop reads contiguous memory and has no
dependence between iterations, so it vectorizes. Then the epilogue runs per column, with
the reduction's generator replaced by a read of the accumulator. Column blocks are the
parallel dimension. Summation order per column is the rows' order (sequential), as in the
elemental form; f16/bf16 sums accumulate in f32, like everywhere else.

Multi-output form (passes/column_fusion.py): the fusion's root may be a tuple holding the
reduction's output and elementwise outputs with the reduction input's dimensions (a
gradient and its bias gradient). Those are computed and stored inside the row loop, at the
element the reduction reads, so the shared inputs are read from memory once.
"""

from __future__ import annotations

import contextlib

from llvmlite import ir

from xlapy.backends.cpu.emitters.kernel_abi import Kernel, kernel_function, parallel_wrapper
from xlapy.backends.cpu.passes.column_plan import block_size, column_plan
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, Gen, TupleGen
from xlapy.backends.llvm.loops import c64, for_range, linear_of
from xlapy.hlo.ir import Instruction
from xlapy.hlo.reducers import simple_reducer


def emit_column_kernel(module: ir.Module, instr: Instruction, name: str, parallel: bool,
                       shared_inputs: frozenset = frozenset()):
    """shared_inputs: input leaf indices that live in the column output's buffer (a donated
    bias, see overwritable_operands); the kernel reads them through that output pointer."""
    red, blocks, column_root, root_elems = column_plan(instr)
    comp = instr.fused_computation
    n_out = len(root_elems)
    in_shapes = [leaf for op in instr.operands for leaf in op.shape.leaves()]
    fn, ptrs, b, start, end = kernel_function(module, name, n_out + len(in_shapes))
    outs = ptrs[:n_out]
    out = outs[root_elems.index(column_root)]
    out_shape = column_root.shape
    em = ElementalEmitter(b, module)
    it = iter(enumerate(ptrs[n_out:]))

    def gen_for(shape):
        if shape.is_tuple:
            return TupleGen([gen_for(s) for s in shape.tuple_shapes], shape)
        k, arg = next(it)
        return ArrayInput(em, out if k in shared_inputs else arg, shape)

    param_gens = [gen_for(op.shape) for op in instr.operands]
    x_shape = red.operands[0].shape
    t = x_shape.element_type
    minor = x_shape.minor_to_major[0]
    C = x_shape.dims[minor]
    reduced = [d for d in reversed(x_shape.minor_to_major) if d != minor]  # major -> minor
    widen = t.name in ("f16", "bf16") and simple_reducer(red.attrs["to_apply"]) == "add"
    acc_ty = T.F32 if widen else T.value_type(t)
    block = block_size(C)
    acc = em.alloca(ir.ArrayType(acc_ty, block))
    base_gens = em.generators(comp, param_gens)
    input_gen, init_gen = base_gens[id(red.operands[0])], base_gens[id(red.operands[1])]

    def acc_slot(j):
        return b.gep(acc, [c64(0), j])

    with for_range(b, start, end, name="blk") as blk:
        c0 = b.mul(blk, c64(block))
        c1 = b.add(c0, c64(block))
        c1 = b.select(b.icmp_signed("<", c1, c64(C)), c1, c64(C))
        width = b.sub(c1, c0)
        with em.scope():
            init = init_gen([])
            if widen:
                init = T.to_float(b, init, t)
            with for_range(b, 0, width, name="ci") as j:
                b.store(init, acc_slot(j))
        # rows outermost (every reduced dimension, major to minor), columns innermost
        with contextlib.ExitStack() as stack:
            idx = [None] * x_shape.rank
            for d in reduced:
                idx[d] = stack.enter_context(for_range(b, 0, x_shape.dims[d], name=f"r{d}"))
            with for_range(b, 0, width, name="c") as j:
                full = list(idx)
                full[minor] = b.add(c0, j)
                with em.scope():
                    v = input_gen(full)
                    for k, e in enumerate(root_elems):
                        if e is column_root:
                            continue
                        # an elementwise output: computed here, where its inputs are loaded
                        addr = b.gep(outs[k], [linear_of(b, e.shape, full)], inbounds=True,
                                     source_etype=T.storage_type(e.shape.element_type))
                        T.store(b, base_gens[id(e)](full), addr, e.shape.element_type)
                    a = b.load(acc_slot(j))
                    if widen:
                        v = T.to_float(b, v, t)
                        new = b.fadd(a, v)
                    else:
                        new = em.call_scalar(red.attrs["to_apply"], [a, v])
                    b.store(new, acc_slot(j))
        # epilogue: the fusion's root per column, the reduction read from the accumulator
        def read_acc(index):
            j = b.sub(index[0], c0)
            v = b.load(acc_slot(j))
            return T.from_float(b, v, t) if widen else v

        gens = em.generators(comp, param_gens, overrides={id(red): Gen(read_acc, red.shape)})
        root = gens[id(column_root)]
        with for_range(b, c0, c1, name="e") as c:
            with em.scope():
                v = root([c])
                addr = b.gep(out, [linear_of(b, out_shape, [c])], inbounds=True,
                             source_etype=T.storage_type(out_shape.element_type))
                T.store(b, v, addr, out_shape.element_type)
    b.ret_void()
    cost = x_shape.size
    wrapper = parallel_wrapper(module, fn, n_out + len(in_shapes)) if parallel else None
    return Kernel(fn, wrapper, n_out, len(in_shapes), blocks, cost)
