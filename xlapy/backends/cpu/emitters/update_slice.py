"""dynamic-update-slice in place: only the update's elements are written.

When buffer assignment gave the result the operand's buffer (passes/inplace.py: the
operand dies here), or a while loop carries the array in place (program.py: a scan's
stacked outputs), the result pointer is the operand pointer and the kernel writes the
update window alone; otherwise it first copies the operand (one memcpy) and then writes
the window. The start indices are clamped to [0, dim - update dim] as XLA does.
"""

from __future__ import annotations


from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range, index_of, linear_of
from xlapy.hlo.shapes import same_buffer_shape


@custom_emitter("dynamic-update-slice")
def emit_update_slice(pe, instr, dest, operands) -> bool:
    shape, upd = instr.operands[0].shape, instr.operands[1].shape
    if shape.is_tuple or upd.is_tuple or len(instr.operands) != 2 + shape.rank \
            or any(o.shape.rank != 0 for o in instr.operands[2:]) \
            or not same_buffer_shape(shape, instr.shape):
        return False   # (a result laid out unlike the operand: the elemental loop)
    b = pe.b
    out, src, update = dest[0], operands[0], operands[1]
    if shape.size == 0:
        return True
    nbytes = shape.byte_size
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(out, T.I64), b.ptrtoint(src, T.I64))):
        pe.memcpy(out, src, nbytes)
    if upd.size == 0:
        return True
    starts = []
    for d, (o, p) in enumerate(zip(instr.operands[2:], operands[2:])):
        t = o.shape.element_type
        v = b.load(p, typ=T.storage_type(t))
        if v.type != T.I64:
            v = b.sext(v, T.I64) if t.is_signed else b.zext(v, T.I64)
        hi = c64(shape.dims[d] - upd.dims[d])
        v = b.select(b.icmp_signed("<", v, c64(0)), c64(0), v)
        starts.append(b.select(b.icmp_signed(">", v, hi), hi, v))
    ety = T.storage_type(shape.element_type)
    with for_range(b, 0, upd.size, name="dus") as i:
        idx = index_of(b, upd, i)
        at = linear_of(b, shape, [b.add(s, x) for s, x in zip(starts, idx)])
        x = b.load(b.gep(update, [i], source_etype=ety), typ=ety)
        b.store(x, b.gep(out, [at], source_etype=ety))
    return True
