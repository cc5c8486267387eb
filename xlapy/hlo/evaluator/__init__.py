"""The HLO evaluator: XLA's semantics in NumPy, one rule per opcode (see evaluator.py).

    from xlapy.hlo.evaluator import evaluate
    result = evaluate(module, *numpy_arrays)

The "interpreter" platform (xlapy/backends/interpreter) runs programs with it; constant
folding (passes/constant_folding.py) folds with it.
"""

# Importing the rule modules fills EVAL_RULES.
# (lapack.py, JAX's LAPACK custom-calls through ctypes, is imported by the first such call:
# control._custom_call)
from xlapy.hlo.evaluator import (collectives, complex, control, data, elementwise, indexing,
                                 linalg, reduction, xlapy_calls)
from xlapy.hlo.evaluator.collectives import ReplicaContext, run_replicated
from xlapy.hlo.evaluator.evaluator import EVAL_RULES, Evaluator, eval_rule, evaluate

__all__ = ["EVAL_RULES", "Evaluator", "ReplicaContext", "eval_rule", "evaluate",
           "run_replicated"]
