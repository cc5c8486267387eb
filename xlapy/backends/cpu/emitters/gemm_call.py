"""Calls of xlapy's own gemm (gemm_kernel.py) on strided matrices, for the emitters that
build their operands' strides themselves (conv.py, dot_general.py).

  g = OwnGemm(b, slots, t, m, n, k, sa, sb, sc, ws, chunks, epilogue)
  g.call(b, a_ptr, b_ptr, c_ptr)        C = A . B (C also as Cin: beta is 0)

sa, sb, sc are (row stride, column stride) in elements. A call with few output columns
computes C^T = B^T . A^T instead (gemm_kernel.swaps), as gemm.py does; `swap` tells an
epilogue its tiles are transposed (`swap=` overrides the choice).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64


def workspace_bytes(t: str, m: int, n: int, k: int, chunks: int, swap=None) -> int:
    swap = gk.swaps(t, m, n, vector_bits()) if swap is None else swap
    rows, cols = (n, m) if swap else (m, n)
    return gk.workspace_bytes(t, vector_bits(), rows, k, chunks, cols)


def put(b, slots, name, value):
    at = b.gep(slots, [c64(gk.SLOT[name])], source_etype=T.I64)
    if isinstance(value, int):
        value = c64(value)
    elif isinstance(value, float):
        value = b.bitcast(ir.Constant(T.F64, value), T.I64)
    elif value.type != T.I64:
        value = b.ptrtoint(value, T.I64)
    b.store(value, at)


def gemm_function(module: ir.Module, t: str) -> ir.Function:
    name = f"xlapy_gemm_{t}"
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(T.VOID, [T.PTR]),
                                                   name)


class OwnGemm:
    def __init__(self, b, slots, t, m, n, k, sa, sb, sc, ws, chunks, epilogue=None,
                 swap=None):
        self.slots, self.t = slots, t
        self.swap = gk.swaps(t, m, n, vector_bits()) if swap is None else swap
        if self.swap:
            dims, a_str, b_str, c_str = (n, m), (sb[1], sb[0]), (sa[1], sa[0]), (sc[1], sc[0])
        else:
            dims, a_str, b_str, c_str = (m, n), sa, sb, sc
        for slot, value in (("M", dims[0]), ("N", dims[1]), ("K", k), ("rsa", a_str[0]),
                            ("csa", a_str[1]), ("rsb", b_str[0]), ("csb", b_str[1]),
                            ("ldcin", c_str[0]), ("cscin", c_str[1]), ("ldc", c_str[0]),
                            ("csc", c_str[1]), ("ws", ws), ("chunks", chunks),
                            ("epi", epilogue[0] if epilogue else 0),
                            ("epi_ctx", epilogue[1] if epilogue else 0),
                            ("alpha", 1.0), ("beta", 0.0)):
            put(b, slots, slot, value)

    def call(self, b, a_ptr, b_ptr, c_ptr):
        put(b, self.slots, "A", b_ptr if self.swap else a_ptr)
        put(b, self.slots, "B", a_ptr if self.swap else b_ptr)
        put(b, self.slots, "C", c_ptr)
        put(b, self.slots, "Cin", c_ptr)
        b.call(gemm_function(b.module, self.t), [self.slots])
