"""dot through gemm: xlapy's own kernel (gemm_kernel.py: products of at least
dot_plan.OWN_GEMM_MIN_FLOPS, or every one with XLAPY_GEMM=xlapy), which takes strides
instead of trans flags, computes C^T = B^T A^T when C has few columns and can run a fused
epilogue on each tile (gemm_epilogue.py); smaller products with a few columns (5-12) on
a narrow kernel (gemm_narrow.py, dot_plan.narrow_form); else NumPy's OpenBLAS (or
scipy's), called directly from generated code.

Handled: the dots passes/dot_plan.py plans (f32/f64, one contracting and at most one free
dimension per operand, batch dimensions most-major). Each matrix may be row- or
column-major; the transposes become gemm's trans flags. Batch dimensions loop around gemm.
Other dots whose contracting dims collapse run as loops of strided gemms on the own gemm
(dot_general.py); the rest fall back to the elemental dot (elemental_reduce.py).

BLAS is column-major. For a row-major output C (M x N) we compute C^T = B^T A^T, i.e.
gemm(op_b, op_a, N, M, K, 1, B, ldb, A, lda, 0, C, N); for a column-major output we compute
C = A B directly.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters import gemm_narrow
from xlapy.backends.cpu.emitters.dot_general import emit_strided_dot
from xlapy.backends.cpu.emitters.gemm_call import gemm_function
from xlapy.backends.cpu.emitters.gemm_call import put as put_slot
from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.passes.dot_plan import gemm_plan, narrow_form, own_gemm_for
from xlapy.backends.cpu.runtime import blas
from xlapy.backends.cpu.runtime.blas import blas_int_bits
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range

_GEMM = {"f32": "xlapy_sgemm", "f64": "xlapy_dgemm", "c64": "xlapy_cgemm", "c128": "xlapy_zgemm"}
_ESIZE = {"f32": 4, "f64": 8, "c64": 8, "c128": 16}
GEMM_PARALLEL_FLOPS = 1 << 22   # smaller products run on the calling thread
# in a while loop's body: the pool's second thread spins from one product to the next
# (between them it waits the iteration's serial work out), so a split product pays for
# its wake-up and that wait every iteration; a recurrent cell's 8M-flop products (LSTM
# 256 wide, batch 8) cost a third more CPU time split than on one thread. Kept at the
# outside threshold all the same: on an idle two-core machine one thread made that LSTM
# 1.47x (training) and 1.63x (inference) JAX's wall time, split 1.01x and 0.79x
# (benchmarks/rnn_cells.py --quick, quiet, 2026-11-26): wall time on an idle machine
# decides, a loaded one costs CPU time instead (docs/benchmarks.md, Recurrent cells)
GEMM_LOOP_PARALLEL_FLOPS = 1 << 22


def parallel_flops(pe) -> int:
    """The fewest flops for which a product the program `pe` emits is split across the
    pool's threads."""
    return GEMM_LOOP_PARALLEL_FLOPS if getattr(pe, "in_loop", False) else GEMM_PARALLEL_FLOPS


@custom_emitter("dot")
def emit_dot(pe, instr, dest, operands) -> bool:
    plan = gemm_plan(instr)
    if plan is None:
        return emit_strided_dot(pe, instr, dest, operands)
    emit_gemm(pe, plan, dest[0], operands[0], operands[1])
    return True


def emit_gemm(pe, plan: dict, out_ptr, lhs_ptr, rhs_ptr, alpha: float = 1.0,
              beta: float = 0.0, cin_ptr=None, epilogue=None) -> None:
    """out = alpha * (lhs . rhs) + beta * cin, where cin (an array laid out like out)
    defaults to out itself; through xlapy's own gemm (gemm_kernel.py) or BLAS.
    `epilogue` (own gemm only: see own_gemm_for): (function, context) called on each
    finished tile of out, in the kernel's coordinates (gemm_kernel.EPILOGUE_TYPE) and
    told whether they are out's transposed (swapped_for(plan))."""
    m, n = plan["m"], plan["n"]
    if m == 0 or n == 0:
        return
    if own_gemm_for(plan):
        _emit_own_gemm(pe, plan, out_ptr, lhs_ptr, rhs_ptr, alpha, beta, cin_ptr, epilogue)
        return
    if epilogue is not None:
        raise AssertionError("a gemm epilogue needs xlapy's own gemm (own_gemm_for)")
    form = narrow_form(plan)
    if form is not None:
        _emit_narrow(pe, plan, form, out_ptr, lhs_ptr, rhs_ptr, alpha, beta, cin_ptr)
        return
    if beta != 0.0 and cin_ptr is not None:
        # BLAS updates C in place: start it from cin
        pe.memcpy(out_ptr, cin_ptr, plan["batch"] * m * n * _ESIZE[plan["t"]])
    _emit_blas_gemm(pe, plan, out_ptr, lhs_ptr, rhs_ptr, alpha, beta)


def swapped_for(plan: dict) -> bool:
    """Whether the own gemm computes C^T = B^T . A^T for this plan (few columns): its tiles
    are then [col, col + cols) x [row, row + rows) of the dot's result. Not when the kernel
    runs the product as it is without packing (a thin C of more than one column with A's,
    B's and C's rows contiguous: gemm_kernel.direct_call)."""
    t, m, n = plan["t"], plan["m"], plan["n"]
    if n > 1 and gk.direct_call(t, m, n, vector_bits(),
                                plan["lhs_rm"] and plan["rhs_rm"] and plan["out_rm"],
                                plan["k"], plan["rhs_rm"] and plan["out_rm"]):
        return False
    return gk.swaps(t, m, n, vector_bits())


def _emit_own_gemm(pe, plan: dict, out_ptr, lhs_ptr, rhs_ptr, alpha, beta, cin_ptr,
                   epilogue=None) -> None:
    b = pe.b
    t = plan["t"]
    m, n, k = plan["m"], plan["n"], plan["k"]
    # element strides (row, column) of each matrix; cin is laid out like the output
    sa = (k, 1) if plan["lhs_rm"] else (1, m)
    sb = (n, 1) if plan["rhs_rm"] else (1, k)
    sc = (n, 1) if plan["out_rm"] else (1, m)
    # few columns: compute C^T = B^T . A^T, so the micro-tile's long side runs along M
    swap = swapped_for(plan)
    me = pe.me
    chunks = me.num_threads if me.use_threads and 2 * m * n * k >= parallel_flops(pe) else 1
    if swap:
        dims, a_str, b_str, c_str = (n, m), (sb[1], sb[0]), (sa[1], sa[0]), (sc[1], sc[0])
    else:
        dims, a_str, b_str, c_str = (m, n), sa, sb, sc
    direct = gk.direct_call(t, dims[0], dims[1], vector_bits(),
                            a_str[1] == 1 and b_str[1] == 1 and c_str[1] == 1,
                            k, b_str[1] == 1 and c_str[1] == 1)
    ws = me.scratch(b, pe.arena, 0 if direct else gk.workspace_bytes(
        t, vector_bits(), dims[0], k, chunks, dims[1]))
    slots = pe.alloca(T.I64, c64(len(gk.ARGS)))
    fn = gemm_function(pe.llmod, t)

    def put(slot, value):
        put_slot(b, slots, slot, value)

    for slot, value in (("M", dims[0]), ("N", dims[1]), ("K", k), ("rsa", a_str[0]),
                        ("csa", a_str[1]), ("rsb", b_str[0]), ("csb", b_str[1]),
                        ("ldcin", c_str[0]), ("cscin", c_str[1]), ("ldc", c_str[0]),
                        ("csc", c_str[1]), ("ws", ws), ("chunks", chunks),
                        ("epi", epilogue[0] if epilogue else 0),
                        ("epi_ctx", epilogue[1] if epilogue else 0),
                        ("alpha", float(alpha)), ("beta", float(beta))):
        put(slot, value)

    def call(lhs, rhs, out, cin):
        put("A", rhs if swap else lhs)
        put("B", lhs if swap else rhs)
        put("C", out)
        put("Cin", cin)
        b.call(fn, [slots])

    cin_ptr = out_ptr if cin_ptr is None else cin_ptr
    _each_batch(pe, plan, call, (lhs_ptr, m * k), (rhs_ptr, k * n), (out_ptr, m * n),
                (cin_ptr, m * n))


def _emit_narrow(pe, plan: dict, form: str, out_ptr, lhs_ptr, rhs_ptr, alpha, beta,
                 cin_ptr) -> None:
    """out = alpha * (lhs . rhs) + beta * cin through a narrow kernel (gemm_narrow.py,
    dot_plan.narrow_form): one call per batch element, single-threaded."""
    b = pe.b
    t, m, n, k = plan["t"], plan["m"], plan["n"], plan["k"]
    sa = (k, 1) if plan["lhs_rm"] else (1, m)
    sb = (n, 1) if plan["rhs_rm"] else (1, k)
    sc = (n, 1) if plan["out_rm"] else (1, m)
    ws = 0
    if form == "a" and sb[0] != 1:   # B^T is packed
        ws = pe.me.scratch(b, pe.arena, gemm_narrow.workspace_bytes(t, n, k, vector_bits()))
    slots = pe.alloca(T.I64, c64(len(gemm_narrow.ARGS)))
    for slot, value in (("M", m), ("K", k), ("rsa", sa[0]), ("csa", sa[1]), ("rsb", sb[0]),
                        ("csb", sb[1]), ("rsc", sc[0]), ("csc", sc[1]), ("ws", ws),
                        ("alpha", float(alpha)), ("beta", float(beta))):
        gemm_narrow.put(b, slots, slot, value)
    fn = gemm_narrow.function(pe.llmod, t, n, form)

    def call(lhs, rhs, out, cin):
        for slot, value in (("A", lhs), ("B", rhs), ("C", out), ("Cin", cin)):
            gemm_narrow.put(b, slots, slot, value)
        b.call(fn, [slots])

    cin_ptr = out_ptr if cin_ptr is None else cin_ptr
    _each_batch(pe, plan, call, (lhs_ptr, m * k), (rhs_ptr, k * n), (out_ptr, m * n),
                (cin_ptr, m * n))


def _each_batch(pe, plan: dict, call, *operands) -> None:
    """call(*pointers) once, or once per batch element, each (pointer, elements per batch
    element) advanced to that element."""
    if plan["batch"] == 1:
        call(*(p for p, _ in operands))
        return
    b = pe.b
    esize = _ESIZE[plan["t"]]
    with for_range(b, 0, plan["batch"], name="batch") as i:
        call(*(b.gep(p, [b.mul(i, c64(n * esize))], source_etype=T.I8) for p, n in operands))


def _emit_blas_gemm(pe, plan: dict, out_ptr, lhs_ptr, rhs_ptr, alpha: float,
                    beta: float) -> None:
    """out = alpha * (lhs . rhs) + beta * out, through BLAS."""
    b = pe.b
    t = plan["t"]
    fty = T.F32 if t == "f32" else T.F64
    name = _GEMM[t]
    gemm = pe.llmod.globals.get(name) or ir.Function(
        pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * 13), name)
    m, n, k = plan["m"], plan["n"], plan["k"]
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

    def const_slot(ty, value):
        slot = pe.alloca(ty)
        b.store(ir.Constant(ty, value), slot)
        return slot

    ta_s, tb_s = const_slot(T.I8, ord(ta)), const_slot(T.I8, ord(tb))
    ity = T.I64 if blas_int_bits() == 64 else T.I32
    ints = [const_slot(ity, v) for v in (rows, cols, k, max(lda, 1), max(ldb, 1), max(ldc, 1))]
    if t in ("c64", "c128"):  # complex alpha and beta: (value, 0) pairs
        part = T.F32 if t == "c64" else T.F64
        cty = ir.LiteralStructType([part, part])
        alpha, beta = (const_slot(cty, [ir.Constant(part, float(v)), ir.Constant(part, 0.0)])
                       for v in (alpha, beta))
    else:
        alpha, beta = const_slot(fty, float(alpha)), const_slot(fty, float(beta))

    def call(a_ptr, b_ptr, c_ptr):
        b.call(gemm, [ta_s, tb_s, ints[0], ints[1], ints[2], alpha, a_ptr, ints[3], b_ptr,
                      ints[4], beta, c_ptr, ints[5]])

    # OpenBLAS runs products this size on its own threads, which then spin waiting for the
    # next job while xlapy's pool needs the cores (and beside a busy neighbour, for long):
    # xlapy's calls run on the calling thread (one threading system: the pool)
    guard = blas.thread_guard_available() and m * n * k >= blas.OPENBLAS_THREADED_MNK
    if guard:
        get = pe.llmod.globals.get(blas.GET_THREADS) or ir.Function(
            pe.llmod, ir.FunctionType(T.I32, []), blas.GET_THREADS)
        put = pe.llmod.globals.get(blas.SET_THREADS) or ir.Function(
            pe.llmod, ir.FunctionType(T.VOID, [T.I32]), blas.SET_THREADS)
        before = b.call(get, [])
        b.call(put, [ir.Constant(T.I32, 1)])
    _each_batch(pe, plan, call, (first, first_elems), (second, second_elems), (out_ptr, m * n))
    if guard:
        b.call(put, [before])
