"""scatter on the gpu, simply: the operands are copied to the outputs (Copy thunks), then one
thread applies every update in order (batch index major, window element minor), which is
the order the interpreter applies them in: results match exactly, combiner and duplicates
included. A window that does not fit in the operand at its start index is skipped whole,
as XLA does.

One thread is right for the small scatters of index bookkeeping and gradients of gathers
in the corpus; XLA's parallel scatter (atomics for commutative combiners, sorted indices
otherwise) is not done here.
"""

from __future__ import annotations

import math

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import global_thread_index, libdevice_math, \
    new_kernel
from xlapy.backends.gpu.emitters.launch import LaunchDims
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter
from xlapy.backends.llvm.loops import c64, for_range, linear_of, row_major_index_of
from xlapy.backends.llvm.scatter_dims import ScatterDims
from xlapy.hlo.ir import Instruction

SCATTER_LAUNCH = LaunchDims((1, 1, 1), (1, 1, 1))


def emit_scatter(module: ir.Module, instr: Instruction, name: str,
                 use_libdevice: bool = True) -> ir.Function:
    """kernel(outs..., indices, updates...), the outs already holding the operands."""
    n = (len(instr.operands) - 1) // 2
    out_shapes = [op.shape for op in instr.operands[:n]]
    idx_shape = instr.operands[n].shape
    upd_shapes = [op.shape for op in instr.operands[n + 1:]]
    fn, b = new_kernel(module, name, 2 * n + 1)
    outs, idx_ptr, upds = fn.args[:n], fn.args[n], fn.args[n + 1:]
    em = ElementalEmitter(b, module, math=libdevice_math if use_libdevice else None)
    a = instr.attrs
    sd = ScatterDims.of(instr)
    window_dims, index_map, ivd, rank = sd.window_dims, sd.index_map, sd.ivd, sd.rank
    scatter_dims, window_operand_dims, sizes = sd.scatter_dims, sd.window_operand_dims, sd.sizes
    batch_idx_dims = sd.idx_batch_dims   # batch order
    u0 = upd_shapes[0]
    batch_shape = [idx_shape.dims[d] for d in batch_idx_dims]
    window_shape = [u0.dims[d] for d in window_dims]
    it = idx_shape.element_type

    with b.if_then(b.icmp_signed("==", global_thread_index(b), c64(0))):
        with for_range(b, 0, math.prod(batch_shape), name="u") as bi:
            bidx = row_major_index_of(b, batch_shape, bi)
            starts = [c64(0)] * rank
            for k, d in enumerate(index_map):
                iidx = [None] * idx_shape.rank
                for pos, dd in enumerate(batch_idx_dims):
                    iidx[dd] = bidx[pos]
                if ivd < idx_shape.rank:
                    iidx[ivd] = c64(k)
                addr = b.gep(idx_ptr, [linear_of(b, idx_shape, iidx)], inbounds=True,
                             source_etype=T.storage_type(it))
                v = T.load(b, addr, it)
                if v.type.width < 64:
                    v = b.sext(v, T.I64) if it.is_signed else b.zext(v, T.I64)
                starts[d] = v
            for od, d in zip(sd.in_batch, sd.idx_batch):
                starts[od] = bidx[batch_idx_dims.index(d)]
            valid = ir.Constant(ir.IntType(1), 1)
            for d in range(rank):
                lo = b.icmp_signed(">=", starts[d], c64(0))
                hi = b.icmp_signed("<=", starts[d], c64(out_shapes[0].dims[d] - sizes[d]))
                valid = b.and_(valid, b.and_(lo, hi))
            with b.if_then(valid):
                with for_range(b, 0, math.prod(window_shape), name="w") as wi:
                    widx = row_major_index_of(b, window_shape, wi) if window_shape else []
                    oidx = list(starts)
                    for k, d in enumerate(window_operand_dims):
                        oidx[d] = b.add(starts[d], widx[k])
                    uidx = [None] * u0.rank
                    for pos, d in enumerate(scatter_dims):
                        uidx[d] = bidx[pos]
                    for k, d in enumerate(window_dims):
                        uidx[d] = widx[k]
                    with em.scope():
                        oaddrs = [b.gep(o, [linear_of(b, s, oidx)], inbounds=True,
                                        source_etype=T.storage_type(s.element_type))
                                  for o, s in zip(outs, out_shapes)]
                        cur = [T.load(b, p, s.element_type) for p, s in zip(oaddrs, out_shapes)]
                        new = [T.load(b, b.gep(u, [linear_of(b, s, uidx)], inbounds=True,
                                               source_etype=T.storage_type(s.element_type)),
                                      s.element_type) for u, s in zip(upds, upd_shapes)]
                        res = em.call_scalar(a["to_apply"], cur + new)
                        res = list(res) if isinstance(res, tuple) else [res]
                        for p, s, v in zip(oaddrs, out_shapes, res):
                            T.store(b, v, p, s.element_type)
    b.ret_void()
    return fn
