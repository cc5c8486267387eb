"""Inlining hints from the call graph of an emitted module (llvmlite.ir).

    inline_single_calls(llmod, keep_callers=()) -> names marked

Marks `alwaysinline` every internal function that is called from exactly one place and
referenced in no other way (a kernel called only by its thread-pool wrapper or only by the
entry). The short "direct" LLVM pipeline (jit.optimize) inlines nothing else, and a
function costs code generation on its own (about 1 ms of LLVM's fixed work per function on
this project's machine: `benchmarks/compile_breakdown.py --floor`); -O3's inliner would
inline such a function anyway. Semantics are unchanged (a kernel's noalias arguments become
scoped alias metadata when inlined). The split (split.py) copies an alwaysinline function
into the part of its one caller; a module that may be split keeps the entry's kernels as
functions of their own (keep_callers), so that they can go to different parts.
"""

from __future__ import annotations

from llvmlite import ir


def inline_single_calls(llmod: ir.Module, keep_callers=()) -> list[str]:
    calls: dict[str, int] = {}
    caller: dict[str, str] = {}
    other_uses: set[str] = set()
    fns = [f for f in llmod.functions if f.blocks]
    for f in fns:
        for blk in f.blocks:
            for instr in blk.instructions:
                if isinstance(instr, ir.CallInstr):
                    callee = instr.callee
                    if isinstance(callee, ir.Function):
                        key = callee.name if callee is not f else None  # recursion: never
                        if key is None:
                            other_uses.add(f.name)
                        else:
                            calls[key] = calls.get(key, 0) + 1
                            caller[key] = f.name
                    operands = instr.args
                else:
                    operands = getattr(instr, "operands", ())
                for op in operands:
                    if isinstance(op, ir.Function):
                        other_uses.add(op.name)
    marked = []
    for f in fns:
        if (f.linkage == "internal" and calls.get(f.name) == 1 and f.name not in other_uses
                and caller[f.name] not in keep_callers
                and "alwaysinline" not in f.attributes and "noinline" not in f.attributes):
            f.attributes.add("alwaysinline")
            marked.append(f.name)
    return marked


def optnone_if_only_calls(fn: ir.Function) -> bool:
    """Mark `fn` optnone (and noinline, which optnone requires) when it has no loop and
    calls no alwaysinline function: a program's entry that only hands buffers to kernels and
    the thread pool. LLVM then translates it with its fast instruction selector and without
    the optimizing machine passes (about 0.5 ms less code generation for a row softmax's
    program); the few extra instructions run once per call. Returns whether it marked."""
    from xlapy.backends.llvm.loop_analysis import natural_loops
    if not fn.blocks or "alwaysinline" in fn.attributes:
        return False
    for blk in fn.blocks:
        for instr in blk.instructions:
            callee = getattr(instr, "callee", None) if isinstance(instr, ir.CallInstr) else None
            if isinstance(callee, ir.Function) and "alwaysinline" in callee.attributes:
                return False
    try:
        if natural_loops(fn):
            return False
    except Exception:  # noqa: BLE001 - control flow the walk does not follow: leave it
        return False
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    return True
