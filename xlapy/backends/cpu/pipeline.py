"""The cpu backend's HLO pass pipeline (run on a clone of the user's module).

1. fusion-inliner: fusions (e.g. from XLA-optimized modules) whose computation holds an op
   the loop emitter cannot generate elementally (scatter, sort, ...) are inlined, so those
   ops run through their dedicated emitters.
"""

from __future__ import annotations

from xlapy.hlo.ir import Instruction, Module
from xlapy.passes.inliner import FusionInliner


def elemental_ok(instr: Instruction) -> bool:
    from xlapy.backends.llvm.elemental import ELEMENTAL_RULES
    return instr.opcode in ELEMENTAL_RULES or instr.opcode in ("parameter", "tuple")


def run_cpu_pipeline(module: Module) -> Module:
    from xlapy.backends.cpu import kernels  # noqa: F401  (registers the elemental rules)
    FusionInliner(elemental_ok).run(module)
    return module
