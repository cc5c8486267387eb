"""A fused attention (passes/attention_fusion.py): for each batch element, on one thread,
the first gemm into a thread-local S x T block, the row computation (softmax) on that
block into a second one, and the second gemm from it; the blocks stay in the core's cache
and the [batch..., S, T] intermediates are never written.

The batch elements are split across the thread pool as dot_general.py splits its loops by
index (chunks claimed one at a time, CHUNKS_PER_THREAD per thread, each chunk with its own
slice of the workspace: the two blocks and one gemm's packing space).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.dot_general import CHUNKS_PER_THREAD, loop_pointers
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, workspace_bytes
from xlapy.backends.cpu.emitters.gemm_kernel import ARGS
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.emitters.kernels import emit_kernel
from xlapy.backends.cpu.passes.attention_fusion import (attention_parts, attention_plans,
                                                        per_element_rows)
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.hlo.ir import Instruction


def _align(n: int) -> int:
    return -(-n // 64) * 64


def emit_attention(pe, instr, dest, operands) -> bool:
    comp = instr.fused_computation
    parts = attention_parts(comp)
    if parts is None:
        return False
    s, o = parts
    nb = len(s.attrs.get("lhs_batch_dims", ()))
    per_rows = per_element_rows(comp, nb, as_param=s, root=o.operands[0])
    plans = attention_plans(s, o, o.operands[0].shape)
    if plans is None or per_rows is None or len(per_rows.parameters) != 1:
        return False
    p1, p2 = plans
    t = p1["t"]
    es = 8 if t == "f64" else 4
    rows, cols = p1["m"], p1["n"]
    block = _align(rows * cols * es)
    gemm_ws = _align(max(workspace_bytes(t, rows, cols, p1["k"], 1),
                         workspace_bytes(t, p2["m"], p2["n"], p2["k"], 1)))
    per = 2 * block + gemm_ws
    b, me = pe.b, pe.me
    batch = p1["batch"]
    threads = me.num_threads if me.use_threads else 1
    n_chunks = min(batch, CHUNKS_PER_THREAD * threads) if threads > 1 else 1
    chunk = -(-batch // n_chunks)
    n_chunks = -(-batch // chunk)
    ws = me.scratch(b, pe.arena, per * n_chunks)
    leaf = [x[0] if isinstance(x, tuple) else x for x in operands]
    # the row computation for one batch element, as a loop kernel over its S rows
    block_shape = per_rows.root.shape
    arg = Instruction("parameter", per_rows.parameters[0].shape, name="block",
                      parameter_number=0)
    rows_instr = Instruction("fusion", block_shape, [arg], {"kind": "kLoop", "calls": per_rows},
                             f"{instr.name}.rows")
    kernel = emit_kernel(pe.llmod, rows_instr, me.unique(f"k.{instr.name}.rows"), parallel=False)
    task = _task(pe, instr, p1, p2, kernel, per, block, chunk)
    ctx = pe.table([leaf[0], leaf[1], leaf[2], dest[0], ws])
    if n_chunks > 1:
        b.call(threadpool.declare(pe.llmod), [task, ctx, c64(batch), c64(chunk)])
    else:
        b.call(task, [ctx, c64(0), c64(batch)])
    return True


def _task(pe, instr, p1, p2, kernel, per: int, block: int, chunk: int) -> ir.Function:
    """task(ctx = [q, k, v, out, ws], start, end): batch elements [start, end) on this
    thread, in the workspace slice of chunk start / chunk."""
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(f"attention.{instr.name}"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    q, k, v, out, ws = (b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR)
                        for j in range(5))
    mine = b.gep(ws, [b.mul(b.udiv(start, c64(chunk)), c64(per))], source_etype=T.I8)
    scores = mine
    probs = b.gep(mine, [c64(block)], source_etype=T.I8)
    gws = b.gep(mine, [c64(2 * block)], source_etype=T.I8)
    t, rows, cols = p1["t"], p1["m"], p1["n"]
    g1 = OwnGemm(b, b.alloca(T.I64, size=c64(len(ARGS))), t, rows, cols, p1["k"], p1["sa"],
                 p1["sb"], (cols, 1), gws, 1)
    g2 = OwnGemm(b, b.alloca(T.I64, size=c64(len(ARGS))), t, p2["m"], p2["n"], p2["k"],
                 (cols, 1), p2["sb"], p2["sc"], gws, 1)
    with for_range(b, start, end, name="i") as i:
        a1, b1, _ = loop_pointers(b, p1, i, (q, k, q))
        g1.call(b, a1, b1, scores)
        b.call(kernel.function, [probs, scores, c64(0), c64(kernel.outer)])
        _, b2, c2 = loop_pointers(b, p2, i, (probs, v, out))
        g2.call(b, probs, b2, c2)
    b.ret_void()
    return fn
