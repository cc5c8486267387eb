"""Cholesky factorization emitted as IR, for self-contained (ahead-of-time) code, which has
no LAPACK to call: a function with LAPACK potrf's interface, so lapack.py calls it where the
JIT calls scipy's spotrf/dpotrf.

  void xlapy_ir_spotrf(const char* uplo, const i32* n, f32* a, const i32* lda, i32* info)
  xlapy_ir_dpotrf: the same for f64

`a` is column-major with leading dimension lda. uplo 'L': the lower triangle becomes L with
a = L L^T; 'U': the upper one becomes U with a = U^T U (the lower factor of the transpose,
so one loop nest serves both: only the strides of the two indices swap). The other
triangle is not touched. info is 0, or j + 1 when the pivot of column j is not positive
(or is NaN) and the factorization stops there, as LAPACK reports it.

The unblocked (right-looking dot-product) algorithm of LAPACK's potf2, in the element type:
for each column j, d = a[j,j] - sum_k<j a[j,k]^2, a[j,j] = sqrt(d), and below it
a[i,j] = (a[i,j] - sum_k<j a[i,k] a[j,k]) / a[j,j]. Serial; O(n^3 / 3) multiply-adds.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.routine import slot
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range

NAMES = {"f32": "xlapy_ir_spotrf", "f64": "xlapy_ir_dpotrf"}


def potrf_function(llmod: ir.Module, dtype: str) -> ir.Function:
    """The module's IR potrf for dtype "f32" or "f64" (defined on first use, internal)."""
    name = NAMES[dtype]
    fn = llmod.globals.get(name)
    if fn is not None:
        return fn
    ft = T.F32 if dtype == "f32" else T.F64
    fn = ir.Function(llmod, ir.FunctionType(T.VOID, [T.PTR] * 5), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    uplo_p, n_p, a, lda_p, info_p = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    n = b.sext(b.load(n_p, typ=T.I32), T.I64)
    lda = b.sext(b.load(lda_p, typ=T.I32), T.I64)
    lower = b.icmp_unsigned("==", b.load(uplo_p, typ=T.I8), ir.Constant(T.I8, ord("L")))
    si = b.select(lower, c64(1), lda)   # element (i, j) of the lower factor of A (or A^T)
    sj = b.select(lower, lda, c64(1))
    b.store(ir.Constant(T.I32, 0), info_p)
    zero = ir.Constant(ft, 0.0)
    sqrt = llmod.declare_intrinsic("llvm.sqrt", [ft])

    def at(i, j):
        return b.gep(a, [b.add(b.mul(i, si), b.mul(j, sj))], source_etype=ft)

    def dot(i, j, acc):
        """sum over k < j of a[i,k] a[j,k], into the slot acc."""
        b.store(zero, acc)
        with for_range(b, 0, j, name="k") as k:
            p = b.fmul(b.load(at(i, k), typ=ft), b.load(at(j, k), typ=ft))
            b.store(b.fadd(b.load(acc, typ=ft), p), acc)
        return b.load(acc, typ=ft)

    acc = slot(b, ft, name="acc")
    with for_range(b, 0, n, name="j") as j:
        d = b.fsub(b.load(at(j, j), typ=ft), dot(j, j, acc))
        ok, fail = fn.append_basic_block("pivot.ok"), fn.append_basic_block("pivot.fail")
        b.cbranch(b.fcmp_ordered(">", d, zero), ok, fail)   # false for NaN, as LAPACK
        b.position_at_end(fail)
        b.store(b.trunc(b.add(j, c64(1)), T.I32), info_p)
        b.ret_void()
        b.position_at_end(ok)
        r = b.call(sqrt, [d])
        b.store(r, at(j, j))
        with for_range(b, b.add(j, c64(1)), n, name="i") as i:
            v = b.fsub(b.load(at(i, j), typ=ft), dot(i, j, acc))
            b.store(b.fdiv(v, r), at(i, j))
    b.ret_void()
    return fn
