"""Inlining of called computations into their caller.

`inline(instr)` replaces a `fusion` or `call` instruction by a copy of its computation's
instructions (parameters become the call's operands, the copy of the root replaces the
call). `FusionInliner` inlines every fusion whose fused computation holds an instruction
the given predicate rejects (e.g. an op the backend's loop emitter cannot generate
elementally, such as scatter or sort in XLA-optimized CPU modules), or every fusion when
`all_fusions=True`; it then runs again on what it inlined, to a fixed point.

Invariants: the module stays verifiable; metadata is kept on the copies; computations no
longer called by anything are removed from the module.
"""

from __future__ import annotations

from typing import Callable

from xlapy.hlo.ir import Computation, Instruction, Module


def inline(instr: Instruction) -> Instruction:
    """Inline the computation called by a fusion/call `instr`; returns the new root copy."""
    comp: Computation = instr.parent
    callee: Computation = instr.attrs["calls" if instr.opcode == "fusion" else "to_apply"]
    mapping: dict[int, Instruction] = {}
    for p in callee.parameters:
        mapping[id(p)] = instr.operands[p.parameter_number]
    for old in callee.post_order():
        if old.opcode == "parameter":
            continue
        new = Instruction(old.opcode, old.shape, [mapping[id(o)] for o in old.operands],
                          dict(old.attrs), old.name, dict(old.metadata), old.literal,
                          old.parameter_number)
        comp.add_instruction(new)
        _move_before(comp, new, instr)
        mapping[id(old)] = new
    root = mapping[id(callee.root)]
    instr.replace_all_uses_with(root)
    comp.remove_instruction(instr)
    return root


def _move_before(comp: Computation, new: Instruction, anchor: Instruction) -> None:
    comp.instructions.remove(new)
    comp.instructions.insert(comp.instructions.index(anchor), new)


class FusionInliner:
    """Pass: inline fusions whose computation contains an instruction `keep_fused`
    rejects (all fusions with all_fusions=True)."""

    name = "fusion-inliner"

    def __init__(self, keep_fused: Callable[[Instruction], bool] | None = None,
                 all_fusions: bool = False):
        self.keep_fused = keep_fused or (lambda i: True)
        self.all_fusions = all_fusions

    def run(self, module: Module) -> bool:
        return inline_until_none_left(module, lambda: [
            i for c in module.computations for i in c.instructions
            if i.opcode == "fusion" and c in module.computation_post_order()
            and (self.all_fusions or not all(self.keep_fused(x)
                                             for x in i.fused_computation.instructions))])


def inline_until_none_left(module: Module, todo: Callable[[], list]) -> bool:
    """Inline the instructions todo() lists until it lists none (an inlined body may hold
    more); drop the computations nothing calls any more. Returns whether anything changed."""
    changed = False
    while True:
        instrs = todo()
        if not instrs:
            break
        for instr in instrs:
            inline(instr)
        changed = True
    if changed:
        remove_unreachable_computations(module)
    return changed


def remove_unreachable_computations(module: Module) -> None:
    live = {id(c) for c in module.computation_post_order()}
    for c in list(module.computations):
        if id(c) not in live:
            module.remove_computation(c)


class CallInliner:
    """Pass: inline every `call` (JAX emits them for nested jit functions and argmax) so
    later passes see one flat computation."""

    name = "call-inliner"

    def run(self, module: Module) -> bool:
        return inline_until_none_left(module, lambda: [
            i for c in module.computation_post_order() for i in c.instructions
            if i.opcode == "call"])
