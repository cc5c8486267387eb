"""Dead code elimination.

Algorithm: in every computation, mark the instructions reachable through operands from the
root, from side-effecting instructions (rng, custom-calls with
custom_call_has_side_effect, calls/loops containing them) and from the parameters; remove
the rest, users before operands. Then remove the computations no longer reachable from the
entry through called computations (inliner.remove_unreachable_computations).

Invariants: parameters are kept even when unused (they are the computation's signature);
side-effecting instructions are kept even when their results are unused; fusion
computations are cleaned too (their parameters stay, so the fusion's operands still match).
"""

from __future__ import annotations

import logging

from xlapy.hlo.ir import Computation, Module
from xlapy.passes.inliner import remove_unreachable_computations
from xlapy.passes.rewrite import has_side_effect

log = logging.getLogger("xlapy.passes")


def live_instructions(comp: Computation) -> set[int]:
    """ids of the instructions of `comp` that must stay."""
    roots = [i for i in comp.instructions
             if i is comp.root or i.opcode == "parameter" or has_side_effect(i)]
    live: set[int] = set()
    work = list(roots)
    while work:
        i = work.pop()
        if id(i) in live:
            continue
        live.add(id(i))
        work.extend(i.operands)
    return live


def remove_dead_instructions(comp: Computation) -> int:
    """Remove the dead instructions of `comp`; returns how many."""
    live = live_instructions(comp)
    if all(id(i) in live for i in comp.instructions):
        return 0  # (`live` holds the operands of what it holds: nothing else is dead)
    dead = [i for i in comp.post_order() if id(i) not in live]
    for i in reversed(dead):  # users before their operands
        comp.remove_instruction(i)
    return len(dead)


class DCE:
    """Pass: remove unused instructions and uncalled computations."""

    name = "dce"

    def run(self, module: Module) -> bool:
        removed = 0
        for comp in module.computations:
            n = remove_dead_instructions(comp)
            if n:
                log.debug("dce: removed %d instructions from %s", n, comp.name)
            removed += n
        before = len(module.computations)
        remove_unreachable_computations(module)
        dropped = before - len(module.computations)
        if dropped:
            log.debug("dce: removed %d unreachable computations", dropped)
        return bool(removed or dropped)
