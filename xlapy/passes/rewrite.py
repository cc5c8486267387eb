"""Rewriting helpers shared by the passes: what an instruction's effects are, which
computations a pass rewrites, and how to put a replacement in an instruction's place."""

from __future__ import annotations

from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import SIDE_EFFECTING

# Opcodes with effects beyond their result: the opcode table's side_effecting column (no row
# sets it yet; rng, infeed/outfeed, send/recv and the collectives will when they are added).
SIDE_EFFECTING_OPCODES = SIDE_EFFECTING


def has_side_effect(instr: Instruction, _seen: set | None = None) -> bool:
    """Side-effecting: rng/io opcodes, custom-calls marked custom_call_has_side_effect, and
    calls/loops/fusions whose computations contain such an instruction."""
    if instr.opcode in SIDE_EFFECTING_OPCODES:
        return True
    if instr.opcode == "custom-call" and instr.attrs.get("custom_call_has_side_effect"):
        return True
    seen = _seen if _seen is not None else set()
    for comp in instr.called_computations():
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        if any(has_side_effect(i, seen) for i in comp.instructions):
            return True
    return False


def fusion_computations(module: Module) -> set[int]:
    """ids of computations called by fusion instructions."""
    return {id(i.attrs["calls"]) for i in module.instructions()
            if i.opcode == "fusion" and isinstance(i.attrs.get("calls"), Computation)}


def non_fusion_computations(module: Module) -> list[Computation]:
    """The computations a target-independent pass rewrites (XLA skips fused ones)."""
    fused = fusion_computations(module)
    return [c for c in module.computations if id(c) not in fused]


class InstructionPass:
    """A pass that offers every instruction of the computations it rewrites, one after the
    other, to `rewrite(comp, instr) -> bool` (changed). The instruction list is the one at
    the start of the computation's turn (`order`: its list, or its post order); an
    instruction an earlier rewrite removed from the computation is skipped. `finish(comp)`
    runs after a computation's instructions. `fused_too`: also fusion computations."""

    name = "instruction-pass"
    fused_too = False
    post_order = False

    def run(self, module: Module) -> bool:
        changed = False
        comps = module.computations if self.fused_too else non_fusion_computations(module)
        for comp in comps:
            for instr in comp.post_order() if self.post_order else list(comp.instructions):
                if instr.parent is comp and self.rewrite(comp, instr):
                    changed = True
            changed |= self.finish(comp)
        return changed

    def rewrite(self, comp: Computation, instr: Instruction) -> bool:
        raise NotImplementedError

    def finish(self, comp: Computation) -> bool:
        return False


def insert_before(comp: Computation, new: Instruction, anchor: Instruction) -> Instruction:
    """Add `new` to `comp` just before `anchor` in the instruction list (keeps printed
    definitions before uses)."""
    comp.add_instruction(new)
    comp.instructions.pop()
    comp.instructions.insert(comp.instructions.index(anchor), new)
    return new


def unattached(root: Instruction) -> list[Instruction]:
    """Instructions reachable from `root` through operands that belong to no computation
    yet (a replacement a rule just built), operands first."""
    out: list[Instruction] = []
    seen: set[int] = set()

    def visit(i: Instruction) -> None:
        if i.parent is not None or id(i) in seen:
            return
        seen.add(id(i))
        for o in i.operands:
            visit(o)
        out.append(i)

    visit(root)
    return out


def discard(root: Instruction) -> None:
    """Undo building an unattached replacement: unregister it from its operands' users."""
    for i in unattached(root):
        i.drop_operands()


def remove_dead(comp: Computation, instr: Instruction) -> int:
    """Remove `instr` if it is dead (no users, not the root, not a parameter, no side
    effect), then its operands that became dead. Returns how many were removed."""
    removed, work = 0, [instr]
    while work:
        i = work.pop()
        if (i.parent is not comp or i.users or i is comp.root or i.opcode == "parameter"
                or has_side_effect(i)):
            continue
        operands = list(dict.fromkeys(i.operands))
        comp.remove_instruction(i)
        removed += 1
        work.extend(operands)
    return removed


def replace_with(comp: Computation, old: Instruction, new: Instruction,
                 copy_metadata: bool = True) -> None:
    """Make `new` (an existing instruction of `comp`, or an unattached tree built on
    them) take the place of `old`: new instructions are inserted before `old` (taking its
    metadata if they have none), uses of `old` are redirected, and `old` and whatever
    became dead with it are removed."""
    for i in unattached(new):
        insert_before(comp, i, old)
        if copy_metadata and not i.metadata and old.metadata:
            i.metadata = dict(old.metadata)
    old.replace_all_uses_with(new)
    remove_dead(comp, old)
