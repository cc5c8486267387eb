"""dynamic-update-slice: a dedicated emitter that writes only the update when the result is
in the operand's buffer.

  dynamic-update-slice(operand, update, start_0..start_{r-1})

1. out = operand, skipped at run time when out and operand are one buffer (a while loop's
   stacked output written in place: program._while gives such a loop-carried array one
   buffer for both iterations);
2. start_d clamped to [0, dim_d - update_d] (XLA's semantics, as the elemental rule);
3. out[start + i] = update[i]: contiguous runs (the update's trailing dims that span the
   operand's, row-major layouts) are memcpy'd, other layouts go element by element.

Without the first case the elemental rule (elemental_data.py) computes every output
element, and a loop that stacks one row per iteration copies its whole stack every time.
"""

from __future__ import annotations

import math

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import (copy_array, element_ptr, load_at,
                                                 routine_function, store_at)
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, clamp_index, index_nest


def _memcpy(llmod, b, dst, src, nbytes: int) -> None:
    fn = llmod.declare_intrinsic("llvm.memcpy", [T.PTR, T.PTR, T.I64])
    b.call(fn, [dst, src, c64(nbytes), ir.Constant(T.I1, 0)])


@custom_emitter("dynamic-update-slice")
def emit_dynamic_update_slice(pe, instr, dest, operands) -> bool:
    if instr.shape.is_tuple or len(dest) != 1:
        return False
    op_s, upd_s = instr.operands[0].shape, instr.operands[1].shape
    out_s = instr.shape
    rank = op_s.rank
    idx_shapes = [o.shape for o in instr.operands[2:]]
    if len(idx_shapes) != rank or out_s.size == 0:
        return False
    ptrs = [dest[0], operands[0], operands[1]] + list(operands[2:])
    fn, b = routine_function(pe, f"dus.{instr.name}", len(ptrs))
    out, src, upd = fn.args[:3]
    starts_p = fn.args[3:]
    same = b.icmp_unsigned("==", b.ptrtoint(out, T.I64), b.ptrtoint(src, T.I64))
    with b.if_then(b.not_(same)):
        copy_array(b, out, out_s, src, op_s)
    if upd_s.size:
        starts = [clamp_index(b, load_at(b, p, s, []), s.element_type,
                              op_s.dims[d] - upd_s.dims[d])
                  for d, (p, s) in enumerate(zip(starts_p, idx_shapes))]
        contiguous = out_s.has_default_layout and upd_s.has_default_layout and \
            out_s.element_type == upd_s.element_type and out_s.element_type.bits >= 8
        if contiguous:
            # the trailing dims the update spans fully form one contiguous run
            j = rank
            while j > 0 and upd_s.dims[j - 1] == out_s.dims[j - 1]:
                j -= 1
            j = max(j - 1, 0) if j > 0 else 0
            run = math.prod(upd_s.dims[j:])
            nbytes = run * upd_s.element_type.itemsize
            with index_nest(b, upd_s.dims[:j], name="dus") as outer:
                lead = list(outer) + [c64(0)] * (rank - j)
                oidx = [b.add(s, i) for s, i in zip(starts, lead)]
                _memcpy(pe.llmod, b, element_ptr(b, out, out_s, oidx),
                        element_ptr(b, upd, upd_s, lead), nbytes)
        else:
            with index_nest(b, upd_s.dims, name="dus") as index:
                v = load_at(b, upd, upd_s, index)
                store_at(b, v, out, out_s, [b.add(s, i) for s, i in zip(starts, index)])
    b.ret_void()
    pe.b.call(fn, ptrs)
    return True
