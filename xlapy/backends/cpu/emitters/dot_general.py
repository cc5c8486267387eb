"""Dots of any dimension order (passes/dot_general_plan.py) as loops of strided gemms on
xlapy's own gemm: each operand is read where it is, through its strides.

A loop of gemms is split across the thread pool by loop index when its gemms are small
(under GEMM_PARALLEL_FLOPS each), or when there are at least BATCH_SPLIT_PER_THREAD of them
per thread and each is under BATCH_SPLIT_MAX_FLOPS (attention's per-head products, 16 of
256x256x64 in the model suite's block): each pool chunk runs its range of whole gemms on
one thread, packing into its own slice of the workspace, and the pool is called once for
the loop. Otherwise the gemms run one after another, each split across the pool by the
gemm itself: two pool calls per gemm (pack, then compute), each a point where the caller
waits for a worker the OS may have descheduled.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, workspace_bytes
from xlapy.backends.cpu.emitters.gemm_kernel import ARGS, compute_type
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.passes.dot_general_plan import strided_plan
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range

GEMM_PARALLEL_FLOPS = 1 << 22
# a loop of at least this many gemms per thread, each under BATCH_SPLIT_MAX_FLOPS, is split
# by loop index: with chunks claimed one at a time, a thread the OS deschedules holds at
# most a chunk (1 / (CHUNKS_PER_THREAD * threads) of the loop), as the gemm's own units
BATCH_SPLIT_PER_THREAD = 4
BATCH_SPLIT_MAX_FLOPS = 1 << 26
CHUNKS_PER_THREAD = 4


def splits_by_index(batch: int, flops: int, threads: int) -> bool:
    """Whether a loop of `batch` gemms of `flops` each runs split across `threads` threads
    by loop index (each gemm whole on one thread) rather than each gemm split."""
    if batch < 2 or threads <= 1 or flops * batch < GEMM_PARALLEL_FLOPS:
        return False
    return flops < GEMM_PARALLEL_FLOPS or (batch >= BATCH_SPLIT_PER_THREAD * threads
                                           and flops < BATCH_SPLIT_MAX_FLOPS)


def _esize(t: str) -> int:
    return {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}[t]


def emit_strided_dot(pe, instr, dest, operands) -> bool:
    plan = strided_plan(instr.attrs, instr.operands[0].shape, instr.operands[1].shape,
                        instr.shape)
    if plan is None or plan["k"] == 0:
        return False
    b, me = pe.b, pe.me
    t, m, n, k = plan["t"], plan["m"], plan["n"], plan["k"]
    flops = 2 * m * n * k
    batch = plan["batch"]
    lhs, rhs, out = operands[0], operands[1], dest[0]
    threads = me.num_threads if me.use_threads else 1
    narrow = plan["out_t"] != compute_type(t)
    scratch_c = _align(instr.shape.size * 4) if narrow else 0
    if narrow:
        # the f32 sums in scratch laid out as the result, rounded into it at the end
        final, out = out, me.scratch(b, pe.arena, scratch_c)
    if splits_by_index(batch, flops, threads):
        # split by loop index: one workspace slice per pool chunk
        per = workspace_bytes(t, m, n, k, 1)
        per = -(-per // 64) * 64
        n_chunks = min(batch, CHUNKS_PER_THREAD * threads)
        chunk = -(-batch // n_chunks)
        n_chunks = -(-batch // chunk)
        ws = _after(b, me.scratch(b, pe.arena, scratch_c + per * n_chunks), scratch_c)
        fn = _batch_task(pe, instr, plan, per, chunk)
        b.call(threadpool.declare(pe.llmod),
               [fn, pe.table([lhs, rhs, out, ws]), c64(batch), c64(chunk)])
        if narrow:
            _round_into(pe, instr, final, out)
        return True
    chunks = threads if flops >= GEMM_PARALLEL_FLOPS else 1
    ws = _after(b, me.scratch(b, pe.arena, scratch_c + workspace_bytes(t, m, n, k, chunks)),
                scratch_c)
    slots = pe.alloca(T.I64, c64(len(ARGS)))
    g = OwnGemm(b, slots, t, m, n, k, plan["sa"], plan["sb"], plan["sc"], ws, chunks)
    if batch == 1:
        g.call(b, lhs, rhs, out)
    else:
        with for_range(b, 0, batch, name="dot.batch") as i:
            g.call(b, *loop_pointers(b, plan, i, (lhs, rhs, out)))
    if narrow:
        _round_into(pe, instr, final, out)
    return True


def _align(n: int) -> int:
    return -(-n // 64) * 64


def _after(b, base, nbytes: int):
    return b.gep(base, [c64(nbytes)], source_etype=T.I8) if nbytes else base


def _round_into(pe, instr, final, sums):
    """final[i] = sums[i] rounded to the result's type (both laid out as the result)."""
    b = pe.b
    t = instr.shape.element_type
    with for_range(b, 0, instr.shape.size, name="dot.round") as i:
        x = b.load(b.gep(sums, [i], source_etype=T.F32), typ=T.F32)
        b.store(T.from_float(b, x, t), b.gep(final, [i], source_etype=T.storage_type(t)))


def loop_pointers(b, plan, i, ptrs):
    """The three operand pointers of loop index i (row-major over plan's loops)."""
    es = _esize(plan["t"])
    sizes = (es, es, _esize(compute_type(plan["t"])))   # C: the sums' type
    offs = [c64(0), c64(0), c64(0)]
    rem = i
    for size, ls, rs, os_ in reversed(plan["loops"]):
        idx = b.urem(rem, c64(size))
        rem = b.udiv(rem, c64(size))
        for j, st in enumerate((ls, rs, os_)):
            if st:
                offs[j] = b.add(offs[j], b.mul(idx, c64(st * sizes[j])))
    return [b.gep(p, [o], source_etype=T.I8) for p, o in zip(ptrs, offs)]


def _batch_task(pe, instr, plan, per_ws: int, chunk: int) -> ir.Function:
    """task(ctx = [lhs, rhs, out, ws], start, end): the gemms [start, end) on this thread,
    in the workspace slice of chunk start / chunk."""
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(f"dot.batch.{instr.name}"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    lhs, rhs, out, ws = (b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR)
                         for j in range(4))
    ws = b.gep(ws, [b.mul(b.udiv(start, c64(chunk)), c64(per_ws))], source_etype=T.I8)
    slots = b.alloca(T.I64, size=c64(len(ARGS)))
    g = OwnGemm(b, slots, plan["t"], plan["m"], plan["n"], plan["k"], plan["sa"], plan["sb"],
                plan["sc"], ws, 1)
    with for_range(b, start, end, name="i") as i:
        g.call(b, *loop_pointers(b, plan, i, (lhs, rhs, out)))
    b.ret_void()
    return fn
