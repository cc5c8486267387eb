"""Inlining hints from the call graph of an emitted module (llvmlite.ir).

    inline_single_calls(llmod, keep_callers=()) -> names marked
    callees(fn)                         the functions fn calls directly

(loop_analysis.optnone_if_only_calls marks an entry that only calls others.)

Marks `alwaysinline` every internal function that is called from exactly one place and
referenced in no other way (a kernel called only by its thread-pool wrapper or only by the
entry). The short "direct" LLVM pipeline (codegen.optimize) inlines nothing else, and a
function costs code generation on its own (about 1 ms of LLVM's fixed work per function on
this project's machine: `benchmarks/compile_breakdown.py --floor`; the marks' effect on
whole programs: `--marks`); -O3's inliner would
inline such a function anyway. Semantics are unchanged (a kernel's noalias arguments become
scoped alias metadata when inlined). The split (split.py) copies an alwaysinline function
into the part of its one caller; a module that may be split keeps the entry's kernels as
functions of their own (keep_callers), so that they can go to different parts.

A caller takes at most INLINE_BUDGET instructions of such callees (its first callee
always): the rest are marked `noinline`, so that -O3's inliner (which inlines an internal
function's last call whatever its size) leaves them too. LLVM's -O3 grows faster than the
code it is given on one function holding hundreds of inlined loops: a module of 1,460
two-convert fusions (tests/fuzz/regressions/convert_chains.hlo) took 76 s to optimize
with every kernel inlined into the entry (unsplit, as ahead-of-time compilation and
profile builds are) against 4 s with none inlined, and 20 ms per kernel at 400 kernels
against 15 at 100.
"""

from __future__ import annotations

from llvmlite import ir

INLINE_BUDGET = 4000  # instructions of callees inlined into one caller (LLVM IR as emitted)


def callees(fn: ir.Function):
    """The functions `fn` calls directly, once per call instruction."""
    for blk in fn.blocks:
        for instr in blk.instructions:
            if isinstance(instr, ir.CallInstr) and isinstance(instr.callee, ir.Function):
                yield instr.callee


def inline_single_calls(llmod: ir.Module, keep_callers=()) -> list[str]:
    calls: dict[str, int] = {}
    caller: dict[str, str] = {}
    other_uses: set[str] = set()   # taken as a value (a pool wrapper), or recursive
    fns = [f for f in llmod.functions if f.blocks]
    for f in fns:
        for callee in callees(f):
            if callee is f:
                other_uses.add(f.name)
            else:
                calls[callee.name] = calls.get(callee.name, 0) + 1
                caller[callee.name] = f.name
        for blk in f.blocks:
            for instr in blk.instructions:
                operands = instr.args if isinstance(instr, ir.CallInstr) else \
                    getattr(instr, "operands", ())
                other_uses.update(op.name for op in operands if isinstance(op, ir.Function))
    marked = []
    taken: dict[str, int] = {}  # instructions of single-call callees per caller
    for f in fns:
        if (f.linkage == "internal" and calls.get(f.name) == 1 and f.name not in other_uses
                and "alwaysinline" not in f.attributes and "noinline" not in f.attributes):
            owner = caller[f.name]
            size = sum(len(blk.instructions) for blk in f.blocks)
            used = taken.get(owner, 0)
            if used and used + size > INLINE_BUDGET:
                f.attributes.add("noinline")
                continue
            taken[owner] = used + size
            if owner not in keep_callers:
                f.attributes.add("alwaysinline")
                marked.append(f.name)
    return marked
