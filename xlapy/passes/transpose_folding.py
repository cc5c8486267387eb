"""Transpose folding: dot(transpose(a), b) -> dot(a, b) with remapped dimension numbers.

Algorithm: for each dot operand that is a transpose with permutation p, the dot can read
the transpose's operand directly if its contracting and batch dimension numbers are mapped
through p (dimension d of the transposed value is dimension p[d] of the original) and the
free (non-contracting, non-batch) dimensions keep their relative order, so the dot's output
dimension order is unchanged. The cpu backend's gemm emitter then reads the original
layout with BLAS's transpose flags: the transpose kernel disappears.

Invariants: the dot's result shape is unchanged; a transpose with other users stays for
them (DCE removes it when it becomes unused).
"""

from __future__ import annotations

from xlapy.hlo.ir import Instruction
from xlapy.passes.rewrite import InstructionPass

_SIDES = (("lhs_contracting_dims", "lhs_batch_dims"), ("rhs_contracting_dims", "rhs_batch_dims"))


def _fold(dot: Instruction, side: int) -> bool:
    t = dot.operands[side]
    if t.opcode != "transpose":
        return False
    perm = list(t.attrs["dimensions"])
    cname, bname = _SIDES[side]
    contracting = list(dot.attrs.get(cname, ()))
    batch = list(dot.attrs.get(bname, ()))
    free = [d for d in range(len(perm)) if d not in contracting and d not in batch]
    mapped_free = [perm[d] for d in free]
    if mapped_free != sorted(mapped_free):
        return False  # the output's free-dimension order would change
    new_attrs = dict(dot.attrs)
    new_attrs[cname] = tuple(perm[d] for d in contracting)
    if batch:
        new_attrs[bname] = tuple(perm[d] for d in batch)
    dot.attrs = new_attrs
    dot.set_operand(side, t.operands[0])
    return True


class TransposeFolding(InstructionPass):
    name = "transpose-folding"
    fused_too = True

    def rewrite(self, comp, instr) -> bool:
        if instr.opcode != "dot":
            return False
        changed = False
        for side in (0, 1):
            changed |= _fold(instr, side)
        return changed

    def finish(self, comp) -> bool:
        for instr in list(comp.instructions):
            if instr.opcode == "transpose" and not instr.users and instr is not comp.root:
                comp.remove_instruction(instr)
        return False
