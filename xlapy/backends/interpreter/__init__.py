"""The NumPy reference interpreter platform ("interpreter"): runs programs with the HLO
evaluator (xlapy/hlo/evaluator), which holds XLA's semantics, one rule per opcode."""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import Compiler, Executable, Platform, register_platform
from xlapy.hlo.evaluator import EVAL_RULES, Evaluator, eval_rule, evaluate
from xlapy.hlo.ir import Module
from xlapy.hlo.verifier import verify


class InterpreterExecutable(Executable):
    def __init__(self, module: Module, evaluator: Evaluator):
        super().__init__(module, "interpreter")
        self.evaluator = evaluator

    def _execute(self, args: list):
        with np.errstate(all="ignore"):
            return self.evaluator.evaluate(self.module, args)


class InterpreterCompiler(Compiler):
    def compile(self, module: Module) -> InterpreterExecutable:
        verify(module)
        return InterpreterExecutable(module, Evaluator())


class InterpreterPlatform(Platform):
    name = "interpreter"

    def __init__(self):
        self.compiler = InterpreterCompiler()


register_platform("interpreter", InterpreterPlatform)

__all__ = ["EVAL_RULES", "Evaluator", "InterpreterPlatform", "eval_rule", "evaluate"]
