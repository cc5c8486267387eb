"""Interpreter rules for elementwise ops: unary and binary arithmetic and logic, compare,
select, clamp, convert, bitcast-convert, reduce-precision.

Semantics are XLA's (verified against XLA:CPU through JAX), computed with NumPy on whole
arrays; operands broadcast NumPy-style so computations can be called on arrays (reducers,
comparators, map) where the HLO has scalars and scalar constants:

  float math      f16/bf16 operands are computed in f32 and rounded once per op; the
                  transcendentals (exp, log, sin, erf, pow, atan2, ...) are computed in f64
                  and rounded to f32 (then to f16/bf16): the most accurate reference.
                  Subnormals are IEEE: unlike XLA:CPU (which runs with denormals-are-zero
                  and flush-to-zero) they are neither read as nor rounded to zero.
  round-nearest-afz  halves away from zero, computed without the x+0.5 rounding bug
                  (t = trunc(x); |x - t| >= 0.5 -> t + sign(x); x - t is exact).
  integers        add/subtract/multiply/negate/abs wrap around (two's complement).
                  divide truncates toward zero; x/0 = -1 (all bits set, i.e. the max value
                  for unsigned); INT_MIN/-1 = INT_MIN.  remainder has the dividend's sign;
                  x%0 = x; INT_MIN % -1 = 0.  power: 0^0 = 1; a negative exponent gives 0
                  except for base 1 (-> 1) and base -1 (-> +-1); overflow wraps; like
                  XLA:CPU only the low 6 bits of the exponent are used (2^64 = 1 for s64).
  shifts          the amount is read as unsigned; amounts >= the bit width give 0 for
                  shift-left and shift-right-logical, and the sign fill (copies of the top
                  bit, also for unsigned types) for shift-right-arithmetic.
  maximum/minimum NaN in either operand gives NaN; -0.0 < +0.0.
  pred            add/maximum = or, multiply/minimum = and, and/or/xor/not are logical.
  popcnt, count-leading-zeros  on the bit pattern of the operand's own width.

  compare         FLOAT (IEEE: NaN is unordered, only NE is true), TOTALORDER (by bit
                  pattern, see numerics.totalorder_key), SIGNED, UNSIGNED (integers read with
                  that signedness); the default type follows the element type.
  select/clamp    clamp(lo, x, hi) = minimum(maximum(x, lo), hi) with the NaN rules above;
                  lo/hi and select's predicate may be scalars.
  convert, bitcast-convert, reduce-precision: see numerics.py.  bitcast-convert between
                  widths adds (to narrower) or removes (to wider) a minor dimension, the
                  narrow elements in little-endian order.

Rules reject element types the op is not defined for (the opcode table's `types` column, as
the verifier does: abs and sign take signed and float types only, as in XLA) with an
EvaluationError.

Complex operands (c64, c128): add, subtract, multiply, divide and negate are computed in
the complex type itself (NumPy's formulas: the textbook product, Smith's division); abs
(-> the component float type), sign (z/|z|, 0 at 0), the transcendentals and power are
computed in c128 and rounded to the operand's type; compare takes EQ and NE (both parts
equal). complex, real and imag are in complex.py.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.numerics import (F64, as_array, bit_width, compute_dtype,
                                                  convert, is_complex, is_float, is_pred,
                                                  is_signed_int,
                                                  reduce_precision, round_float_result,
                                                  sint_of, totalorder_key, uint_of)
from xlapy.errors import EvaluationError
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shapes import primitive_type

C128 = np.dtype(np.complex128)

# ---- shared helpers -------------------------------------------------------------------------

_KIND_NAMES = {"f": "floating-point", "s": "signed integer", "u": "unsigned integer", "p": "pred",
               "c": "complex"}


def _kind(dt) -> str:
    dt = np.dtype(dt)
    if is_float(dt):
        return "f"
    if is_complex(dt):
        return "c"
    if is_pred(dt):
        return "p"
    return "s" if is_signed_int(dt) else "u"


def operand_arrays(instr, operands) -> list[np.ndarray]:
    """Operand values as arrays of the operands' declared element types."""
    out = []
    for op, v in zip(instr.operands, operands):
        out.append(as_array(v, op.shape.dtype if op.shape.is_array else None))
    return out


def require_kinds(instr, x: np.ndarray, kinds: str | None) -> None:
    """Raise EvaluationError unless x's element kind is one of `kinds` (letters f s u p;
    None: any)."""
    if kinds is not None and _kind(x.dtype) not in kinds:
        allowed = ", ".join(_KIND_NAMES[k] for k in kinds)
        raise EvaluationError(
            f"{instr.where()}{instr.opcode} is not defined for "
            f"{primitive_type(x.dtype).name} operands (allowed: {allowed}): {instr}")


def in_float(fn, *xs: np.ndarray) -> np.ndarray:
    """fn applied in the compute dtype of xs[0] (f32 for f16/bf16), rounded back."""
    dt = xs[0].dtype
    c = compute_dtype(dt)
    return round_float_result(np.asarray(fn(*(x.astype(c) for x in xs))), dt)


def in_f64(fn, *xs: np.ndarray) -> np.ndarray:
    """fn computed in f64 (c128 for complex operands), rounded to xs[0]'s dtype (through f32
    for f16/bf16)."""
    wide = C128 if is_complex(xs[0].dtype) else F64
    return round_float_result(fn(*(x.astype(wide) for x in xs)), xs[0].dtype)


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA maximum on floats: NaN propagates, max(-0.0, +0.0) = +0.0."""
    r = np.maximum(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a), b, a), r)


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA minimum on floats: NaN propagates, min(-0.0, +0.0) = -0.0."""
    r = np.minimum(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a), a, b), r)


def _unary(instr, operands) -> np.ndarray:
    """The operand, of a kind the opcode table's `types` column allows for the opcode."""
    (x,) = operand_arrays(instr, operands)
    require_kinds(instr, x, OPCODES[instr.opcode].types)
    return x


def _binary(instr, operands) -> tuple[np.ndarray, np.ndarray]:
    a, b = operand_arrays(instr, operands)
    kinds = OPCODES[instr.opcode].types
    require_kinds(instr, a, kinds)
    require_kinds(instr, b, kinds)
    return a, b


# ---- unary: sign-related ---------------------------------------------------------------------

@eval_rule("abs")
def _abs(ev, instr, operands):
    x = _unary(instr, operands)
    if is_complex(x.dtype):  # hypot(re, im) without overflow, rounded once
        return np.asarray(np.abs(x.astype(C128)).astype(x.real.dtype))
    return np.asarray(np.abs(x))  # abs(INT_MIN) wraps to INT_MIN; floats clear the sign bit


@eval_rule("negate")
def _negate(ev, instr, operands):
    x = _unary(instr, operands)
    return np.asarray(np.negative(x))  # ints wrap: -INT_MIN = INT_MIN, -1u = max


@eval_rule("sign")
def _sign(ev, instr, operands):
    x = _unary(instr, operands)
    if is_complex(x.dtype):  # z/|z|; 0 at 0
        return in_f64(lambda v: np.where(v == 0, v, v / np.where(v == 0, 1, np.abs(v))), x)
    if _kind(x.dtype) == "f":  # sign(NaN) = NaN, sign(+-0) = +-0, else +-1
        return in_float(lambda v: np.where(np.isnan(v) | (v == 0), v, np.copysign(1, v)), x)
    return np.asarray(np.sign(x)).astype(x.dtype)


# ---- unary: rounding (exact in any float type) -----------------------------------------------

@eval_rule("floor")
def _floor(ev, instr, operands):
    return in_float(np.floor, _unary(instr, operands))


@eval_rule("ceil")
def _ceil(ev, instr, operands):
    return in_float(np.ceil, _unary(instr, operands))


@eval_rule("round-nearest-even")
def _round_even(ev, instr, operands):
    return in_float(np.rint, _unary(instr, operands))


def _round_afz(v: np.ndarray) -> np.ndarray:
    t = np.trunc(v)  # keeps -0.0 for -0.3; inf stays inf
    return np.where(np.abs(v - t) >= 0.5, t + np.copysign(1, v), t)


@eval_rule("round-nearest-afz")
def _round_nearest_afz(ev, instr, operands):
    return in_float(_round_afz, _unary(instr, operands))


# ---- unary: transcendental and other float math (f64 reference, rounded) ---------------------

def _special():
    import scipy.special  # imported on first use: it takes a while
    return scipy.special


def _float_math_rule(opcode: str, fn) -> None:
    """Register `fn` (an f64 NumPy function) as the rule of float-only unary `opcode`."""
    @eval_rule(opcode)
    def rule(ev, instr, operands):
        return in_f64(fn, _unary(instr, operands))
    rule.__name__ = "_" + opcode.replace("-", "_")


_float_math_rule("exponential", np.exp)               # e^x
_float_math_rule("exponential-minus-one", np.expm1)   # e^x - 1, accurate near 0
# ln x; log(-x) = NaN, log(0) = -inf. The sign of the NaN is XLA:CPU's (a TOTALORDER
# compare sees it): x86's negative default NaN for f32/f16/bf16 arguments outside the
# domain, a positive one for f64; log1p of a NaN argument: negative (f32 and narrower),
# the argument itself (f64); bf16 log of a NaN argument: negative


@eval_rule("log")
def _log(ev, instr, operands):
    f64 = instr.shape.dtype == F64
    bf16 = instr.shape.element_type.name == "bf16"  # (any NaN argument: negative)

    def fn(x):
        r = np.log(x)
        if x.dtype.kind != "f":
            return r
        r = np.where((x < 0) & np.isnan(r), _domain_nan(f64), r)
        return np.where(np.isnan(x), -np.abs(np.nan), r) if bf16 else r
    return in_f64(fn, _unary(instr, operands))


@eval_rule("log-plus-one")
def _log_plus_one(ev, instr, operands):
    f64 = instr.shape.dtype == F64

    def fn(x):
        r = np.log1p(x)
        if x.dtype.kind != "f":
            return r
        r = np.where(x < -1, _domain_nan(f64), r)
        return np.where(np.isnan(x), x if f64 else -np.abs(np.nan), r)
    return in_f64(fn, _unary(instr, operands))


def _domain_nan(f64: bool):
    return np.abs(np.nan) if f64 else -np.abs(np.nan)


_float_math_rule("logistic", lambda x: _special().expit(x) if x.dtype == F64
                 else 1 / (1 + np.exp(-x)))           # 1 / (1 + e^-x)
_float_math_rule("sqrt", lambda x: np.sqrt(x + 0.0) if x.dtype.kind == "c"  # -0i as +0i (XLA)
                 else np.sqrt(x))                     # sqrt(-0) = -0
_float_math_rule("rsqrt", lambda x: 1.0 / np.sqrt(x))  # 1/sqrt(x); rsqrt(-0) = -inf
_float_math_rule("cbrt", np.cbrt)
_float_math_rule("sine", np.sin)
_float_math_rule("cosine", np.cos)
_float_math_rule("tan", np.tan)
# (NumPy's tanh and SciPy's erf return a positive NaN for a negative one; XLA:CPU passes
# the argument's NaN through, which a TOTALORDER compare sees)
_float_math_rule("tanh", lambda x: np.where(np.isnan(x), x, np.tanh(x)))
_float_math_rule("erf", lambda x: np.where(np.isnan(x), x, _special().erf(x)))


@eval_rule("is-finite")
def _is_finite(ev, instr, operands):
    x = _unary(instr, operands)
    return np.asarray(np.isfinite(x.astype(compute_dtype(x.dtype))))


# ---- unary: bits and logic -------------------------------------------------------------------

@eval_rule("not")
def _not(ev, instr, operands):
    x = _unary(instr, operands)
    return np.asarray(np.logical_not(x) if is_pred(x.dtype) else np.invert(x))


@eval_rule("popcnt")
def _popcnt(ev, instr, operands):
    x = _unary(instr, operands)
    return np.asarray(np.bitwise_count(x.view(uint_of(x.dtype))).astype(x.dtype))


@eval_rule("count-leading-zeros")
def _clz(ev, instr, operands):
    x = _unary(instr, operands)
    u = x.view(uint_of(x.dtype))
    width = bit_width(x.dtype)
    bit_length = np.zeros(u.shape, dtype=np.int64)
    for k in range(width):  # bit_length = number of k with (u >> k) != 0
        bit_length += (u >> np.array(k, dtype=u.dtype)) != 0
    return np.asarray((width - bit_length).astype(x.dtype))


# ---- binary arithmetic -----------------------------------------------------------------------

@eval_rule("add")
def _add(ev, instr, operands):
    a, b = _binary(instr, operands)
    if is_pred(a.dtype):
        return np.asarray(a | b)
    return in_float(np.add, a, b) if is_float(a.dtype) else np.asarray(np.add(a, b))


@eval_rule("subtract")
def _subtract(ev, instr, operands):
    a, b = _binary(instr, operands)
    return in_float(np.subtract, a, b) if is_float(a.dtype) else np.asarray(np.subtract(a, b))


@eval_rule("multiply")
def _multiply(ev, instr, operands):
    a, b = _binary(instr, operands)
    if is_pred(a.dtype):
        return np.asarray(a & b)
    return in_float(np.multiply, a, b) if is_float(a.dtype) else np.asarray(np.multiply(a, b))


def int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA integer division: truncating; x/0 = -1 (all ones); INT_MIN/-1 = INT_MIN."""
    zero = b == 0
    if is_signed_int(a.dtype):
        info = np.iinfo(a.dtype)
        overflow = (a == info.min) & (b == -1)
        safe_b = np.where(zero | overflow, 1, b).astype(a.dtype)
        r = np.fmod(a, safe_b)                    # C remainder: sign of the dividend
        q = (a - r) // safe_b                     # exact: a - r is a multiple of b
        return np.asarray(np.where(zero, -1, np.where(overflow, info.min, q)).astype(a.dtype))
    safe_b = np.where(zero, 1, b).astype(a.dtype)
    return np.asarray(np.where(zero, np.iinfo(a.dtype).max, a // safe_b).astype(a.dtype))


def int_remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA integer remainder: sign of the dividend; x%0 = x; INT_MIN % -1 = 0."""
    zero = b == 0
    if is_signed_int(a.dtype):
        overflow = (a == np.iinfo(a.dtype).min) & (b == -1)
        safe_b = np.where(zero | overflow, 1, b).astype(a.dtype)
        return np.asarray(np.where(zero, a, np.where(overflow, 0, np.fmod(a, safe_b)))
                          .astype(a.dtype))
    safe_b = np.where(zero, 1, b).astype(a.dtype)
    return np.asarray(np.where(zero, a, a % safe_b).astype(a.dtype))


@eval_rule("divide")
def _divide(ev, instr, operands):
    a, b = _binary(instr, operands)
    if is_complex(a.dtype):
        return np.asarray(np.divide(a, b))
    return in_float(np.divide, a, b) if is_float(a.dtype) else int_divide(a, b)


@eval_rule("remainder")
def _remainder(ev, instr, operands):
    a, b = _binary(instr, operands)
    return in_float(np.fmod, a, b) if is_float(a.dtype) else int_remainder(a, b)


@eval_rule("maximum")
def _maximum(ev, instr, operands):
    a, b = _binary(instr, operands)
    return in_float(fmax, a, b) if is_float(a.dtype) else np.asarray(np.maximum(a, b))


@eval_rule("minimum")
def _minimum(ev, instr, operands):
    a, b = _binary(instr, operands)
    return in_float(fmin, a, b) if is_float(a.dtype) else np.asarray(np.minimum(a, b))


def int_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA:CPU integer power: six wrapping square-and-multiply steps, so only the low 6 bits
    of the exponent count (exponents >= 64 overflow anyway); 0^0 = 1; a negative exponent
    gives 0 except for base 1 (1) and base -1 (+-1 by parity)."""
    a, b = np.broadcast_arrays(a, b)
    ut = uint_of(a.dtype)
    base = a.astype(ut)  # wrapping arithmetic in the unsigned type of the same width
    exp = b.astype(ut)
    result = np.ones(a.shape, dtype=ut)
    one = np.array(1, dtype=ut)
    for _ in range(6):
        result = np.where(exp & one, result * base, result)
        base = base * base
        exp = exp >> one
    result = result.astype(a.dtype)
    if is_signed_int(a.dtype):
        odd = (b & 1) != 0
        neg_result = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        result = np.where(b < 0, neg_result, result)
    return np.asarray(result.astype(a.dtype))


@eval_rule("power")
def _power(ev, instr, operands):
    a, b = _binary(instr, operands)
    if is_complex(a.dtype) or is_float(a.dtype):
        return in_f64(np.power, a, b)
    return int_power(a, b)


@eval_rule("atan2")
def _atan2(ev, instr, operands):
    a, b = _binary(instr, operands)
    return in_f64(np.arctan2, a, b)


# ---- binary logic and shifts -----------------------------------------------------------------

_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@eval_rule(*_BITWISE)
def _bitwise(ev, instr, operands):
    a, b = _binary(instr, operands)
    return np.asarray(_BITWISE[instr.opcode](a, b))


def _shift_amount(a: np.ndarray, b: np.ndarray):
    """(amount as a's unsigned type clipped below the width, mask of amounts >= width)."""
    ut = uint_of(a.dtype)
    amount = b.astype(uint_of(b.dtype)).astype(ut)  # negative amounts read as huge unsigned
    too_big = b.astype(uint_of(b.dtype)) >= bit_width(a.dtype)
    return np.where(too_big, 0, amount).astype(ut), too_big


_LOGICAL_SHIFTS = {"shift-left": np.left_shift, "shift-right-logical": np.right_shift}


@eval_rule(*_LOGICAL_SHIFTS)
def _logical_shift(ev, instr, operands):
    """Shifts in a's unsigned type; amounts >= the width give 0."""
    a, b = _binary(instr, operands)
    amount, too_big = _shift_amount(a, b)
    r = _LOGICAL_SHIFTS[instr.opcode](a.astype(amount.dtype), amount)
    return np.asarray(np.where(too_big, 0, r).astype(a.dtype))


@eval_rule("shift-right-arithmetic")
def _shift_right_arithmetic(ev, instr, operands):
    a, b = _binary(instr, operands)
    amount, too_big = _shift_amount(a, b)
    st = sint_of(a.dtype)  # fill with the top bit, also for unsigned types
    amount = np.where(too_big, bit_width(a.dtype) - 1, amount).astype(st)
    return np.asarray(np.right_shift(a.astype(st), amount).astype(a.dtype))


# ---- compare, select, clamp ------------------------------------------------------------------

_DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
               "GT": np.greater, "GE": np.greater_equal}
_TYPE_KINDS = {"FLOAT": "fc", "TOTALORDER": "fc", "SIGNED": "su", "UNSIGNED": "psu"}


@eval_rule("compare")
def _compare(ev, instr, operands):
    a, b = operand_arrays(instr, operands)
    direction = instr.attrs.get("direction")
    if direction not in _DIRECTIONS:
        raise EvaluationError(f"{instr.where()}compare needs direction=EQ|NE|LT|LE|GT|GE, "
                              f"got {direction!r}: {instr}")
    kind = _kind(a.dtype)
    ctype = (instr.attrs.get("type")
             or {"f": "FLOAT", "c": "FLOAT", "s": "SIGNED"}.get(kind, "UNSIGNED"))
    if kind == "c" and direction not in ("EQ", "NE"):
        raise EvaluationError(f"{instr.where()}complex numbers are not ordered: compare "
                              f"direction {direction}: {instr}")
    if ctype not in _TYPE_KINDS or kind not in _TYPE_KINDS[ctype]:
        raise EvaluationError(f"{instr.where()}compare type {ctype} does not apply to "
                              f"{primitive_type(a.dtype).name} operands: {instr}")
    require_kinds(instr, b, kind)
    if ctype == "TOTALORDER" and kind == "c":  # both parts, each by its bit pattern
        eq = ((totalorder_key(a.real) == totalorder_key(b.real))
              & (totalorder_key(a.imag) == totalorder_key(b.imag)))
        return np.asarray(eq if direction == "EQ" else ~eq)
    if ctype == "TOTALORDER":
        a, b = totalorder_key(a), totalorder_key(b)
    elif ctype == "FLOAT":
        a, b = a.astype(compute_dtype(a.dtype)), b.astype(compute_dtype(b.dtype))
    elif kind != "p":  # integers read with the comparison's signedness
        view = sint_of if ctype == "SIGNED" else uint_of
        a, b = a.view(view(a.dtype)), b.view(view(b.dtype))
    return np.asarray(_DIRECTIONS[direction](a, b))


@eval_rule("select")
def _select(ev, instr, operands):
    pred, on_true, on_false = operands
    if instr.shape.is_tuple:  # old-style tuple select: the predicate is a scalar
        return on_true if bool(np.asarray(pred)) else on_false
    pred, on_true, on_false = operand_arrays(instr, operands)
    return np.asarray(np.where(pred.astype(bool), on_true, on_false).astype(on_true.dtype))


@eval_rule("clamp")
def _clamp(ev, instr, operands):
    lo, x, hi = operand_arrays(instr, operands)
    for v in (lo, hi):
        require_kinds(instr, v, _kind(x.dtype))
    if is_float(x.dtype):
        return in_float(lambda v, l, h: fmin(fmax(v, l), h), x, lo, hi)
    return np.asarray(np.minimum(np.maximum(x, lo), hi).astype(x.dtype))


# ---- conversions -----------------------------------------------------------------------------

@eval_rule("convert")
def _convert(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    return convert(x, instr.shape.dtype)


@eval_rule("bitcast-convert")
def _bitcast_convert(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    to = instr.shape.dtype
    src_size, dst_size = x.dtype.itemsize, np.dtype(to).itemsize
    x = np.asarray(x, order="C")
    raw = x.view(np.uint8) if x.dtype == np.bool_ else x
    if src_size == dst_size:
        y = raw.view(to)
    elif src_size > dst_size:  # one element becomes a new minor dimension of narrow ones
        y = raw.reshape(x.shape + (1,)).view(to)
    else:  # the minor dimension (of dst_size/src_size narrow elements) is consumed
        if x.ndim == 0 or x.shape[-1] * src_size != dst_size:
            raise EvaluationError(
                f"{instr.where()}bitcast-convert from {primitive_type(x.dtype).name} to "
                f"{primitive_type(to).name} needs a minor dimension of "
                f"{dst_size // src_size} elements, the operand has shape {list(x.shape)}: "
                f"{instr}")
        y = raw.view(to).reshape(x.shape[:-1])
    if np.dtype(to) == np.bool_:  # only 0 and 1 are valid bools: normalize the byte
        y = y.view(np.uint8) != 0
    return np.array(y)


@eval_rule("reduce-precision")
def _reduce_precision(ev, instr, operands):
    x = _unary(instr, operands)
    e, m = instr.attrs.get("exponent_bits"), instr.attrs.get("mantissa_bits")
    if not isinstance(e, int) or not isinstance(m, int) or e < 1 or m < 0:
        raise EvaluationError(f"{instr.where()}reduce-precision needs exponent_bits >= 1 and "
                              f"mantissa_bits >= 0, got {e} and {m}: {instr}")
    return reduce_precision(x, e, m)
