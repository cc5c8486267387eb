"""A native call trampoline: the cheap way from Python into compiled code.

    void xlapy_trampoline(PyObject *args, PyObject *outs, void *arena, void *entry,
                          void *desc)

`args` and `outs` are tuples of C-contiguous NumPy arrays. The trampoline (compiled once
per process) reads each array's data pointer straight from the PyArrayObject, builds the
leaf-pointer tables on its stack, releases the GIL, calls `entry(params, outs, arena, desc)`,
and takes the GIL back. It is called through ctypes.PYFUNCTYPE (which keeps the GIL), so a
call costs one ctypes call with no per-argument ctypes conversions.

The object layouts it relies on (tuple items at tuple.__basicsize__, the data pointer of a
NumPy array right after the object header) are checked when it is built; if they do not
hold, `trampoline()` returns None and the executable uses its plain ctypes path.
"""

from __future__ import annotations

import ctypes
import functools
import sys

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.runtime.loader import LoadedObject
from xlapy.backends.cpu.target import init_llvm
from xlapy.backends.llvm.loops import for_range
from xlapy.backends.llvm.types import I64, PTR, VOID

MAX_LEAVES = 64
_DATA_OFFSET = 16


def _layout_ok() -> bool:
    probe = np.arange(3.0)
    if ctypes.c_void_p.from_address(id(probe) + _DATA_OFFSET).value != probe.ctypes.data:
        return False
    t = (probe,)
    return (ctypes.c_void_p.from_address(id(t) + tuple.__basicsize__).value == id(probe)
            and tuple.__itemsize__ == 8)


def _build_ir() -> str:
    m = ir.Module("xlapy_trampoline")
    save = ir.Function(m, ir.FunctionType(PTR, []), "xlapy_PyEval_SaveThread")
    restore = ir.Function(m, ir.FunctionType(VOID, [PTR]), "xlapy_PyEval_RestoreThread")
    entry_ty = ir.FunctionType(VOID, [PTR, PTR, PTR, PTR])
    # a typed function pointer (printed as `ptr`) lets llvmlite emit an indirect call
    fn = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, PTR, entry_ty.as_pointer(), PTR]),
                     "xlapy_trampoline")
    args, outs, arena, entry, desc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tables = []
    for tup in (args, outs):
        n = b.load(b.gep(tup, [ir.Constant(I64, 16)], source_etype=ir.IntType(8)), typ=I64)
        tbl = b.alloca(PTR, size=ir.Constant(I64, MAX_LEAVES))
        items = b.gep(tup, [ir.Constant(I64, tuple.__basicsize__)], source_etype=ir.IntType(8))
        with for_range(b, 0, n) as i:
            obj = b.load(b.gep(items, [i], source_etype=PTR), typ=PTR)
            data = b.load(b.gep(obj, [ir.Constant(I64, _DATA_OFFSET)],
                                source_etype=ir.IntType(8)), typ=PTR)
            b.store(data, b.gep(tbl, [i], source_etype=PTR))
        tables.append(tbl)
    state = b.call(save, [])
    b.call(entry, [tables[0], tables[1], arena, desc])
    b.call(restore, [state])
    b.ret_void()
    cyc = ir.Function(m, ir.FunctionType(I64, []), "xlapy_cycles")
    cb = ir.IRBuilder(cyc.append_basic_block("entry"))
    clock = m.declare_intrinsic("llvm.readcyclecounter", (), ir.FunctionType(I64, []))
    cb.ret(cb.call(clock, []))
    return str(m)


@functools.lru_cache(maxsize=None)
def trampoline():
    """The ctypes-callable trampoline, or None if this Python's object layout is unusual."""
    if not _layout_ok():
        return None
    init_llvm()
    for name in ("PyEval_SaveThread", "PyEval_RestoreThread"):
        addr = ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
        llvm.add_symbol("xlapy_" + name, addr)
    # the code reads Python's tuple and NumPy's array layouts: they are part of its name
    name = f"trampoline-{sys.implementation.cache_tag}-{tuple.__basicsize__}-{_DATA_OFFSET}"
    code = LoadedObject(cached_object(_build_ir, name))
    proto = ctypes.PYFUNCTYPE(None, ctypes.py_object, ctypes.py_object, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_void_p)
    fn = proto(code.address("xlapy_trampoline"))
    fn._code = code  # keep the machine code alive with the function
    fn._cycles = ctypes.CFUNCTYPE(ctypes.c_int64)(code.address("xlapy_cycles"))
    return fn


def cycles() -> int:
    """The CPU's cycle counter (for --xla_hlo_profile's time base)."""
    t = trampoline()
    if t is None:
        import time
        return int(time.perf_counter() * 1e9)
    return t._cycles()
