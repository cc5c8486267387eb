"""Elemental rules for complex numbers (c64, c128): the complex, real and imag opcodes,
and the complex forms of the arithmetic, transcendental and comparison opcodes (registered
with @complex_rule: make_gen uses them where the result or the first operand is complex).

Values are {re, im} structs (types.py); the formulas are complex_math.py's. Semantics
follow the HLO evaluator (hlo/evaluator/elementwise.py): abs gives the component float
type, compare takes EQ (both parts equal) and NE, TOTALORDER compares both parts' bit
patterns. select, the data-movement ops and convert work on the struct values unchanged
(convert's complex forms are in elemental_ops.convert_value).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm import complex_math as C
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import complex_rule, elemental_rule
from xlapy.backends.llvm.elemental_ops import total_order_key


@elemental_rule("complex")
def _complex(em, instr, gens, index):
    return C.make(em.b, gens[0](index), gens[1](index))


@elemental_rule("real")
def _real(em, instr, gens, index):
    v = gens[0](index)
    return em.b.extract_value(v, 0) if instr.operands[0].shape.element_type.is_complex else v


@elemental_rule("imag")
def _imag(em, instr, gens, index):
    v = gens[0](index)
    if instr.operands[0].shape.element_type.is_complex:
        return em.b.extract_value(v, 1)
    return ir.Constant(v.type, 0.0)


_UNARY = {"negate": C.neg, "abs": C.abs_, "sign": C.sign, "exponential": C.exp,
          "exponential-minus-one": C.expm1, "log": C.log, "log-plus-one": C.log1p,
          "logistic": C.logistic, "sqrt": C.sqrt, "rsqrt": C.rsqrt, "sine": C.sin,
          "cosine": C.cos, "tan": C.tan, "tanh": C.tanh}
_BINARY = {"add": C.add, "subtract": C.sub, "multiply": C.mul, "divide": C.div,
           "power": C.power}


@complex_rule(*_UNARY)
def _unary(em, instr, gens, index):
    return _UNARY[instr.opcode](em.b, gens[0](index))


@complex_rule(*_BINARY)
def _binary(em, instr, gens, index):
    return _BINARY[instr.opcode](em.b, gens[0](index), gens[1](index))


@complex_rule("compare")
def _compare(em, instr, gens, index):
    b = em.b
    t = instr.operands[0].shape.element_type.component_type
    (a, c), (d, e) = C.parts(b, gens[0](index)), C.parts(b, gens[1](index))
    if instr.attrs.get("type") == "TOTALORDER":
        eq = b.and_(b.icmp_signed("==", total_order_key(b, a, t), total_order_key(b, d, t)),
                    b.icmp_signed("==", total_order_key(b, c, t), total_order_key(b, e, t)))
        return eq if instr.attrs["direction"] == "EQ" else b.xor(eq, ir.Constant(T.I1, 1))
    if instr.attrs["direction"] == "EQ":
        return b.and_(b.fcmp_ordered("==", a, d), b.fcmp_ordered("==", c, e))
    return b.or_(b.fcmp_unordered("!=", a, d), b.fcmp_unordered("!=", c, e))
