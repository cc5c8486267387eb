"""Algebraic simplification: XLA-style identities applied to every non-fusion computation.

Algorithm: sweep each computation in post order; for every instruction, try the rules of
its opcode in table order (ARITH_RULES from simplifier_rules_arith.py, then SHAPE_RULES
from simplifier_rules_shape.py; each row is (opcode, algebra, rule)). The first rule that
returns a replacement wins: the replacement's new instructions are inserted before the old
instruction, uses are redirected, and the old instruction and whatever became dead with it
are removed. Sweeps repeat until one changes nothing (at most `max_sweeps`), so chains such
as JAX's reshape -> identity broadcast -> reshape (emitted for every broadcast_in_dim)
collapse completely.

Invariants:
  - the replacement has the instruction's exact shape, layout included (unspecified
    layouts count as row-major); a rewrite that would change a layout is not applied;
  - every new instruction passes shape inference before anything is edited; a rule whose
    result does not is skipped (and logged), leaving the graph as it was;
  - new instructions take the replaced instruction's metadata (op_name) if they have none;
    an existing instruction that replaces another keeps its own;
  - float rewrites are exact under IEEE NaN/infinity rules (see simplifier_rules_arith.py);
  - fusion computations are left alone (as in XLA), parameters are never removed;
  - run() returns False only when nothing at all was edited.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.shape_inference import infer_shape
from xlapy.passes.rewrite import discard, non_fusion_computations, replace_with, unattached
from xlapy.passes.simplifier_rules_arith import ARITH_RULES
from xlapy.passes.simplifier_rules_common import same_shape
from xlapy.passes.simplifier_rules_shape import SHAPE_RULES

log = logging.getLogger("xlapy.passes")

Rule = Callable[[Instruction], "Instruction | None"]

RULES: list[tuple[str, str, Rule]] = ARITH_RULES + SHAPE_RULES


class AlgebraicSimplifier:
    """Pass: apply the rewrite table until no rule fires."""

    name = "algsimp"

    def __init__(self, rules: Sequence[tuple[str, str, Rule]] | None = None,
                 max_sweeps: int = 50):
        self.rules: dict[str, list[tuple[str, Rule]]] = {}
        for opcode, algebra, rule in (RULES if rules is None else rules):
            self.rules.setdefault(opcode, []).append((algebra, rule))
        self.max_sweeps = max_sweeps
        self.applied: dict[str, int] = {}  # algebra -> times applied (by the last run)

    def run(self, module: Module) -> bool:
        self.applied = {}
        changed = False
        for comp in non_fusion_computations(module):
            for _ in range(self.max_sweeps):
                if not self._sweep(comp):
                    break
                changed = True
        return changed

    def _sweep(self, comp: Computation) -> bool:
        changed = False
        for instr in comp.post_order():
            if instr.parent is not comp:  # removed earlier in this sweep
                continue
            for algebra, rule in self.rules.get(instr.opcode, ()):
                new = rule(instr)
                if new is None or new is instr:
                    continue
                if self._apply(comp, instr, new, algebra):
                    changed = True
                    break
        return changed

    def _apply(self, comp: Computation, old: Instruction, new: Instruction, algebra: str) -> bool:
        fresh = unattached(new)
        problem = None
        if not same_shape(new, old):
            problem = f"shape {new.shape} differs from {old.shape}"
        for i in fresh if problem is None else ():
            try:
                inferred = infer_shape(i.opcode, [o.shape for o in i.operands], i.attrs,
                                       declared=i.shape, literal=i.literal)
            except Exception as e:
                problem = f"{i.opcode} fails shape inference: {e}"
                break
            if not inferred.compatible(i.shape):
                problem = f"{i.opcode} infers {inferred}, not {i.shape}"
                break
        if problem is not None:
            log.debug("algsimp: not applying %r to %s: %s", algebra, old.name, problem)
            discard(new)
            return False
        log.debug("algsimp: %s: %s -> %s", algebra, old.name,
                  new.name if new.parent is not None else new.opcode)
        self.applied[algebra] = self.applied.get(algebra, 0) + 1
        replace_with(comp, old, new)
        return True
