"""select-and-scatter: a dedicated emitter (one internal LLVM function per instruction).

  select-and-scatter(operand, source, init_value), window=W, select=s, scatter=c

1. out = init_value everywhere.
2. For every source element (one per window position), in row-major order:
     pick the selected operand element of its window: iterate the window in row-major
     order, skipping padding (operand coordinate source_d * stride_d + k_d * rhs_dilate_d
     - pad_low_d outside [0, dim_d)); the first valid element is the pick, and a later
     candidate replaces the pick when s(pick, candidate) is false;
     if the window had a valid element: out[pick] = c(out[pick], source value).

Same semantics as the interpreter (reduction.py). Base dilation (lhs_dilate) is rejected,
as there. Runs on the calling thread (source elements may share picks).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import element_ptr, load_at, routine_function, slot
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter, lowering_error
from xlapy.backends.llvm.loops import c64, for_range, index_nest


@custom_emitter("select-and-scatter")
def emit_select_and_scatter(pe, instr, dest, operands) -> bool:
    operand, source, init = (o.shape for o in instr.operands)
    out = instr.shape
    w = instr.attrs["window"]
    select, scatter = instr.attrs["select"], instr.attrs["scatter"]
    rank = operand.rank
    if w.rank != rank:
        raise lowering_error(instr, f"select-and-scatter window has {w.rank} dims for a "
                                    f"rank-{rank} operand")
    if any(d != 1 for d in w.lhs_dilate):
        raise lowering_error(instr, "select-and-scatter does not support base dilation")
    expected = []
    for n, size, stride, lo, hi, dil in zip(operand.dims, w.size, w.stride, w.pad_low,
                                             w.pad_high, w.rhs_dilate):
        padded, span = n + lo + hi, (size - 1) * dil + 1
        expected.append((padded - span) // stride + 1 if padded >= span else 0)
    if list(source.dims) != expected:
        raise lowering_error(instr, f"select-and-scatter source dims {list(source.dims)} do "
                                    f"not match the {expected} windows of the operand")
    t = operand.element_type
    st = T.storage_type(out.element_type)

    ptrs = [dest[0]] + list(operands)
    fn, b = routine_function(pe, f"select_and_scatter.{instr.name}", 4)
    out_ptr, op_ptr, src_ptr, init_ptr = fn.args
    # 1. fill with the init value (a plain loop over the physical elements)
    init_v = b.load(init_ptr, typ=st)
    with for_range(b, 0, out.size, name="fill") as i:
        b.store(init_v, b.gep(out_ptr, [i], inbounds=True, source_etype=st))
    em = ElementalEmitter(b, pe.llmod)
    have = slot(b, T.I1, None, "have")
    pick_val = slot(b, T.value_type(t), None, "pick")
    pick_ptr = slot(b, T.PTR, None, "pick_ptr")  # the pick's element in out
    with index_nest(b, source.dims, name="src") as s:
        b.store(ir.Constant(T.I1, 0), have)
        with index_nest(b, w.size, name="win") as k:
            coords, valid = [], ir.Constant(T.I1, 1)
            for d in range(rank):
                c = k[d] if w.rhs_dilate[d] == 1 else b.mul(k[d], c64(w.rhs_dilate[d]))
                base = w.stride[d] if source.dims[d] != 1 else 0
                if base:
                    c = b.add(c, s[d] if base == 1 else b.mul(s[d], c64(base)))
                if w.pad_low[d]:
                    c = b.sub(c, c64(w.pad_low[d]))
                coords.append(c)
                if w.pad_low[d] or w.pad_high[d] or operand.dims[d] == 0:
                    valid = b.and_(valid, b.and_(b.icmp_signed(">=", c, c64(0)),
                                                 b.icmp_signed("<", c, c64(operand.dims[d]))))
            with b.if_then(valid):
                cand = load_at(b, op_ptr, operand, coords)
                had = b.load(have)
                take = slot(b, T.I1, b.not_(had))
                with b.if_then(had):
                    with em.scope():
                        keep = em.call_scalar(select, [b.load(pick_val), cand])
                    b.store(b.not_(keep), take)
                with b.if_then(b.load(take)):
                    b.store(cand, pick_val)
                    b.store(element_ptr(b, out_ptr, out, coords), pick_ptr)
                    b.store(ir.Constant(T.I1, 1), have)
        with b.if_then(b.load(have)):
            target = b.load(pick_ptr)
            cur = T.load(b, target, out.element_type)
            with em.scope():
                v = em.call_scalar(scatter, [cur, load_at(b, src_ptr, source, s)])
            T.store(b, v, target, out.element_type)
    b.ret_void()
    pe.b.call(fn, ptrs)
    return True
