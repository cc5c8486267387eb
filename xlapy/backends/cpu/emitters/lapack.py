"""The `cholesky` opcode through LAPACK potrf.

  f32[B..,n,n] cholesky(a), lower=true|false     (XLA's opcode; any float or complex type,
                                                  any layout)

Each matrix is gathered (its logical elements, whatever the layout) into a column-major
workspace of the compute type (f32, or f64 for f64), factored in place by potrf with uplo
'L' or 'U', and written back: the factor's triangle, zeros in the other one, or NaN
everywhere when potrf reports a matrix that is not positive definite (info > 0) or the
factor is not finite, as XLA:CPU does.

The custom-calls jax emits for the cpu (lapack_?potrf_ffi and the other LAPACK targets) are
lapack_calls.py's. The LAPACK routines come from scipy (scipy.linalg.cython_lapack),
registered with LLVM by name (xlapy_spotrf, xlapy_dpotrf; xlapy_cpotrf, xlapy_zpotrf for
c64 and c128, which factor the Hermitian matrix of the triangle: a = L L^H, U^H U) by
runtime/blas.py when first needed, so cached object code links in any process.
Self-contained (ahead-of-time) code cannot call them: it calls the module's own IR potrf of
the same interface instead (potrf_ir.py), which is real only (complex matrices are refused
there with a LoweringError).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import potrf_ir
from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import Scratch, load_at, routine_function, store_at
from xlapy.backends.cpu.target import self_contained
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.backends.llvm.loops import c64, entry_alloca, index_nest

_POTRF = {"f32": "xlapy_spotrf", "f64": "xlapy_dpotrf"}


def _potrf_function(pe, dtype: str) -> ir.Function:
    """potrf for "f32" or "f64": scipy's LAPACK (resolved when the JIT loads the code), or
    in self-contained code the module's own (potrf_ir.py)."""
    if self_contained():
        return potrf_ir.potrf_function(pe.llmod, dtype)
    name = _POTRF[dtype]
    return pe.llmod.globals.get(name) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 5), name)


# ---- the cholesky opcode ---------------------------------------------------------------------

@custom_emitter("cholesky")
def emit_cholesky(pe, instr, dest, operands) -> bool:
    out, a_shape = instr.shape, instr.operands[0].shape
    t, n = out.element_type, out.dims[-1]
    if out.size == 0:
        return True
    cplx = t.is_complex
    wide = t.name in ("f64", "c128")
    rt = T.F64 if wide else T.F32                          # the real (part) type
    ct = ir.LiteralStructType([rt, rt]) if cplx else rt    # complex: {re, im}
    esize = (8 if wide else 4) * (2 if cplx else 1)
    if cplx:
        if self_contained():
            raise lowering_error(instr, f"self-contained (ahead-of-time) code has no LAPACK: "
                                        f"the cholesky of {t.name} matrices (cpotrf/zpotrf) "
                                        f"is available only to the JIT")
        name = "xlapy_zpotrf" if wide else "xlapy_cpotrf"
        potrf = pe.llmod.globals.get(name) or ir.Function(
            pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 5), name)
    else:
        potrf = _potrf_function(pe, "f64" if wide else "f32")
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

    def nonfinite(v):  # NaN or inf: x - x is NaN
        return b.fcmp_unordered("uno", b.fsub(v, v), v)

    zero = ir.Constant(ct, (ir.Constant(rt, 0.0), ir.Constant(rt, 0.0)) if cplx else 0.0)
    nan = ir.Constant(ct, (ir.Constant(rt, float("nan")),) * 2 if cplx else float("nan"))
    with index_nest(b, out.dims[:-2], name="batch") as batch:
        with index_nest(b, (n, n), name="in") as (i, j):
            v = load_at(b, a_ptr, a_shape, [*batch, i, j])
            b.store(v if cplx else T.to_float(b, v, t), cell(i, j))
        b.store(ir.Constant(T.I32, 0), info_s)
        b.call(potrf, [uplo_s, n_s, work.ptr, n_s, info_s])
        b.store(b.icmp_signed("!=", b.load(info_s), ir.Constant(T.I32, 0)), bad_s)
        with index_nest(b, (n, n), name="check") as (i, j):
            v = b.load(cell(i, j), typ=ct)
            bad = b.or_(nonfinite(b.extract_value(v, 0)), nonfinite(b.extract_value(v, 1))) \
                if cplx else nonfinite(v)
            b.store(b.or_(b.load(bad_s), b.and_(kept(i, j), bad)), bad_s)
        bad = b.load(bad_s)
        with index_nest(b, (n, n), name="out") as (i, j):
            v = b.select(kept(i, j), b.load(cell(i, j), typ=ct), zero)
            v = b.select(bad, nan, v)
            store_at(b, v if cplx else T.from_float(b, v, t), out_ptr, out, [*batch, i, j])
    work.release()
    b.ret_void()
    pe.b.call(fn, [dest[0], operands[0]])
    return True
