"""The custom-call `xlapy_host_callback` (hlo/host_callbacks.py): a call into Python.

Emitted into the program's sequential code (the ProgramEmitter's own builder: never a
fused or parallel kernel, so it runs on the thread that called the program, in program
order, once per execution of its computation, e.g. every iteration of a while body):

    xlapy_host_callback(i64 id, ptr operand_table, ptr result_table)

the tables being stack arrays of the operands' and results' addresses. Buffers not in the
row-major layout go through row-major temporaries. runtime/host_callback.py is the callee.
Ahead-of-time objects have no Python to call: a LoweringError.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_call_target
from xlapy.backends.cpu.emitters.routine import Scratch, copy_array
from xlapy.backends.cpu.runtime.host_callback import SYMBOL
from xlapy.backends.cpu.target import self_contained
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.hlo import host_callbacks
from xlapy.hlo.shapes import Shape


def _row_major(shape: Shape) -> Shape:
    return Shape.array(shape.element_type, shape.dims)


@custom_call_target(host_callbacks.TARGET)
def emit_host_callback(pe, instr, dest, operands) -> bool:
    if self_contained():
        raise lowering_error(instr, "a host callback (debug.print, debug.callback, "
                                    "pure_callback) calls Python: ahead-of-time objects "
                                    "cannot hold one; remove it or run the program in the JIT")
    cid = host_callbacks.callback_id_of(instr)
    cb = host_callbacks.lookup(cid)
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    got = [(tuple(o.shape.dims), np.dtype(o.shape.dtype)) if not o.shape.is_tuple else None
           for o in instr.operands]
    if got != list(cb.in_avals) or [(tuple(s.dims), np.dtype(s.dtype))
                                    for s in leaves] != list(cb.out_avals):
        raise lowering_error(instr, f"the operands and results do not have the shapes "
                                    f"registered for host callback {cb.name}")
    b = pe.b
    scratch, ins, outs, back = [], [], [], []
    for o, ptr in zip(instr.operands, operands):
        s = o.shape
        if s.is_tuple:
            raise lowering_error(instr, "host callback operands must be arrays")
        if not s.has_default_layout and s.size > 1:
            t = Scratch(b, s.byte_size, "cb.in")
            scratch.append(t)
            copy_array(b, t.ptr, _row_major(s), ptr, s)
            ptr = t.ptr
        ins.append(ptr)
    for s, ptr in zip(leaves, dest):
        if not s.has_default_layout and s.size > 1:
            t = Scratch(b, s.byte_size, "cb.out")
            scratch.append(t)
            back.append((ptr, s, t.ptr))
            ptr = t.ptr
        outs.append(ptr)
    fn = pe.llmod.globals.get(SYMBOL) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.I64, T.PTR, T.PTR]), SYMBOL)
    b.call(fn, [ir.Constant(T.I64, cid), pe.table(ins), pe.table(outs)])
    for ptr, s, tmp in back:
        copy_array(b, ptr, s, tmp, _row_major(s))
    for t in scratch:
        t.release()
    return True
