"""Which emitted functions still need LLVM's loop vectorizer (llvmlite.ir, before printing).

Most of xlapy's loop kernels are emitted as vector code already (elemental_vector.py: the
flat elementwise kernels, the row kernels, the vectorized reductions), with their scalar
remainders marked not to be vectorized (loops.NOT_VECTORIZED). For such code LLVM's full
-O3 pipeline is mostly wasted work on a first call: it halves the LLVM time of a row
softmax, sum or sum(x + y*z) to optimize them with a short pipeline instead (codegen.py,
"direct"), at the same run time (`benchmarks/compile_breakdown.py --pipelines`). The choice is made
per function, here, and per compiled part by the compiler: a part takes the short pipeline
only when none of its functions has a loop the vectorizer could still improve.

    needs_vectorizer(fn, ordered_fp_reductions=True) -> bool

A function needs the vectorizer when one of its innermost natural loops
- is not marked `llvm.loop.vectorize.enable` 0,
- has no vector-typed value (LLVM's vectorizer leaves a loop with vector values alone),
- calls nothing but intrinsics and alwaysinline helpers (a call to any other function
  makes the loop unvectorizable: the pool's wrappers, while bodies, library routines),
- and, for a target whose vectorizer does not keep floating-point reductions in order
  (`ordered_fp_reductions` False: LLVM's TTI::enableOrderedReductions, false on x86),
  accumulates no floating-point sum or product in a stack slot (load slot, fadd / fsub /
  fmul, store slot: the strided inner loop of a small column reduction, a bias gradient).
  xlapy never allows reassociation (no fast-math flags), and LLVM's vectorizer then
  rejects the whole loop ("cannot prove it is safe to reorder floating-point operations"),
  so -O3 spends its time on it for nothing.
Loops are found from back edges of a depth-first walk of the control-flow graph (the
emitted graphs are reducible) and grouped by header; a loop is innermost when no other
header lies inside it. Anything the walk does not recognize counts as needing the
vectorizer, so the analysis can only err towards the full pipeline.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm.call_graph import callees


class UnrecognizedControlFlow(Exception):
    """A control-flow form the walk does not follow (the function gets -O3)."""


def _successors(block: ir.Block) -> list[ir.Block]:
    term = block.instructions[-1] if block.instructions else None
    if isinstance(term, (ir.Ret, ir.Unreachable)):
        return []
    if isinstance(term, ir.SwitchInstr):
        return [term.default] + [blk for _, blk in term.cases]
    if isinstance(term, (ir.Branch, ir.ConditionalBranch)):
        return [op for op in term.operands if isinstance(op, ir.Block)]
    raise UnrecognizedControlFlow(f"block {block.name} ends in {type(term).__name__}")


def natural_loops(fn: ir.Function) -> dict:
    """{header block: set of ids of the loop's blocks} (loops sharing a header merged).
    Raises UnrecognizedControlFlow for a terminator other than ret, unreachable, br and switch."""
    if not fn.blocks:
        return {}
    preds: dict = {id(blk): [] for blk in fn.blocks}
    succs = {id(blk): _successors(blk) for blk in fn.blocks}
    for blk in fn.blocks:
        for s in succs[id(blk)]:
            preds.setdefault(id(s), []).append(blk)
    back_edges = []
    state: dict = {}  # id -> 1 on the stack, 2 finished
    stack = [(fn.blocks[0], iter(succs[id(fn.blocks[0])]))]
    state[id(fn.blocks[0])] = 1
    while stack:
        blk, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[id(blk)] = 2
            stack.pop()
        elif state.get(id(nxt)) == 1:
            back_edges.append((blk, nxt))
        elif id(nxt) not in state:
            state[id(nxt)] = 1
            stack.append((nxt, iter(succs.get(id(nxt), []))))
    loops: dict = {}
    for latch, header in back_edges:
        body = loops.setdefault(header, {id(header)})
        work = [latch]
        while work:
            blk = work.pop()
            if id(blk) not in body:
                body.add(id(blk))
                work.extend(preds.get(id(blk), []))
    return loops


def _not_vectorized(instr) -> bool:
    md = getattr(instr, "metadata", {}).get("llvm.loop")
    if md is None:
        return False
    for op in md.operands:
        if isinstance(op, ir.MDValue) and op is not md and len(op.operands) == 2:
            key, val = op.operands
            if (isinstance(key, ir.MetaDataString) and key.string == "llvm.loop.vectorize.enable"
                    and isinstance(val, ir.Constant) and not val.constant):
                return True
    return False


def _vector_valued(instr) -> bool:
    if isinstance(getattr(instr, "type", None), ir.VectorType):
        return True
    return any(isinstance(getattr(op, "type", None), ir.VectorType)
               for op in getattr(instr, "operands", ()))


def _opaque_call(instr) -> bool:
    if not isinstance(instr, ir.CallInstr):
        return False
    callee = instr.callee
    if not isinstance(callee, ir.Function):
        return True
    return not (callee.name.startswith("llvm.") or "alwaysinline" in callee.attributes)


_FP_ACCUMULATE = ("fadd", "fsub", "fmul")


def _ordered_fp_reduction(instrs) -> bool:
    """Whether the loop body `instrs` accumulates a scalar float in a stack slot: a store to
    an alloca of an fadd / fsub / fmul one of whose operands is a load of that same alloca."""
    for i in instrs:
        if not isinstance(i, ir.StoreInstr):
            continue
        value, ptr = i.operands
        if (not isinstance(ptr, ir.AllocaInstr) or getattr(value, "opname", None)
                not in _FP_ACCUMULATE or isinstance(value.type, ir.VectorType)):
            continue
        if any(isinstance(op, ir.LoadInstr) and op.operands[0] is ptr for op in value.operands):
            return True
    return False


def _own_loops_need_it(fn: ir.Function, ordered_fp_reductions: bool = True) -> bool:
    try:
        loops = natural_loops(fn)
    except UnrecognizedControlFlow:
        return True
    headers = {id(h) for h in loops}
    by_id = {id(blk): blk for blk in fn.blocks}
    for header, body in loops.items():
        if any(h in body for h in headers - {id(header)}):
            continue  # not innermost
        instrs = [i for bid in body for i in by_id[bid].instructions]
        if any(_not_vectorized(i) for i in instrs):
            continue
        if any(_vector_valued(i) for i in instrs) or any(_opaque_call(i) for i in instrs):
            continue
        if not ordered_fp_reductions and _ordered_fp_reduction(instrs):
            continue
        return True
    return False


def needs_vectorizer(fn: ir.Function, ordered_fp_reductions: bool = True, _seen=None) -> bool:
    """Whether an innermost loop of fn, or of an alwaysinline function it calls (its code
    ends up in fn), is one LLVM's loop vectorizer could still vectorize.
    ordered_fp_reductions: whether the target's vectorizer vectorizes loops with ordered
    floating-point reductions (the module's docstring); True (the default) is the
    conservative answer."""
    seen = _seen if _seen is not None else set()
    seen.add(id(fn))
    return _own_loops_need_it(fn, ordered_fp_reductions) or any(
        callee.blocks and id(callee) not in seen and "alwaysinline" in callee.attributes
        and needs_vectorizer(callee, ordered_fp_reductions, seen) for callee in callees(fn))


def optnone_if_only_calls(fn: ir.Function) -> bool:
    """Mark `fn` optnone (and noinline, which optnone requires) when it has no loop and
    calls no alwaysinline function: a program's entry that only hands buffers to kernels and
    the thread pool. LLVM then translates it with its fast instruction selector and without
    the optimizing machine passes (`benchmarks/compile_breakdown.py --marks`); the few extra
    instructions run once per call. Returns whether it marked."""
    if not fn.blocks or "alwaysinline" in fn.attributes or any(
            "alwaysinline" in callee.attributes for callee in callees(fn)):
        return False
    try:
        if natural_loops(fn):
            return False
    except UnrecognizedControlFlow:  # control flow the walk does not follow: leave it
        return False
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    return True
