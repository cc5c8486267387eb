"""topk on the gpu: one thread per row keeps the row's k best elements sorted in the output
row itself (values and their indices), inserting each element after those at least as good
(so equal keys keep their order: the lower index first, as a stable sort gives). Floats
compare by their total order (-NaN < -inf < ... < +inf < +NaN), as the interpreter's
topk. XLA's TopK custom call (the form JAX's optimized modules hold) orders by its
comparator computation instead: comparator(a, b) true puts a before b. O(row * k) per
thread: for small k.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import global_thread_index, new_kernel
from xlapy.backends.gpu.emitters.launch import LaunchDims, loop_launch
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter
from xlapy.backends.llvm.loops import c64, for_range, step_down_while
from xlapy.hlo.ir import Instruction


def _row_major(shape) -> bool:
    return tuple(shape.minor_to_major) == tuple(reversed(range(shape.rank)))


def topk_supported(instr: Instruction) -> bool:
    if instr.opcode == "custom-call" and (
            instr.attrs.get("custom_call_target") != "TopK" or len(instr.operands) != 1
            or len(instr.attrs.get("called_computations") or ()) != 1):
        return False
    x = instr.operands[0].shape
    return (instr.shape.is_tuple and x.rank >= 1 and _row_major(x)
            and all(_row_major(s) for s in instr.shape.tuple_shapes))


def topk_launch(instr: Instruction) -> LaunchDims:
    x = instr.operands[0].shape
    return loop_launch(x.size // max(x.dims[-1], 1))


def _key(b: ir.IRBuilder, v, t):
    """An integer whose signed (or, for unsigned types, unsigned) order is t's total order."""
    if t.is_float:
        bits = t.bits
        it = ir.IntType(bits)
        raw = b.bitcast(v, it) if t.name != "bf16" else v
        mask = b.lshr(b.ashr(raw, ir.Constant(it, bits - 1)), ir.Constant(it, 1))
        return b.xor(raw, mask), True
    if t.is_pred:
        return b.zext(v, T.I8), False
    return v, t.is_signed


def emit_topk(module: ir.Module, instr: Instruction, name: str) -> ir.Function:
    x_shape = instr.operands[0].shape
    vals_shape, idx_shape = instr.shape.tuple_shapes
    t, it = x_shape.element_type, idx_shape.element_type
    n, k = x_shape.dims[-1], vals_shape.dims[-1]
    comparator = (instr.attrs["called_computations"][0] if instr.opcode == "custom-call"
                  else None)
    rows = x_shape.size // max(n, 1)
    largest = instr.attrs.get("largest", True)
    fn, b = new_kernel(module, name, 3)
    vals, idxs, x = fn.args
    st, ist = T.storage_type(t), T.storage_type(it)
    em = ElementalEmitter(b, module)

    def better(v, w, vi, wi):
        """v (at index vi) goes before w (at wi)."""
        if comparator is not None:  # a sort comparator over (values, indices)
            args = [v, w] + ([vi, wi] if len(comparator.parameters) == 4 else [])
            with em.scope():
                return em.call_scalar(comparator, args)
        (vk, signed), (wk, _) = _key(b, v, t), _key(b, w, t)
        return (b.icmp_signed if signed else b.icmp_unsigned)(">" if largest else "<", vk, wk)

    row = global_thread_index(b)
    with b.if_then(b.icmp_signed("<", row, c64(rows))):
        xbase, obase = b.mul(row, c64(n)), b.mul(row, c64(k))
        count = b.alloca(T.I64)   # (mem2reg: a register)
        b.store(c64(0), count)
        with for_range(b, 0, n, name="e") as e:
            v = T.load(b, b.gep(x, [b.add(xbase, e)], inbounds=True, source_etype=st), t)
            cnt = b.load(count)
            # insertion point: after every kept element at least as good as v
            def goes_before(j, jm):
                w = T.load(b, b.gep(vals, [b.add(obase, jm)], inbounds=True, source_etype=st), t)
                wi = b.load(b.gep(idxs, [b.add(obase, jm)], inbounds=True, source_etype=ist),
                            typ=ist)
                vi = b.trunc(e, ist) if ist.width < 64 else e
                return better(v, w, vi, wi)

            pos = step_down_while(b, cnt, c64(0), goes_before, name="pos")
            with b.if_then(b.icmp_signed("<", pos, c64(k))):
                last = b.select(b.icmp_signed("<", cnt, c64(k)), cnt, c64(k - 1))
                # shift [pos, last) one to the right, from the end
                with for_range(b, 0, b.sub(last, pos), name="s") as s:
                    dst = b.sub(last, s)
                    src = b.sub(dst, c64(1))
                    for ptr, ty in ((vals, st), (idxs, ist)):
                        sv = b.load(b.gep(ptr, [b.add(obase, src)], inbounds=True,
                                          source_etype=ty), typ=ty)
                        b.store(sv, b.gep(ptr, [b.add(obase, dst)], inbounds=True,
                                          source_etype=ty))
                T.store(b, v, b.gep(vals, [b.add(obase, pos)], inbounds=True, source_etype=st), t)
                b.store(b.trunc(e, ist) if ist.width < 64 else e,
                        b.gep(idxs, [b.add(obase, pos)], inbounds=True, source_etype=ist))
                b.store(b.select(b.icmp_signed("<", cnt, c64(k)), b.add(cnt, c64(1)), cnt),
                        count)
    b.ret_void()
    return fn
