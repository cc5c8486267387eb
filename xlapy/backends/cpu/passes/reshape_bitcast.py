"""reshape-to-bitcast: a reshape that keeps its elements' order in memory is a bitcast.

A reshape between two row-major (default layout) shapes of one element type only renames
the dims of a buffer; left a reshape, the program runs a copy kernel for it (the CNN's
flatten before its dense layer: 50x7x7x64 -> 50x3136). This pass, run after fusion, turns
each such reshape of a computation the program emits (never inside a fused computation,
whose kernel computes its reshapes by index) into a `bitcast`, which the program and buffer
assignment treat as an alias of its operand's buffer (no code, liveness through it).
"""

from __future__ import annotations

from xlapy.hlo.ir import Instruction, Module


def fused_computations(module: Module) -> set:
    """ids of the computations fusion instructions call (the passes here leave them alone;
    dot_layout and attention_fusion share this)."""
    return {id(i.fused_computation) for c in module.computations for i in c.instructions
            if i.opcode == "fusion"}


def bitcast_ok(instr: Instruction) -> bool:
    a, b = instr.operands[0].shape, instr.shape
    return (not a.is_tuple and not b.is_tuple and a.element_type == b.element_type
            and a.has_default_layout and b.has_default_layout and a.size == b.size)


class ReshapeToBitcast:
    name = "reshape-to-bitcast"

    def run(self, module: Module) -> bool:
        fused = fused_computations(module)
        changed = False
        for comp in module.computations:
            if id(comp) in fused:
                continue
            for r in list(comp.instructions):
                if r.opcode != "reshape" or r.parent is not comp or not bitcast_ok(r):
                    continue
                cast = Instruction("bitcast", r.shape, [r.operands[0]], {}, r.name,
                                   dict(r.metadata))
                comp.add_instruction(cast)
                comp.replace_instruction(r, cast)
                changed = True
            if changed:
                comp.instructions = comp.post_order()
        return changed
