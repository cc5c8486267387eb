"""Algebraic simplifier rules for arithmetic, logic, comparisons, select and convert.

Every row is (opcode, algebra, rule); see simplifier_rules_common.py for what a rule is.
Float rules are exact under IEEE semantics (NaN, infinities, signed zeros) except where a
row says otherwise; rules that are only valid for integers check the element type:

  x*0 -> 0         integers only: NaN*0 and inf*0 are NaN
  x+0 -> x         also for floats, as XLA does, although -0 + +0 is +0 (the only
                   difference: the sign of a zero result)
  compare(x, x)    integers, and floats with type=TOTALORDER: every direction folds;
                   floats otherwise: only LT and GT (false even for NaN) fold, since
                   NaN == NaN, NaN <= NaN, NaN >= NaN are false and NaN != NaN is true
  convert(convert(x)) -> convert(x) only when the inner conversion is lossless (every
                   value of x's type is exactly representable in the middle type), and
                   not integer -> float -> integer unless the outer types are lossless
                   too: a float converts to an integer saturating, an integer wraps
                   (u8 200 -> f32 -> s8 is 127, u8 200 -> s8 is -56); nor f32/bf16 ->
                   f64 -> C, as the widening flushes subnormals where code runs flushed
                   (bf16 1e-40 -> f64 -> pred is false, bf16 1e-40 -> pred true, as XLA)
  pow(x, 2) -> x*x, pow(x, 3) -> x*x*x (floats; what JAX's integer_pow emits: within an
                   ulp of pow's result, and far cheaper than exp(y*log(x)))
  pow(x, 1) -> x   (real types; exact: pow(x, 1) is x for every x, NaN, infinities and
                   signed zeros included, as XLA's simplifier has it)
  op(broadcast(a), broadcast(b)) -> broadcast(op(a, b))   (a, b scalars; arithmetic ops:
                   the scalar op is then folded by constant folding, with its denormal
                   rule; the derivative of x ** 2, y * x ** (y - 1), thus becomes 2 * x)
"""

from __future__ import annotations

from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import PrimitiveType
from xlapy.passes.simplifier_rules_common import (element_type, is_all_ones, is_highest,
                                                  is_int, is_lowest, is_one, is_zero, make,
                                                  splat, uniform_value, x_if)


def _lhs(i: Instruction) -> Instruction:
    return i.operands[0]


def _rhs(i: Instruction) -> Instruction:
    return i.operands[1]


def _inner_operand_of(i: Instruction, opcode: str) -> Instruction | None:
    """x for op(inner(x)) when inner's opcode is `opcode`."""
    inner = i.operands[0]
    return inner.operands[0] if inner.opcode == opcode else None


def _same_operands(i: Instruction) -> Instruction | None:
    return x_if(i.operands[0] is i.operands[1], i.operands[0])


def _select_constant_predicate(i: Instruction) -> Instruction | None:
    p, on_true, on_false = i.operands
    v = uniform_value(p)
    if v is None:
        return None
    return on_true if bool(v) else on_false


def _compare_same(i: Instruction) -> Instruction | None:
    x, y = i.operands
    if x is not y:
        return None
    direction = i.attrs.get("direction")
    t = element_type(x)
    if t is None or direction not in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        return None
    if t.is_float and i.attrs.get("type") != "TOTALORDER":
        if direction in ("LT", "GT"):
            return splat(False, i.shape)
        return None
    return splat(direction in ("EQ", "LE", "GE"), i.shape)


_PRECISION = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}   # significand bits
_EXPONENT = {"f16": 5, "bf16": 8, "f32": 8, "f64": 11}


def lossless(a: PrimitiveType, b: PrimitiveType) -> bool:
    """Is every value of type `a` exactly representable in type `b`?"""
    if a == b:
        return True
    if a.is_pred:
        return b.is_integer or b.is_float
    if a.is_integer and b.is_integer:
        if a.kind == b.kind:
            return b.bits >= a.bits
        return a.kind == "u" and b.kind == "s" and b.bits > a.bits
    if a.is_integer and b.is_float:
        magnitude_bits = a.bits - (1 if a.kind == "s" else 0)
        return magnitude_bits <= _PRECISION.get(b.name, 0)
    if a.is_float and b.is_float and a.name in _PRECISION and b.name in _PRECISION:
        return (_PRECISION[b.name] >= _PRECISION[a.name]
                and _EXPONENT[b.name] >= _EXPONENT[a.name])
    return False


def _convert_same_type(i: Instruction) -> Instruction | None:
    x = i.operands[0]
    return x_if(element_type(x) == element_type(i), x)


def _convert_convert(i: Instruction) -> Instruction | None:
    inner = i.operands[0]
    if inner.opcode != "convert":
        return None
    x = inner.operands[0]
    a, b, c = element_type(x), element_type(inner), element_type(i)
    if a is None or b is None or c is None or not lossless(a, b):
        return None
    if a == c:
        return x
    if a.is_integer and b.is_float and c.is_integer and not lossless(a, c):
        return None  # float -> integer saturates, integer -> integer wraps (u8 200 -> s8)
    if a.name in ("f32", "bf16") and b.name == "f64":
        return None  # with denormals flushed, f32 -> f64 reads a subnormal as 0
    return make("convert", i.shape, [x])


def _small_power(i: Instruction) -> Instruction | None:
    t = element_type(i)
    v = uniform_value(_rhs(i))
    if v is not None and (t.is_float or t.is_integer) and float(v) == 1.0:
        return _lhs(i)
    if not t.is_float or v is None or float(v) not in (2.0, 3.0):
        return None
    x = _lhs(i)
    sq = make("multiply", i.shape, [x, x])
    return sq if float(v) == 2.0 else make("multiply", i.shape, [sq, x])


def _scalar_broadcasts(i: Instruction) -> Instruction | None:
    """op(broadcast(a), broadcast(b)) -> broadcast(op(a, b)), a and b scalars."""
    if i.shape.rank == 0 or any(o.opcode != "broadcast" or o.operands[0].shape.rank != 0
                                for o in i.operands):
        return None
    inner = make(i.opcode, i.shape.with_dims(()),
                 [o.operands[0] for o in i.operands], dict(i.attrs))
    return make("broadcast", i.shape, [inner], {"dimensions": ()})


ARITH_RULES = [
    ("power", "pow(x, 1) -> x (real types); pow(x, 2) -> x*x; pow(x, 3) -> x*x*x (floats)",
     _small_power),
    *[(op, "op(broadcast(scalar a), broadcast(scalar b)) -> broadcast(op(a, b))",
       _scalar_broadcasts) for op in ("add", "subtract", "multiply", "divide", "power")],
    ("add", "x+0 -> x", lambda i: x_if(is_zero(_rhs(i)), _lhs(i))),
    ("add", "0+x -> x", lambda i: x_if(is_zero(_lhs(i)), _rhs(i))),
    ("subtract", "x-0 -> x", lambda i: x_if(is_zero(_rhs(i)), _lhs(i))),
    ("multiply", "x*1 -> x", lambda i: x_if(is_one(_rhs(i)), _lhs(i))),
    ("multiply", "1*x -> x", lambda i: x_if(is_one(_lhs(i)), _rhs(i))),
    ("multiply", "x*0 -> 0 (integers)", lambda i: x_if(is_int(i) and is_zero(_rhs(i)), _rhs(i))),
    ("multiply", "0*x -> 0 (integers)", lambda i: x_if(is_int(i) and is_zero(_lhs(i)), _lhs(i))),
    ("divide", "x/1 -> x", lambda i: x_if(is_one(_rhs(i)), _lhs(i))),
    ("negate", "-(-x) -> x", lambda i: _inner_operand_of(i, "negate")),
    ("not", "not(not(x)) -> x", lambda i: _inner_operand_of(i, "not")),
    ("maximum", "max(x, x) -> x", _same_operands),
    ("minimum", "min(x, x) -> x", _same_operands),
    ("maximum", "max(x, -inf) -> x", lambda i: x_if(is_lowest(_rhs(i)), _lhs(i))),
    ("maximum", "max(-inf, x) -> x", lambda i: x_if(is_lowest(_lhs(i)), _rhs(i))),
    ("minimum", "min(x, +inf) -> x", lambda i: x_if(is_highest(_rhs(i)), _lhs(i))),
    ("minimum", "min(+inf, x) -> x", lambda i: x_if(is_highest(_lhs(i)), _rhs(i))),
    ("and", "and(x, true) -> x", lambda i: x_if(is_all_ones(_rhs(i)), _lhs(i))),
    ("and", "and(true, x) -> x", lambda i: x_if(is_all_ones(_lhs(i)), _rhs(i))),
    ("and", "and(x, x) -> x", _same_operands),
    ("or", "or(x, false) -> x", lambda i: x_if(is_int(i) and is_zero(_rhs(i)), _lhs(i))),
    ("or", "or(false, x) -> x", lambda i: x_if(is_int(i) and is_zero(_lhs(i)), _rhs(i))),
    ("or", "or(x, x) -> x", _same_operands),
    ("select", "select(true, x, y) -> x; select(false, x, y) -> y",
     _select_constant_predicate),
    ("select", "select(p, x, x) -> x", lambda i: x_if(i.operands[1] is i.operands[2],
                                                     i.operands[1])),
    ("compare", "x==x, x<=x, x>=x -> true; x!=x, x<x, x>x -> false (see NaN note)",
     _compare_same),
    ("convert", "convert<T>(x: T) -> x", _convert_same_type),
    ("convert", "convert<C>(convert<B>(x: A)) -> convert<C>(x) if A->B is lossless (and A->C "
                "when B is a float between integers); x if C==A",
     _convert_convert),
]
