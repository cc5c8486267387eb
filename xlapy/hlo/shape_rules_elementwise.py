"""Shape rules of elementwise operations (XLA's InferUnaryOpShape, InferBinaryOpShape,
InferSelectShape, InferClampShape, InferConvertShape, InferBitcastConvertShape).

All operands are arrays of identical dimensions (HLO has no implicit broadcasting, not even
of scalars); only clamp's min/max and select's predicate may be scalars. Element types
must be identical (no mixed precision). Which element types each opcode accepts is the
opcode table's `types` column (xlapy/hlo/opcodes.py), as XLA's shape inference has it:

  floating point only   the transcendentals, the roundings, is-finite (-> pred), atan2,
                        reduce-precision
  signed (s*, f*)       abs, sign (XLA rejects them on unsigned types)
  numeric (not pred)    negate, subtract, divide, remainder, power
  pred or integer       not, and, or, xor
  integer only          popcnt, count-leading-zeros, shift-left, shift-right-*
  any                   add, multiply, maximum, minimum, compare (-> pred), select, clamp
"""

from __future__ import annotations

from xlapy.hlo.attributes import COMPARISON_DIRECTIONS, COMPARISON_TYPES
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shape_context import OpContext, fmt, is_scalar, shape_rule
from xlapy.hlo.shapes import PRED, Shape


def _check_type(op: OpContext, s: Shape) -> None:
    """The element types the opcode table's `types` column allows for the opcode."""
    info = OPCODES[op.opcode]
    if not info.accepts(s.element_type.kind):
        raise op.fail(f"expects {info.types_text} element type, got {fmt(s)}")


@shape_rule("floor", "ceil", "round-nearest-afz", "round-nearest-even", "exponential",
            "exponential-minus-one", "log", "log-plus-one", "logistic", "sqrt", "rsqrt", "cbrt",
            "sine", "cosine", "tan", "tanh", "erf", "abs", "negate", "sign", "not", "popcnt",
            "count-leading-zeros")
def unary(op: OpContext) -> Shape:
    s = op.array(0)
    _check_type(op, s)
    return s.without_layout()


@shape_rule("is-finite")
def is_finite(op: OpContext) -> Shape:
    s = op.array(0)
    _check_type(op, s)
    return Shape.array(PRED, s.dims)


def _same_shapes(op: OpContext, a: Shape, b: Shape) -> None:
    if a.dims != b.dims:
        raise op.fail(f"operands must have identical dimensions (HLO has no implicit "
                      f"broadcasting), got {fmt(a)} and {fmt(b)}")
    if a.element_type != b.element_type:
        raise op.fail(f"operands must have the same element type, got {fmt(a)} and {fmt(b)}")


@shape_rule("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
            "atan2", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
            "shift-right-logical")
def binary(op: OpContext) -> Shape:
    a, b = op.array(0), op.array(1)
    _same_shapes(op, a, b)
    _check_type(op, a)
    return a.without_layout()


@shape_rule("compare")
def compare(op: OpContext) -> Shape:
    a, b = op.array(0), op.array(1)
    _same_shapes(op, a, b)
    direction = op.string("direction")
    if direction not in COMPARISON_DIRECTIONS:
        raise op.fail(f"direction={direction} is not one of {', '.join(COMPARISON_DIRECTIONS)}")
    if op.has("type"):
        ctype, t = op.string("type"), a.element_type
        if ctype not in COMPARISON_TYPES:
            raise op.fail(f"type={ctype} is not one of {', '.join(COMPARISON_TYPES)}")
        allowed = (("FLOAT", "TOTALORDER") if t.is_float else ("SIGNED",) if t.kind == "s"
                   else ("UNSIGNED",))
        if ctype not in allowed:
            raise op.fail(f"type={ctype} does not suit {t} operands (expected "
                          f"{' or '.join(allowed)})")
    return Shape.array(PRED, a.dims)


@shape_rule("select")
def select(op: OpContext) -> Shape:
    pred, on_true, on_false = op.array(0, "the predicate"), op.array(1), op.array(2)
    if on_true.without_layout() != on_false.without_layout():
        raise op.fail(f"the two value operands must have the same shape, got {fmt(on_true)} "
                      f"and {fmt(on_false)}")
    if pred.element_type is not PRED:
        raise op.fail(f"the predicate must have element type pred, got {fmt(pred)}")
    if pred.dims != on_true.dims and pred.rank != 0:
        raise op.fail(f"the predicate {fmt(pred)} must be a scalar or have the dimensions of "
                      f"the values {fmt(on_true)}")
    return on_true.without_layout()


@shape_rule("clamp")
def clamp(op: OpContext) -> Shape:
    lo, x, hi = op.array(0, "min"), op.array(1, "the operand"), op.array(2, "max")
    for name, bound in (("min", lo), ("max", hi)):
        if bound.element_type != x.element_type:
            raise op.fail(f"{name} {fmt(bound)} and the operand {fmt(x)} have different "
                          "element types")
        if bound.dims != x.dims and not is_scalar(bound):
            raise op.fail(f"{name} {fmt(bound)} must be a scalar or have the operand's "
                          f"dimensions {fmt(x)}")
    return x.without_layout()


@shape_rule("convert")
def convert(op: OpContext) -> Shape:
    s = op.array(0)
    d = op.declared_array()
    return Shape.array(d.element_type, s.dims)


@shape_rule("bitcast-convert")
def bitcast_convert(op: OpContext) -> Shape:
    """Same bit width: same dims. Narrowing by a factor r appends a minor dimension of size r;
    widening by r requires (and removes) a minor dimension of size r."""
    s = op.array(0)
    d = op.declared_array()
    old, new = s.element_type, d.element_type
    if old.is_pred != new.is_pred:
        raise op.fail(f"cannot bitcast between pred and another type: {fmt(s)} -> {new}")
    if old.bits == new.bits:
        return Shape.array(new, s.dims)
    big, small = max(old.bits, new.bits), min(old.bits, new.bits)
    if big % small:
        raise op.fail(f"cannot bitcast between bit widths {old.bits} and {new.bits}: "
                      f"{old} -> {new}")
    ratio = big // small
    if old.bits > new.bits:
        return Shape.array(new, s.dims + (ratio,))
    if s.rank < 1 or s.dims[-1] != ratio:
        raise op.fail(f"converting {fmt(s)} to the wider type {new} needs a last dimension of "
                      f"size {ratio} (the ratio of the bit widths)")
    return Shape.array(new, s.dims[:-1])


@shape_rule("reduce-precision")
def reduce_precision(op: OpContext) -> Shape:
    s = op.array(0)
    _check_type(op, s)
    e, m = op.int("exponent_bits"), op.int("mantissa_bits")
    if e < 1:
        raise op.fail(f"exponent_bits={e} must be at least 1")
    if m < 0:
        raise op.fail(f"mantissa_bits={m} must not be negative")
    return s.without_layout()
