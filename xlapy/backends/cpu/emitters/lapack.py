"""Cholesky through LAPACK potrf: the `cholesky` opcode and the custom-calls jax emits for
the cpu (typed FFI).

  f32[B..,n,n] cholesky(a), lower=true|false     (XLA's opcode; any float type, any layout)

Each matrix is gathered (its logical elements, whatever the layout) into a column-major
workspace of the compute type (f32, or f64 for f64), factored in place by potrf with uplo
'L' or 'U', and written back: the factor's triangle, zeros in the other one, or NaN
everywhere when potrf reports a matrix that is not positive definite (info > 0) or the
factor is not finite, as XLA:CPU does.

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
code links in any process.
"""

from __future__ import annotations

import re

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_call_target, custom_emitter
from xlapy.backends.cpu.emitters.routine import (Scratch, copy_array, index_nest, load_at,
                                                 routine_function, store_at)
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.backends.llvm.loops import c64, entry_alloca, linear_of

_POTRF = {"f32": "xlapy_spotrf", "f64": "xlapy_dpotrf"}


def _uplo(instr) -> str:
    m = re.search(r"uplo\s*=\s*(\d+)", str(instr.attrs.get("backend_config", "")))
    return chr(int(m.group(1))) if m else "L"


@custom_call_target("lapack_spotrf_ffi", "lapack_dpotrf_ffi")
def emit_potrf(pe, instr, dest, operands) -> bool:
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


# ---- the cholesky opcode ---------------------------------------------------------------------

def _potrf_function(pe, name: str) -> ir.Function:
    return pe.llmod.globals.get(name) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 5), name)


@custom_emitter("cholesky")
def emit_cholesky(pe, instr, dest, operands) -> bool:
    out, a_shape = instr.shape, instr.operands[0].shape
    t, n = out.element_type, out.dims[-1]
    if out.size == 0:
        return True
    wide = t.name == "f64"
    ct, esize = (T.F64, 8) if wide else (T.F32, 4)
    potrf = _potrf_function(pe, _POTRF["f64" if wide else "f32"])
    lower = bool(instr.attrs.get("lower", False))

    fn, b = routine_function(pe, f"cholesky.{instr.name}", 2)
    out_ptr, a_ptr = fn.args
    work = Scratch(b, n * n * esize, "cholesky.work")

    def const_slot(ty, value):
        s = entry_alloca(b, ty)
        b.store(ir.Constant(ty, value), s)
        return s

    uplo_s, n_s = const_slot(T.I8, ord("L" if lower else "U")), const_slot(T.I32, n)
    info_s, bad_s = entry_alloca(b, T.I32), entry_alloca(b, T.I1)
    nn = c64(n)

    def cell(i, j):  # column-major: element (i, j) of the workspace
        return b.gep(work.ptr, [b.add(b.mul(j, nn), i)], source_etype=ct)

    def kept(i, j):  # the factor's triangle
        return b.icmp_signed("<=", j, i) if lower else b.icmp_signed("<=", i, j)

    with index_nest(b, out.dims[:-2], name="batch") as batch:
        with index_nest(b, (n, n), name="in") as (i, j):
            b.store(T.to_float(b, load_at(b, a_ptr, a_shape, [*batch, i, j]), t), cell(i, j))
        b.store(ir.Constant(T.I32, 0), info_s)
        b.call(potrf, [uplo_s, n_s, work.ptr, n_s, info_s])
        b.store(b.icmp_signed("!=", b.load(info_s), ir.Constant(T.I32, 0)), bad_s)
        with index_nest(b, (n, n), name="check") as (i, j):  # NaN or inf: x - x is NaN
            v = b.load(cell(i, j), typ=ct)
            nonfinite = b.and_(kept(i, j), b.fcmp_unordered("uno", b.fsub(v, v), v))
            b.store(b.or_(b.load(bad_s), nonfinite), bad_s)
        bad = b.load(bad_s)
        with index_nest(b, (n, n), name="out") as (i, j):
            v = b.select(kept(i, j), b.load(cell(i, j), typ=ct), ir.Constant(ct, 0.0))
            v = b.select(bad, ir.Constant(ct, float("nan")), v)
            store_at(b, T.from_float(b, v, t), out_ptr, out, [*batch, i, j])
    work.release()
    b.ret_void()
    pe.b.call(fn, [dest[0], operands[0]])
    return True
