"""LAPACK custom-calls as jax emits them for the cpu (typed FFI): Cholesky through potrf.

  (f32[B..,n,n], s32[B..]) custom-call(a), custom_call_target="lapack_spotrf_ffi",
                                           backend_config={uplo = 76 : ui8}   (76 = 'L')
  lapack_dpotrf_ffi: the same for f64

Each matrix is factored in place in the first output: the triangle named by uplo gets the
factor (lower L with a = L L^T for 'L', upper U with a = U^T U for 'U'), the other triangle
keeps the input's values, and the second output gets LAPACK's info (0, or k > 0 when the
leading minor of order k is not positive definite; jax then masks the result with NaN).

LAPACK is column-major. The operand is first copied into the output buffer (converting its
layout); when the output's matrices are row-major instead of column-major, LAPACK sees the
transpose, so the opposite triangle is requested: the result then lands in the logical
triangle that was asked for. Batch dims must be the most-major dims of the output.

The LAPACK routines come from scipy (scipy.linalg.cython_lapack), registered with LLVM by
name (xlapy_spotrf, xlapy_dpotrf) by runtime/blas.py when first needed, so cached object
code links in any process. Self-contained (ahead-of-time) code cannot call them: there the
custom-call is refused with an error naming it.
"""

from __future__ import annotations

import re

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_call_target
from xlapy.backends.cpu.emitters.routine import copy_array, index_nest, routine_function
from xlapy.backends.cpu.target import self_contained
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.backends.llvm.loops import c64, entry_alloca, linear_of

_POTRF = {"f32": "xlapy_spotrf", "f64": "xlapy_dpotrf"}


def _uplo(instr) -> str:
    m = re.search(r"uplo\s*=\s*(\d+)", str(instr.attrs.get("backend_config", "")))
    return chr(int(m.group(1))) if m else "L"


@custom_call_target("lapack_spotrf_ffi", "lapack_dpotrf_ffi")
def emit_potrf(pe, instr, dest, operands) -> bool:
    if self_contained():
        raise lowering_error(instr, f"custom-call '{instr.attrs['custom_call_target']}' "
                                    "(Cholesky through LAPACK) is not supported in "
                                    "ahead-of-time compilation: the object would need "
                                    "scipy's LAPACK at run time")
    leaves = instr.shape.leaves()
    a_shape = instr.operands[0].shape if len(instr.operands) == 1 else None
    if a_shape is None or len(leaves) != 2 or a_shape.rank < 2:
        raise lowering_error(instr, "potrf needs one matrix operand and a (factor, info) result")
    out, info = leaves
    t = out.element_type.name
    rank = out.rank
    n = out.dims[-1]
    if t not in _POTRF or out.dims[-2] != n or a_shape.dims != out.dims:
        raise lowering_error(instr, "potrf needs square f32/f64 matrices")
    m2m = list(reversed(out.minor_to_major))
    if sorted(m2m[:rank - 2]) != list(range(rank - 2)):
        raise lowering_error(instr, "potrf needs the batch dims to be the most-major dims of "
                                    "its result")
    column_major = m2m[-1] == rank - 2
    uplo = _uplo(instr)
    if uplo not in "LU":
        raise lowering_error(instr, f"potrf uplo must be L or U, got {uplo!r}")
    if not column_major:
        uplo = "U" if uplo == "L" else "L"

    fn, b = routine_function(pe, f"potrf.{instr.name}", 3)
    out_ptr, info_ptr, a_ptr = fn.args
    copy_array(b, out_ptr, out, a_ptr, a_shape)
    potrf = pe.llmod.globals.get(_POTRF[t]) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 5), _POTRF[t])

    def const_slot(ty, value):
        s = entry_alloca(b, ty)
        b.store(ir.Constant(ty, value), s)
        return s

    uplo_s, n_s = const_slot(T.I8, ord(uplo)), const_slot(T.I32, n)
    lda_s = const_slot(T.I32, max(n, 1))
    info_s = entry_alloca(b, T.I32)
    esize = out.element_type.itemsize
    # the row-major order of the batch dims is their physical order too (they are major)
    batch_dims = [out.dims[d] for d in m2m[:rank - 2]]
    with index_nest(b, batch_dims, name="batch") as bidx:
        index = [c64(0)] * rank
        for d, v in zip(m2m[:rank - 2], bidx):
            index[d] = v
        matrix = b.gep(out_ptr, [b.mul(linear_of(b, out, index), c64(esize))],
                       source_etype=T.I8)
        b.store(ir.Constant(T.I32, 0), info_s)
        if n > 0:
            b.call(potrf, [uplo_s, n_s, matrix, lda_s, info_s])
        info_index = [index[d] for d in range(rank - 2)]
        addr = b.gep(info_ptr, [linear_of(b, info, info_index)],
                     source_etype=T.storage_type(info.element_type))
        v = b.load(info_s)
        ity = T.storage_type(info.element_type)
        if ity.width != 32:
            v = b.sext(v, ity) if ity.width > 32 else b.trunc(v, ity)
        b.store(v, addr)
    b.ret_void()
    pe.b.call(fn, [dest[0], dest[1], operands[0]])
    return True
