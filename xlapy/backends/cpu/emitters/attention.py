"""A fused attention (passes/attention_fusion.py): for each batch element and block of R
rows of its S (attention_fusion.block_rows), on one thread, the first gemm into a
thread-local R x T block, the row computation (softmax) on that block into a second one,
and the second gemm from it into the block's rows of the result; the blocks stay in the
core's cache and the [batch..., S, T] intermediates are never written.

The units (batch element, block of rows) are split across the thread pool as
dot_general.py splits its loops by index (chunks claimed one at a time, CHUNKS_PER_THREAD
per thread, each chunk with its own slice of the workspace: the two blocks and one gemm's
packing space). The last block of a batch element may be shorter (its own gemm calls).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.dot_general import CHUNKS_PER_THREAD, loop_pointers
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, workspace_bytes
from xlapy.backends.cpu.emitters.gemm_kernel import ARGS
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.emitters.kernels import emit_kernel
from xlapy.backends.cpu.passes.attention_fusion import (attention_parts, attention_plans,
                                                        block_rows, per_element_rows)
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
    restated = per_element_rows(comp, nb, as_param=s, root=o.operands[0])
    plans = attention_plans(s, o, o.operands[0].shape)
    if plans is None or restated is None:
        return False
    per_rows, sources = restated
    p1, p2 = plans
    es = 8 if p1["t"] == "f64" else 4
    rows, cols = p1["m"], p1["n"]
    r = block_rows(rows, cols, es)
    blocks = -(-rows // r)
    block = _align(r * cols * es)
    tail = rows - (blocks - 1) * r
    gemm_ws = _align(max(workspace_bytes(p1["t"], m, cols, p1["k"], 1) for m in (r, tail)))
    gemm_ws = max(gemm_ws, _align(max(workspace_bytes(p2["t"], m, p2["n"], p2["k"], 1)
                                      for m in (r, tail))))
    per = 2 * block + gemm_ws
    b, me = pe.b, pe.me
    units = p1["batch"] * blocks
    threads = me.num_threads if me.use_threads else 1
    n_chunks = min(units, CHUNKS_PER_THREAD * threads) if threads > 1 else 1
    chunk = -(-units // n_chunks)
    n_chunks = -(-units // chunk)
    ws = me.scratch(b, pe.arena, per * n_chunks)
    leaf = [x[0] if isinstance(x, tuple) else x for x in operands]
    # the row computation for one batch element, as a loop kernel over its S rows (run on
    # a block's rows: each row is computed from that row alone)
    args = [Instruction("parameter", x.shape, name=f"in{n}", parameter_number=n)
            for n, x in enumerate(sorted(per_rows.parameters, key=lambda x: x.parameter_number))]
    rows_instr = Instruction("fusion", per_rows.root.shape, args,
                             {"kind": "kLoop", "calls": per_rows}, f"{instr.name}.rows")
    kernel = emit_kernel(pe.llmod, rows_instr, me.unique(f"k.{instr.name}.rows"), parallel=False)
    # the kernel's inputs: the block of scores, or a shared operand (a mask) from the
    # block's first row: (index in ctx, bytes from one row to the next), None for scores
    inputs = [None if x is s else (5 + x.parameter_number - 3,
                                   stride * max(x.shape.element_type.bits // 8, 1))
              for x, stride in sources]
    task = _task(pe, instr, p1, p2, kernel, per, block, chunk, r, blocks, inputs)
    ctx = pe.table([leaf[0], leaf[1], leaf[2], dest[0], ws] + leaf[3:])
    if n_chunks > 1:
        b.call(threadpool.declare(pe.llmod), [task, ctx, c64(units), c64(chunk)])
    else:
        b.call(task, [ctx, c64(0), c64(units)])
    return True


def _task(pe, instr, p1, p2, kernel, per: int, block: int, chunk: int, r: int,
          blocks: int, inputs: list) -> ir.Function:
    """task(ctx = [q, k, v, out, ws, shared operands...], start, end): units [start, end)
    (batch element u / blocks, its block of rows u % blocks) on this thread, in the
    workspace slice of chunk start / chunk."""
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(f"attention.{instr.name}"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    q, k, v, out, ws = (b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR)
                        for j in range(5))
    shared = {j: b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR)
              for j, _ in (x for x in inputs if x is not None)}
    mine = b.gep(ws, [b.mul(b.udiv(start, c64(chunk)), c64(per))], source_etype=T.I8)
    scores = mine
    probs = b.gep(mine, [c64(block)], source_etype=T.I8)
    gws = b.gep(mine, [c64(2 * block)], source_etype=T.I8)
    t, rows, cols = p1["t"], p1["m"], p1["n"]
    es = 8 if t == "f64" else 4
    tail = rows - (blocks - 1) * r

    def gemms(m):
        g1 = OwnGemm(b, b.alloca(T.I64, size=c64(len(ARGS))), t, m, cols, p1["k"], p1["sa"],
                     p1["sb"], (cols, 1), gws, 1)
        g2 = OwnGemm(b, b.alloca(T.I64, size=c64(len(ARGS))), t, m, p2["n"], p2["k"],
                     (cols, 1), p2["sb"], p2["sc"], gws, 1)
        return g1, g2
    full = gemms(r)
    last = gemms(tail) if tail != r else full
    with for_range(b, start, end, name="u") as u:
        i = b.udiv(u, c64(blocks))
        blk = b.urem(u, c64(blocks))
        r0 = b.mul(blk, c64(r))
        a1, b1, _ = loop_pointers(b, p1, i, (q, k, q))
        a1 = b.gep(a1, [b.mul(r0, c64(p1["sa"][0] * es))], source_etype=T.I8)
        _, b2, c2 = loop_pointers(b, p2, i, (probs, v, out))
        c2 = b.gep(c2, [b.mul(r0, c64(p2["sc"][0] * es))], source_etype=T.I8)

        ins = [scores if x is None else
               b.gep(shared[x[0]], [b.mul(r0, c64(x[1]))], source_etype=T.I8) if x[1] else
               shared[x[0]] for x in inputs]

        def run(gs, m):
            gs[0].call(b, a1, b1, scores)
            b.call(kernel.function, [probs, *ins, c64(0), c64(m)])
            gs[1].call(b, probs, b2, c2)
        if last is full:
            run(full, r)
        else:
            with b.if_else(b.icmp_unsigned("==", blk, c64(blocks - 1))) as (is_last, other):
                with is_last:
                    run(last, tail)
                with other:
                    run(full, r)
    b.ret_void()
    return fn
