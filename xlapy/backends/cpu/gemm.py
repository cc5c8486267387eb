"""dot through BLAS gemm (scipy's OpenBLAS, called directly from generated code).

Handled: f32 and f64 dots with at most one free dimension per operand and exactly one
contracting dimension, any number of batch dimensions provided they are the most-major
dimensions of each operand and of the output (in the same order). Each matrix may be
row- or column-major; the transposes become gemm's trans flags. Batch dimensions loop
around gemm. Everything else falls back to the elemental dot (elemental_reduce.py).

BLAS is column-major. For a row-major output C (M x N) we compute C^T = B^T A^T, i.e.
gemm(op_b, op_a, N, M, K, 1, B, ldb, A, lda, 0, C, N); for a column-major output we compute
C = A B directly.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.program import custom_emitter
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range

_GEMM = {"f32": "xlapy_sgemm", "f64": "xlapy_dgemm"}


def _matrix(shape, batch, rows, cols):
    """(n_rows, n_cols, row_major) of the 2-D matrix inside `shape` after `batch` dims, or
    None when its layout is not a plain contiguous matrix after the batch dims."""
    m2m = list(reversed(shape.minor_to_major))  # major -> minor
    if m2m[:len(batch)] != list(batch):
        return None
    inner = [d for d in m2m[len(batch):] if shape.dims[d] != 1]
    nr = shape.dims[rows] if rows is not None else 1
    nc = shape.dims[cols] if cols is not None else 1
    if len(inner) <= 1:
        return nr, nc, True if not inner or inner[0] == cols else False
    # two non-trivial inner dims: the more minor decides
    if set(inner) != {d for d in (rows, cols) if d is not None}:
        return None
    return nr, nc, inner[-1] == cols


def gemm_plan(instr):
    return plan_for(instr.attrs, instr.operands[0].shape, instr.operands[1].shape, instr.shape)


def plan_for(a: dict, lhs, rhs, out):
    """The gemm call computing a dot with attributes `a` on these shapes, or None."""
    t = out.element_type.name
    if t not in _GEMM or lhs.element_type.name != t or rhs.element_type.name != t:
        return None
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    lb, rb = list(a.get("lhs_batch_dims", ())), list(a.get("rhs_batch_dims", ()))
    if len(lc) != 1 or len(rc) != 1:
        return None
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    if len(lfree) > 1 or len(rfree) > 1:
        return None
    nb = len(lb)
    lm = _matrix(lhs, lb, lfree[0] if lfree else None, lc[0])
    rm = _matrix(rhs, rb, rc[0], rfree[0] if rfree else None)
    om = _matrix(out, list(range(nb)), nb if lfree else None,
                 nb + len(lfree) if rfree else None)
    if lm is None or rm is None or om is None:
        return None
    m, k, lhs_rm = lm
    _, n, rhs_rm = rm
    batch = 1
    for d in lb:
        batch *= lhs.dims[d]
    return dict(t=t, m=m, n=n, k=k, lhs_rm=lhs_rm, rhs_rm=rhs_rm, out_rm=om[2], batch=batch)


@custom_emitter("dot")
def emit_dot(pe, instr, dest, operands) -> bool:
    plan = gemm_plan(instr)
    if plan is None:
        return False
    emit_gemm(pe, plan, dest[0], operands[0], operands[1])
    return True


PARALLEL_GEMM_FLOPS = 1 << 22  # smaller gemms run whole on the calling thread


def emit_gemm(pe, plan: dict, out_ptr, lhs_ptr, rhs_ptr, alpha: float = 1.0,
              beta: float = 0.0, init_from=None) -> None:
    """out = alpha * (lhs . rhs) + beta * out, through BLAS. `init_from`: a buffer of out's
    size copied into out first (the W of a gemm update, with beta = 1)."""
    b = pe.b
    t = plan["t"]
    fty = T.F32 if t == "f32" else T.F64
    esize = 4 if t == "f32" else 8
    name = _GEMM[t]
    gemm = pe.llmod.globals.get(name) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 13), name)
    m, n, k = plan["m"], plan["n"], plan["k"]
    if m == 0 or n == 0:
        return
    if plan["out_rm"]:
        # C^T (N x M, col-major, ld N) = B^T (N x K) * A^T (K x M)
        first, second = rhs_ptr, lhs_ptr
        first_elems, second_elems = k * n, m * k
        ta = "N" if plan["rhs_rm"] else "T"
        lda = n if plan["rhs_rm"] else k
        tb = "N" if plan["lhs_rm"] else "T"
        ldb = k if plan["lhs_rm"] else m
        rows, cols, ldc = n, m, n
    else:
        # C (M x N, col-major, ld M) = A (M x K) * B (K x N)
        first, second = lhs_ptr, rhs_ptr
        first_elems, second_elems = m * k, k * n
        ta = "T" if plan["lhs_rm"] else "N"
        lda = k if plan["lhs_rm"] else m
        tb = "T" if plan["rhs_rm"] else "N"
        ldb = n if plan["rhs_rm"] else k
        rows, cols, ldc = m, n, m
    call = _GemmCall(gemm, fty, ta, tb, rows, cols, k, lda, ldb, ldc, alpha, beta)
    if plan["batch"] == 1 and _pool_split(pe, m, n, k):
        _emit_split(pe, call, first, second, out_ptr, init_from, esize)
        return
    if init_from is not None:
        pe.memcpy(out_ptr, init_from, m * n * esize * plan["batch"])
    if plan["batch"] == 1:
        call.emit(b, pe.alloca, first, second, out_ptr)
        return
    with for_range(b, 0, plan["batch"], name="batch") as i:
        def at(p, elems):
            return b.gep(p, [b.mul(i, c64(elems * esize))], source_etype=T.I8)
        call.emit(b, pe.alloca, at(first, first_elems), at(second, second_elems),
                  at(out_ptr, m * n))


class _GemmCall:
    """The arguments of one gemm call (Fortran BLAS: everything by pointer)."""

    def __init__(self, fn, fty, ta, tb, rows, cols, k, lda, ldb, ldc, alpha, beta):
        self.fn, self.fty = fn, fty
        self.ta, self.tb = ta, tb
        self.rows, self.cols, self.k = rows, cols, k
        self.lda, self.ldb, self.ldc = lda, ldb, ldc
        self.alpha, self.beta = alpha, beta

    def emit(self, b, alloca, a_ptr, b_ptr, c_ptr, rows=None, cols=None) -> None:
        """The call; rows/cols: i64 values replacing the static sizes (a slice of C)."""
        from xlapy.backends.cpu.jit import BLAS_INT_BITS
        ity = T.I64 if BLAS_INT_BITS == 64 else T.I32

        def slot(ty, value):
            s = alloca(ty)
            b.store(value if isinstance(value, ir.Value) else ir.Constant(ty, value), s)
            return s

        def int_value(v):
            if isinstance(v, ir.Value):
                return v if ity == T.I64 else b.trunc(v, ity)
            return v

        args = [slot(T.I8, ord(self.ta)), slot(T.I8, ord(self.tb)),
                slot(ity, int_value(self.rows if rows is None else rows)),
                slot(ity, int_value(self.cols if cols is None else cols)),
                slot(ity, self.k), slot(self.fty, float(self.alpha)), a_ptr,
                slot(ity, max(self.lda, 1)), b_ptr, slot(ity, max(self.ldb, 1)),
                slot(self.fty, float(self.beta)), c_ptr, slot(ity, max(self.ldc, 1))]
        b.call(self.fn, args)


def _pool_split(pe, m: int, n: int, k: int) -> bool:
    """Whether this gemm runs as slices on xlapy's pool (BLAS single-threaded meanwhile)."""
    from xlapy.backends.cpu import blas_threads
    me = pe.me
    return (me.use_threads and 2 * m * n * k >= PARALLEL_GEMM_FLOPS and max(m, n) >= 2
            and blas_threads.available())


def _emit_split(pe, call: _GemmCall, first, second, out_ptr, init_from, esize: int) -> None:
    """The gemm as `parts` independent gemms over slices of C, run by the thread pool: the
    larger of C's two dimensions is split (the other operand, packed by every slice, is the
    smaller one); a gemm update's W is copied slice by slice right before its gemm, while
    the slice is about to be in cache anyway. C's column slices are contiguous (column-major
    with ld = rows), so a gemm update always splits columns."""
    from xlapy.backends.cpu.kernels import pool_function
    me = pe.me
    split_cols = 3 * call.cols >= 2 * call.rows or init_from is not None
    size = call.cols if split_cols else call.rows
    parts = max(min(size, me.num_threads), 1)
    llmod = pe.llmod
    fn = ir.Function(llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     me.unique("gemm.slices"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    ptrs = [b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR)
            for j in range(4 if init_from is not None else 3)]
    x, y, c = ptrs[:3]
    entry = fn.entry_basic_block

    def alloca(ty):
        saved = b.block
        b.position_at_start(entry)
        s = b.alloca(ty)
        b.position_at_end(saved)
        return s

    with for_range(b, start, end, name="slice") as i:
        lo = b.udiv(b.mul(i, c64(size)), c64(parts))
        hi = b.udiv(b.mul(b.add(i, c64(1)), c64(size)), c64(parts))
        count = b.sub(hi, lo)

        def at(p, elems):
            return b.gep(p, [b.mul(elems, c64(esize))], source_etype=T.I8)

        if split_cols:
            y_off = b.mul(lo, c64(call.ldb)) if call.tb == "N" else lo
            c_off = b.mul(lo, c64(call.ldc))
            c_slice = at(c, c_off)
            if init_from is not None:
                nbytes = b.mul(b.mul(count, c64(call.ldc)), c64(esize))
                memcpy = llmod.declare_intrinsic("llvm.memcpy", [T.PTR, T.PTR, T.I64])
                b.call(memcpy, [c_slice, at(ptrs[3], c_off), nbytes, ir.Constant(T.I1, 0)])
            call.emit(b, alloca, x, at(y, y_off), c_slice, cols=count)
        else:
            x_off = lo if call.ta == "N" else b.mul(lo, c64(call.lda))
            call.emit(b, alloca, at(x, x_off), y, at(c, lo), rows=count)
    b.ret_void()
    me.split_gemms += 1
    table = [first, second, out_ptr] + ([init_from] if init_from is not None else [])
    pe.b.call(pool_function(llmod), [fn, pe.table(table), c64(parts), c64(1)])
