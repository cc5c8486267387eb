"""The NumPy reference interpreter backend ("interpreter")."""

from xlapy.backends.base import register_platform
from xlapy.backends.interpreter.evaluator import (EVAL_RULES, Evaluator, InterpreterPlatform,
                                                   eval_rule, evaluate)

# Importing the rule modules fills EVAL_RULES.
from xlapy.backends.interpreter import (control, data, elementwise, indexing,
                                         linalg, reduction, xlapy_calls)

register_platform("interpreter", InterpreterPlatform)

__all__ = ["EVAL_RULES", "Evaluator", "InterpreterPlatform", "eval_rule", "evaluate"]
