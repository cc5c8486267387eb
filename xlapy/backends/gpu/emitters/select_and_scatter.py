"""select-and-scatter on the gpu, simply: one thread fills the output with the init value,
then for each source element (row-major) selects an operand element of its window (the
first in-bounds one, replaced by a later one the select computation does not keep, as XLA
defines it) and combines the source value into the output there with the scatter
computation, in the interpreter's order. For the small max-pool gradients of the corpus;
XLA's parallel form (one thread per source element, atomics) is not done here.
"""

from __future__ import annotations

import math

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import global_thread_index, libdevice_math, \
    new_kernel
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter, lowering_error
from xlapy.backends.llvm.loops import c64, for_range, linear_of, row_major_index_of
from xlapy.hlo.ir import Instruction

I1 = ir.IntType(1)


def emit_select_and_scatter(module: ir.Module, instr: Instruction, name: str,
                            use_libdevice: bool = True) -> ir.Function:
    """kernel(out, operand, source, init)."""
    op_shape, src_shape = instr.operands[0].shape, instr.operands[1].shape
    out_shape = instr.shape
    t = op_shape.element_type
    st = T.storage_type(t)
    w = instr.attrs.get("window")
    rank = op_shape.rank
    size = list(w.size) if w is not None and w.rank else [1] * rank
    stride = list(w.stride) if w is not None and w.rank else [1] * rank
    pad_low = list(w.pad_low) if w is not None and w.rank else [0] * rank
    rdil = list(w.rhs_dilate) if w is not None and w.rank else [1] * rank
    if w is not None and w.rank and any(d != 1 for d in w.lhs_dilate):
        raise lowering_error(instr, "select-and-scatter with base dilation")
    fn, b = new_kernel(module, name, 4)
    out, operand, source, init_ptr = fn.args
    em = ElementalEmitter(b, module, math=libdevice_math if use_libdevice else None)
    select, scatter = instr.attrs["select"], instr.attrs["scatter"]

    def addr(ptr, shape, index):
        return b.gep(ptr, [linear_of(b, shape, index) if shape.rank else c64(0)],
                     inbounds=True, source_etype=T.storage_type(shape.element_type))

    with b.if_then(b.icmp_signed("==", global_thread_index(b), c64(0))):
        init = T.load(b, init_ptr, t)
        with for_range(b, 0, out_shape.size, name="f") as i:
            T.store(b, init, b.gep(out, [i], inbounds=True, source_etype=st), t)
        have = em.alloca(I1, "have")
        sel_val = em.alloca(T.value_type(t), "sel")
        sel_off = em.alloca(T.I64, "off")
        with for_range(b, 0, src_shape.size, name="g") as g:
            gidx = row_major_index_of(b, list(src_shape.dims), g)
            b.store(ir.Constant(I1, 0), have)
            with for_range(b, 0, math.prod(size), name="p") as p:
                pidx = row_major_index_of(b, size, p)
                coords, valid = [], ir.Constant(I1, 1)
                for d in range(rank):
                    c = b.sub(b.add(b.mul(gidx[d], c64(stride[d])),
                                    b.mul(pidx[d], c64(rdil[d]))), c64(pad_low[d]))
                    valid = b.and_(valid, b.and_(b.icmp_signed(">=", c, c64(0)),
                                                 b.icmp_signed("<", c, c64(op_shape.dims[d]))))
                    coords.append(c)
                with b.if_then(valid):
                    with em.scope():
                        cand = T.load(b, addr(operand, op_shape, coords), t)
                        had = b.load(have)
                        take = em.alloca(I1, "take")
                        b.store(b.not_(had), take)
                        with b.if_then(had):
                            keep = em.call_scalar(select, [b.load(sel_val), cand])
                            b.store(b.not_(keep), take)
                        with b.if_then(b.load(take)):
                            b.store(cand, sel_val)
                            b.store(linear_of(b, out_shape, coords) if rank else c64(0),
                                    sel_off)
                            b.store(ir.Constant(I1, 1), have)
            with b.if_then(b.load(have)):
                with em.scope():
                    dst = b.gep(out, [b.load(sel_off)], inbounds=True, source_etype=st)
                    v = em.call_scalar(scatter, [T.load(b, dst, t),
                                                 T.load(b, addr(source, src_shape, gidx), t)])
                    T.store(b, v, dst, t)
    b.ret_void()
    return fn
