"""scatter: a dedicated emitter (one internal LLVM function per instruction).

  scatter(operand_0..operand_{N-1}, indices, update_0..update_{N-1}), to_apply=f,
          update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
          input_batching_dims, scatter_indices_batching_dims, index_vector_dim

1. out_k = operand_k (memcpy, or an element copy when the layouts differ).
2. For every scatter position (the update dims not in update_window_dims; the index batch
   dims, i.e. the dims of `indices` but index_vector_dim), in row-major order, one after
   the other (so duplicates combine sequentially, in order):
     start[scatter_dims_to_operand_dims[k]] = indices[position, k] (sign- or zero-extended)
     start[input_batching_dims[j]] = the position's coordinate along
                                     scatter_indices_batching_dims[j]
     other start coordinates are 0.
   When the window [start, start + window size) leaves the operand in any dim, the whole
   window is skipped (XLA's semantics; no clamping). Otherwise for every window element:
     out..[start + w] = f(out_0[start + w].., update_0[position, w]..)
   The window dims update_window_dims[i] map in order to the operand dims that are neither
   inserted_window_dims nor input_batching_dims (which have window size 1).

Same semantics as the interpreter (indexing.py). Runs on the calling thread.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import (copy_array, element_ptr, load_at,
                                                 routine_function)
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter, lowering_error
from xlapy.backends.llvm.loops import c64, index_nest
from xlapy.backends.llvm.scatter_dims import ScatterDims


@custom_emitter("scatter")
def emit_scatter(pe, instr, dest, operands) -> bool:
    ops = instr.operands
    if len(ops) < 3 or len(ops) % 2 == 0:
        raise lowering_error(instr, "scatter needs N operands, the indices and N updates")
    n = (len(ops) - 1) // 2
    a = instr.attrs
    comp = a["to_apply"]
    op_shapes = [o.shape for o in ops[:n]]
    idx_shape = ops[n].shape
    upd_shapes = [o.shape for o in ops[n + 1:]]
    out_shapes = instr.shape.leaves()
    rank = op_shapes[0].rank
    sd = ScatterDims.of(instr)
    window_dims, index_map, ivd = sd.window_dims, sd.index_map, sd.ivd
    scatter_dims, window_operand_dims, sizes = sd.scatter_dims, sd.window_operand_dims, sd.sizes
    u0 = upd_shapes[0]
    if len(window_operand_dims) != len(window_dims):
        raise lowering_error(instr, f"scatter has {len(window_dims)} update window dims but "
                                    f"{len(window_operand_dims)} operand window dims")
    if [u0.dims[d] for d in scatter_dims] != [idx_shape.dims[d] for d in sd.idx_batch_dims]:
        raise lowering_error(instr, "scatter update dims do not match the index batch dims")
    idx_t = idx_shape.element_type
    signed = idx_t.is_signed and not idx_t.is_pred

    op_ptrs = list(operands[:n])
    ptrs = list(dest) + op_ptrs + [operands[n]] + list(operands[n + 1:])
    fn, b = routine_function(pe, f"scatter.{instr.name}", len(ptrs))
    args = list(fn.args)
    outs, srcs = args[:n], args[n:2 * n]
    idx_ptr, upds = args[2 * n], args[2 * n + 1:]
    for o, os_, s, ss in zip(outs, out_shapes, srcs, op_shapes):
        copy_array(b, o, os_, s, ss)
    em = ElementalEmitter(b, pe.llmod)

    def batch_pos(sd):  # position of indices dim sd among the index batch dims
        return sd if sd < ivd else sd - 1

    with index_nest(b, [u0.dims[d] for d in scatter_dims], name="upd") as pos:
        # the index vector of this scatter position
        def index_component(k):
            iidx = list(pos)
            if ivd < idx_shape.rank:
                iidx.insert(ivd, c64(k))
            v = load_at(b, idx_ptr, idx_shape, iidx)
            if v.type.width < 64:
                v = b.sext(v, T.I64) if signed else b.zext(v, T.I64)
            return v

        start = [c64(0)] * rank
        for k, d in enumerate(index_map):
            start[d] = index_component(k)
        for od, d in zip(sd.in_batch, sd.idx_batch):
            start[od] = pos[batch_pos(d)]
        valid = ir.Constant(T.I1, 1)
        for d in range(rank):
            s = start[d]
            if isinstance(s, ir.Constant) and 0 <= s.constant <= op_shapes[0].dims[d] - sizes[d]:
                continue
            ok = b.and_(b.icmp_signed(">=", s, c64(0)),
                        b.icmp_signed("<=", s, c64(op_shapes[0].dims[d] - sizes[d])))
            valid = b.and_(valid, ok)
        with b.if_then(valid):
            with index_nest(b, [u0.dims[d] for d in window_dims], name="win") as w:
                oidx = list(start)
                for d, wv in zip(window_operand_dims, w):
                    oidx[d] = wv if _is_zero(start[d]) else b.add(start[d], wv)
                uidx = [None] * u0.rank
                for d, p in zip(scatter_dims, pos):
                    uidx[d] = p
                for d, wv in zip(window_dims, w):
                    uidx[d] = wv
                targets = [element_ptr(b, o, s, oidx) for o, s in zip(outs, out_shapes)]
                cur = [T.load(b, p, s.element_type) for p, s in zip(targets, out_shapes)]
                new = [load_at(b, u, s, uidx) for u, s in zip(upds, upd_shapes)]
                with em.scope():
                    result = em.call_scalar(comp, cur + new)
                results = list(result) if isinstance(result, tuple) else [result]
                for p, s, v in zip(targets, out_shapes, results):
                    T.store(b, v, p, s.element_type)
    b.ret_void()
    pe.b.call(fn, ptrs)
    return True


def _is_zero(v) -> bool:
    return isinstance(v, ir.Constant) and v.constant == 0

