"""The reference interpreter: evaluates HLO with NumPy, following XLA's semantics.

It is the correctness reference for every other backend, so it favours clarity over speed,
but it evaluates whole arrays at a time (a reducer computation is applied to arrays of
partial results, not element by element), so modules of realistic size run in seconds.

Values are NumPy arrays in logical (row-major) index order with the instruction's element
dtype, or Python tuples of values for tuple shapes. Layouts only matter to `bitcast`, which
reinterprets the physical element order.

It lives under hlo/ (as XLA's HloEvaluator does) so that passes below the backends (constant
folding) and the eager frontend can use the same semantics; the "interpreter" platform
(backends/interpreter) runs programs with it.

Rules: each opcode has one function registered with @eval_rule(opcode, ...), with the
signature rule(ev, instr, operands) -> value; the rule modules (elementwise.py, data.py,
control.py, indexing.py, reduction.py, linalg.py) are imported by the package __init__.
A rule that must call a computation (reduce's to_apply, while's body, sort's comparator)
uses `ev.call(computation, args)`; args may be arrays of any (common) shape when the
computation is elementwise (the usual case for reducers and comparators).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from xlapy.errors import EvaluationError, XlapyError
from xlapy.hlo.ir import Computation, Module
from xlapy.hlo.evaluator.numerics import flush_denormals, flushing_f32
from xlapy.hlo.opcodes import opcode_set, registrar

EVAL_RULES: dict[str, Callable] = {}


# @eval_rule(opcode, ...): the decorated function is the reference rule of those opcodes
eval_rule = registrar(EVAL_RULES, "interpreter rule")


# Opcodes that move, pick or keep elements without floating-point arithmetic: compiled code
# copies their bits, so the denormal mode does not touch them (abs and negate are sign-bit
# operations). Ops that call computations (reduce, map, sort, while, ...) keep their own
# elements too; the computations they call flush per instruction.
KEEPS_BITS = opcode_set({
    "parameter", "constant", "iota", "tuple", "get-tuple-element", "copy", "bitcast",
    "opt-barrier", "after-all", "broadcast", "reshape", "transpose", "slice", "concatenate",
    "pad", "reverse", "dynamic-slice", "dynamic-update-slice", "gather", "scatter",
    "bitcast-convert", "select", "abs", "negate", "reduce-precision", "reduce",
    "reduce-window", "select-and-scatter", "map", "sort", "topk", "while", "conditional",
    "call", "fusion", "custom-call"}, "Evaluator.flush_denormals")


class Evaluator:
    """Evaluates computations. `max_loop_iterations` stops runaway while loops.

    flush_denormals=True evaluates as compiled cpu code runs (FTZ and DAZ, the default of
    XLA's CPU runtime and of xlapy's, --xla_cpu_ftz): every arithmetic instruction reads
    subnormal f32/f64/bf16 operands as zeros and flushes subnormal results (numerics.
    flush_denormals). The default is IEEE gradual underflow, as NumPy computes."""

    def __init__(self, max_loop_iterations: int = 10_000_000, flush_denormals: bool = False):
        self.max_loop_iterations = max_loop_iterations
        self.replica = None  # collectives.ReplicaContext: which device of several it is
        self.flush_denormals = flush_denormals

    def apply(self, rule, instr, operands: list):
        """rule(self, instr, operands), with operands and result flushed in that mode."""
        if (not self.flush_denormals or instr.opcode in KEEPS_BITS
                or instr.attrs.get("type") == "TOTALORDER"):  # a compare of bit patterns
            return rule(self, instr, operands)
        if instr.opcode == "convert" and instr.shape.element_type == \
                instr.operands[0].shape.element_type:
            # a convert to its own type is no operation (XLA's simplifier removes it,
            # xlapy's compiled code copies): a subnormal is kept (fuzz hlo 23000530)
            return rule(self, instr, operands)
        if instr.opcode == "convert" and {instr.shape.element_type.name, instr.operands[
                0].shape.element_type.name} == {"f32", "bf16"}:
            # f32 <-> bf16 is a shift and a rounding of the bits in compiled code (xlapy's
            # and XLA's): a subnormal is kept, as the bits of data movement are
            return rule(self, instr, operands)
        if instr.opcode == "remainder" and instr.shape.element_type.is_float:
            # compiled code calls libm's fmod: only its test for a zero divisor sees a
            # subnormal one as zero (NaN); the rest is exact integer arithmetic on the
            # bits, so a subnormal dividend and result are kept (fmod(1e-310, 1) = 1e-310)
            return rule(self, instr, [operands[0], flush_denormals(operands[1])])
        with flushing_f32():  # (a bf16 result's f32 value flushed before its rounding)
            return flush_denormals(rule(self, instr, [flush_denormals(o) for o in operands]))

    def call(self, comp: Computation, args: list):
        if len(args) != comp.num_parameters:
            raise EvaluationError(f"computation {comp.name} takes {comp.num_parameters} "
                                  f"arguments, got {len(args)}")
        env: dict[int, object] = {}
        for instr in comp.post_order():
            if instr.opcode == "parameter":
                env[id(instr)] = args[instr.parameter_number]
                continue
            rule = EVAL_RULES.get(instr.opcode)
            if rule is None:
                raise EvaluationError(f"{instr.where()}the interpreter has no rule for "
                                      f"opcode {instr.opcode}: {instr}")
            operands = [env[id(o)] for o in instr.operands]
            try:
                env[id(instr)] = self.apply(rule, instr, operands)
            except XlapyError:
                raise
            except (ValueError, TypeError, IndexError, KeyError, OverflowError,
                    ZeroDivisionError, MemoryError) as e:
                raise EvaluationError(f"{instr.where()}evaluating {instr}: "
                                      f"{type(e).__name__}: {e}") from e
        return env[id(comp.root)]

    def evaluate(self, module: Module, args: list):
        return self.call(module.entry, list(args))


def evaluate(module: Module, *args):
    """Evaluate `module` on NumPy arguments (no verification, no argument checks)."""
    with np.errstate(all="ignore"):
        return Evaluator().evaluate(module, list(args))
