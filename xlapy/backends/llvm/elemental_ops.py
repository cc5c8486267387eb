"""Elemental rules for arithmetic, logic, comparisons and conversions (XLA semantics).

No fast-math flags anywhere: NaN, Inf, signed zeros and subnormals behave as IEEE says.
  maximum/minimum   llvm.maximum/llvm.minimum: NaN-propagating, -0 < +0 (what XLA does)
  integer divide    truncates; x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN  (no UB reaches LLVM)
  integer remainder sign of dividend; x%0 = x, INT_MIN%-1 = 0
  shifts            amount >= width: shl/lshr give 0, ashr gives the sign fill
  float -> int      saturating, NaN -> 0 (llvm.fptosi.sat / fptoui.sat)
  x -> pred         x != 0 (NaN -> true)
  f64/int -> bf16   rounded twice, through f32 (what XLA:CPU does)
  f16/bf16 math     widened to f32, computed, rounded back per operation
Transcendentals call the vectorizable polynomial implementations of math.py (inlined),
never libm, so loops containing them vectorize.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from xlapy.backends.llvm import complex_math as C
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import elemental_rule, lowering_error
from xlapy.backends.llvm.math import math_function
from xlapy.flags import flags
from xlapy.hlo.shapes import PrimitiveType


def _intrinsic(em, name: str, ty: ir.Type, nargs: int = 1, ret: ir.Type | None = None):
    fn_ty = ir.FunctionType(ret or ty, [ty] * nargs)
    return em.module.declare_intrinsic(name, [ty], fn_ty)


def _call_intrinsic(em, name, *args, ret=None):
    return em.b.call(_intrinsic(em, name, args[0].type, len(args), ret), list(args))


def _math(em, name: str, *args):
    fn = (getattr(em, "math", None) or math_function)(em.module, name, args[0].type)
    return em.b.call(fn, list(args))


def _elem_type(instr) -> PrimitiveType:
    return instr.shape.element_type


def _operand_type(instr, i=0) -> PrimitiveType:
    return instr.operands[i].shape.element_type


def _float_unary(em, t: PrimitiveType, v, fn):
    """Apply fn to a float value of type t, computing in f32 for f16/bf16."""
    x = T.to_float(em.b, v, t)
    return T.from_float(em.b, fn(x), t)


# ---- unary ---------------------------------------------------------------------------------

_FLOAT_INTRINSIC = {
    "floor": "llvm.floor", "ceil": "llvm.ceil", "round-nearest-afz": "llvm.round",
    "round-nearest-even": "llvm.roundeven", "sqrt": "llvm.sqrt",
}
_FLOAT_MATH = {
    "exponential": "exp", "exponential-minus-one": "expm1", "log": "log",
    "log-plus-one": "log1p", "logistic": "logistic", "cbrt": "cbrt", "sine": "sin",
    "cosine": "cos", "tan": "tan", "tanh": "tanh", "erf": "erf",
}


@elemental_rule(*_FLOAT_INTRINSIC)
def _float_intrinsic_rule(em, instr, gens, index):
    name = _FLOAT_INTRINSIC[instr.opcode]
    return _float_unary(em, _elem_type(instr), gens[0](index),
                        lambda x: _call_intrinsic(em, name, x))


@elemental_rule(*_FLOAT_MATH)
def _float_math_rule(em, instr, gens, index):
    t = _elem_type(instr)
    fn = (lambda x: _math(em, _FLOAT_MATH[instr.opcode], x))
    if instr.opcode == "log" and t.name == "bf16":
        fn = (lambda x: _nan_negative(em, x, _math(em, "log", x)))
    return _float_unary(em, t, gens[0](index), fn)


def _nan_negative(em, x, r):
    """r, but x86's negative default NaN where x is a NaN: XLA:CPU's bf16 log of any NaN
    (its f32 and f64 ones pass the NaN through)."""
    b = em.b
    return b.select(b.fcmp_unordered("uno", x, x), ir.Constant(x.type, -float("nan")), r)


@elemental_rule("rsqrt")
def _rsqrt(em, instr, gens, index):
    b = em.b
    return _float_unary(em, _elem_type(instr), gens[0](index),
                        lambda x: b.fdiv(ir.Constant(x.type, 1.0),
                                         _call_intrinsic(em, "llvm.sqrt", x)))


@elemental_rule("abs")
def _abs(em, instr, gens, index):
    t, v, b = _elem_type(instr), gens[0](index), em.b
    if t.is_float:
        return _float_unary(em, t, v, lambda x: _call_intrinsic(em, "llvm.fabs", x))
    return b.select(b.icmp_signed("<", v, ir.Constant(v.type, 0)), b.neg(v), v)


@elemental_rule("negate")
def _negate(em, instr, gens, index):
    t, v, b = _elem_type(instr), gens[0](index), em.b
    if t.name == "bf16":
        return b.xor(v, ir.Constant(T.I16, 0x8000))
    return b.fneg(v) if t.is_float else b.neg(v)


@elemental_rule("sign")
def _sign(em, instr, gens, index):
    t, v, b = _elem_type(instr), gens[0](index), em.b
    if t.is_float:
        def sign(x):
            zero = ir.Constant(x.type, 0.0)
            one = _call_intrinsic(em, "llvm.copysign", ir.Constant(x.type, 1.0), x)
            # +-0 -> +-0 made from the sign bit, not x itself: with denormals read as zero
            # a subnormal compares equal to 0 and its sign is +-0 (as XLA), not x
            signed_zero = _call_intrinsic(em, "llvm.copysign", zero, x)
            r = b.select(b.fcmp_ordered("oeq", x, zero), signed_zero, one)
            return b.select(b.fcmp_unordered("uno", x, x), x, r)  # NaN -> NaN
        return _float_unary(em, t, v, sign)
    zero = ir.Constant(v.type, 0)  # signed integers (the opcode table's types: s, f)
    pos = b.zext(b.icmp_signed(">", v, zero), v.type)
    neg = b.zext(b.icmp_signed("<", v, zero), v.type)
    return b.sub(pos, neg)


@elemental_rule("not")
def _not(em, instr, gens, index):
    v = gens[0](index)
    return em.b.xor(v, ir.Constant(v.type, -1 if v.type.width > 1 else 1))


@elemental_rule("is-finite")
def _is_finite(em, instr, gens, index):
    t = _operand_type(instr)
    x = T.to_float(em.b, gens[0](index), t)
    ax = _call_intrinsic(em, "llvm.fabs", x)
    return em.b.fcmp_ordered("<", ax, ir.Constant(x.type, float("inf")))


@elemental_rule("popcnt")
def _popcnt(em, instr, gens, index):
    return _call_intrinsic(em, "llvm.ctpop", gens[0](index))


@elemental_rule("count-leading-zeros")
def _clz(em, instr, gens, index):
    v = gens[0](index)
    fn = em.module.declare_intrinsic("llvm.ctlz", [v.type],
                                     ir.FunctionType(v.type, [v.type, T.I1]))
    return em.b.call(fn, [v, ir.Constant(T.I1, 0)])


# ---- binary --------------------------------------------------------------------------------

_FLOAT_BINARY = {"add": "fadd", "subtract": "fsub", "multiply": "fmul", "divide": "fdiv",
                 "remainder": "frem"}
_INT_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul"}
_BITWISE = {"and": "and_", "or": "or_", "xor": "xor"}


def _float_binary(em, t, x, y, fn):
    b = em.b
    return T.from_float(b, fn(T.to_float(b, x, t), T.to_float(b, y, t)), t)


@elemental_rule("add", "subtract", "multiply", "divide", "remainder")
def _arith(em, instr, gens, index):
    t, b = _elem_type(instr), em.b
    x, y = gens[0](index), gens[1](index)
    if t.is_float:
        if (instr.opcode == "remainder" and getattr(em, "math", None) is not None
                and not isinstance(x.type, ir.VectorType)):
            # a target's math library (the gpu's libdevice): LLVM's frem is exact on the
            # cpu (libm's fmod) but the NVPTX target expands it inexactly
            return _float_binary(em, t, x, y, lambda a, c: _math(em, "fmod", a, c))
        op = getattr(b, _FLOAT_BINARY[instr.opcode])
        if instr.opcode == "divide":
            # the divisor flushed first: LLVM turns x / c for a power of two c into x * (1/c),
            # exact in IEEE, also for c = 2^-1023, a subnormal that the divide reads as zero
            # under DAZ, where XLA divides by zero (fuzz jax 33004101). Flushed, a constant
            # folds to that zero; a run-time divisor costs a compare and a select.
            y = T.flush_subnormal(b, y)
        return _float_binary(em, t, x, y, op)
    if t.is_pred:
        if instr.opcode in ("add", "subtract"):
            return b.xor(x, y) if instr.opcode == "subtract" else b.or_(x, y)
        if instr.opcode == "multiply":
            return b.and_(x, y)
        raise lowering_error(instr, "divide/remainder of pred is not defined")
    if instr.opcode in _INT_BINARY:
        return getattr(b, _INT_BINARY[instr.opcode])(x, y)
    return _int_divrem(em, t, x, y, instr.opcode == "divide")


def _int_divrem(em, t, x, y, is_div):
    b = em.b
    ty = x.type
    zero, one, ones = ir.Constant(ty, 0), ir.Constant(ty, 1), ir.Constant(ty, -1)
    y_zero = b.icmp_unsigned("==", y, zero)
    if t.is_signed:
        int_min = ir.Constant(ty, 1 << (ty.width - 1))
        overflow = b.and_(b.icmp_unsigned("==", x, int_min), b.icmp_unsigned("==", y, ones))
        bad = b.or_(y_zero, overflow)
        safe = b.select(bad, one, y)
        q = b.sdiv(x, safe) if is_div else b.srem(x, safe)
        if is_div:
            return b.select(y_zero, ones, b.select(overflow, int_min, q))
        return b.select(y_zero, x, b.select(overflow, zero, q))
    safe = b.select(y_zero, one, y)
    q = b.udiv(x, safe) if is_div else b.urem(x, safe)
    return b.select(y_zero, ones if is_div else x, q)


def _flushed(em, v):
    """v flushed (types.flush_subnormal): an operand of an elementwise maximum, minimum or
    clamp; a reducer's combine (a computation inlined by call_scalar) is not: a chain of
    maxima flushed at each step equals the chain flushed once (flushing is monotone), and
    XLA's reductions keep what its loops keep, so the per-step cost (1.5x on a max-pool)
    buys nothing there."""
    return v if getattr(em, "scalar_calls", 0) else T.flush_subnormal(em.b, v)


@elemental_rule("maximum", "minimum")
def _maxmin(em, instr, gens, index):
    t, b = _elem_type(instr), em.b
    x, y = gens[0](index), gens[1](index)
    is_max = instr.opcode == "maximum"
    if t.is_float:
        name = "llvm.maximum" if is_max else "llvm.minimum"
        # the operands flushed, not the result: LLVM lowers minimum(x, c) for a constant
        # c it knows to be nonzero without the signed-zero fixup, and minss reads a
        # subnormal c as -0 under DAZ, so min(+0, -1.4e-45) was +0 in some loops and -0 in
        # others (fuzz jax 23001782); the flushed operands give XLA's -0 everywhere
        return _float_binary(em, t, x, y, lambda a, c: _call_intrinsic(
            em, name, _flushed(em, a), _flushed(em, c)))
    if t.is_pred:
        return b.or_(x, y) if is_max else b.and_(x, y)
    cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned
    return b.select(cmp(">" if is_max else "<", x, y), x, y)


@elemental_rule("and", "or", "xor")
def _bitwise(em, instr, gens, index):
    return getattr(em.b, _BITWISE[instr.opcode])(gens[0](index), gens[1](index))


@elemental_rule("shift-left", "shift-right-logical", "shift-right-arithmetic")
def _shift(em, instr, gens, index):
    b = em.b
    x, y = gens[0](index), gens[1](index)
    width = ir.Constant(x.type, x.type.width)
    # (the amount clamped to the width first: LLVM's NVPTX backend folds the guarded shift
    # below into PTX's shr/shl, which clamp their 32-bit amount themselves, truncating a
    # 64-bit amount: -5 >> 0x8000000000000001 gave -5 >> 1 on an H100, hlo 25001038)
    y = b.select(b.icmp_unsigned("<", y, width), y, width)
    in_range = b.icmp_unsigned("<", y, width)
    safe = b.select(in_range, y, ir.Constant(x.type, 0))
    if instr.opcode == "shift-left":
        return b.select(in_range, b.shl(x, safe), ir.Constant(x.type, 0))
    if instr.opcode == "shift-right-logical":
        return b.select(in_range, b.lshr(x, safe), ir.Constant(x.type, 0))
    fill = b.ashr(x, ir.Constant(x.type, x.type.width - 1))
    return b.select(in_range, b.ashr(x, safe), fill)


@elemental_rule("power")
def _power(em, instr, gens, index):
    t, b = _elem_type(instr), em.b
    x, y = gens[0](index), gens[1](index)
    if t.is_float:
        return _float_binary(em, t, x, y, lambda a, c: _math(em, "pow", a, c))
    if t.is_pred:
        return b.or_(x, b.xor(y, ir.Constant(T.I1, 1)))  # x**0 = 1; 0**1 = 0; 1**y = 1
    # Exponentiation by squaring over the low 6 bits of y, as XLA:CPU does (so 2**64 == 1
    # for s64); unrolled, so it vectorizes. Negative exponents: 1 for x==1, +-1 for x==-1,
    # else 0.
    ty = x.type
    one, zero = ir.Constant(ty, 1), ir.Constant(ty, 0)
    acc, base, e = one, x, y
    for _ in range(min(ty.width, 6)):
        bit = b.trunc(e, T.I1)
        acc = b.select(bit, b.mul(acc, base), acc)
        base = b.mul(base, base)
        e = b.lshr(e, one)
    if not t.is_signed:
        return acc
    neg = b.icmp_signed("<", y, zero)
    is_one = b.icmp_signed("==", x, one)
    is_mone = b.icmp_signed("==", x, ir.Constant(ty, -1))
    odd = b.trunc(y, T.I1)
    neg_result = b.select(is_one, one, b.select(is_mone, b.select(odd, ir.Constant(ty, -1), one),
                                                zero))
    return b.select(neg, neg_result, acc)


@elemental_rule("atan2")
def _atan2(em, instr, gens, index):
    t = _elem_type(instr)
    return _float_binary(em, t, gens[0](index), gens[1](index),
                         lambda a, c: _math(em, "atan2", a, c))


# ---- comparisons, select, clamp --------------------------------------------------------------

_ICMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def total_order_key(b, v, t: PrimitiveType):
    """Signed-integer key ordering floats as -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN."""
    bits = b.bitcast(v, ir.IntType(t.bits)) if t.name != "bf16" else v
    ity = bits.type
    sign_mask = b.ashr(bits, ir.Constant(ity, ity.width - 1))  # all ones if negative
    flip = b.lshr(sign_mask, ir.Constant(ity, 1))              # 0x7ff.. if negative
    return b.xor(bits, flip)


def compare_values(em, t: PrimitiveType, x, y, direction: str, cmp_type: str | None):
    b = em.b
    if t.is_float:
        if cmp_type == "TOTALORDER":
            kx, ky = total_order_key(b, x, t), total_order_key(b, y, t)
            return b.icmp_signed(_ICMP[direction], kx, ky)
        x, y = T.to_float(b, x, t), T.to_float(b, y, t)
        if direction == "NE":  # the only comparison that is true for NaN operands
            return b.fcmp_unordered("!=", x, y)
        return b.fcmp_ordered(_ICMP[direction], x, y)
    signed = t.is_signed and not t.is_pred if cmp_type is None else cmp_type == "SIGNED"
    fn = b.icmp_signed if signed else b.icmp_unsigned
    return fn(_ICMP[direction], x, y)


@elemental_rule("compare")
def _compare(em, instr, gens, index):
    return compare_values(em, _operand_type(instr), gens[0](index), gens[1](index),
                          instr.attrs["direction"], instr.attrs.get("type"))


@elemental_rule("select")
def _select(em, instr, gens, index):
    pred_idx = [] if instr.operands[0].shape.rank == 0 else index
    return em.b.select(gens[0](pred_idx), gens[1](index), gens[2](index))


@elemental_rule("clamp")
def _clamp(em, instr, gens, index):
    t, b = _elem_type(instr), em.b
    lo = gens[0]([] if instr.operands[0].shape.rank == 0 else index)
    x = gens[1](index)
    hi = gens[2]([] if instr.operands[2].shape.rank == 0 else index)
    if t.is_float:
        def clamp(a, l, h):   # (operands flushed, as for maximum / minimum)
            return _call_intrinsic(em, "llvm.minimum", _call_intrinsic(
                em, "llvm.maximum", _flushed(em, a), _flushed(em, l)), _flushed(em, h))
        return T.from_float(b, clamp(*(T.to_float(b, v, t) for v in (x, lo, hi))), t)
    cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned
    x = b.select(cmp("<", x, lo), lo, x)
    return b.select(cmp(">", x, hi), hi, x)


# ---- conversions -------------------------------------------------------------------------

def convert_value(em, v, src: PrimitiveType, dst: PrimitiveType):
    b = em.b
    if src == dst:
        return v
    if dst.is_complex:  # each part converted (complex -> real is rejected by the verifier)
        part = dst.component_type
        if src.is_complex:
            re, im = C.parts(b, v)
            return C.make(b, convert_value(em, re, src.component_type, part),
                          convert_value(em, im, src.component_type, part))
        return C.make(b, convert_value(em, v, src, part), ir.Constant(T.value_type(part), 0.0))
    if src.is_complex:
        raise TypeError(f"convert from complex {src} to {dst}: take real or imag first")
    if dst.is_pred:
        if src.is_float:
            x = T.to_float(b, v, src)
            # (a module says whether its code runs with denormals flushed: the gpu's does not)
            ftz = getattr(b.module, "flush_denormals", None)
            if not (flags().xla_cpu_ftz if ftz is None else ftz):
                return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
            # code running with denormals flushed reads a subnormal as zero: x != 0 is
            # |x| >= the smallest normal (or NaN). (`x != 0` LLVM folds into a test of the
            # bits, bf16 -> f32 being a shift, that sees a subnormal as nonzero; and
            # llvm.canonicalize, once vectorized to <2 x float>, crashes X86's backend.)
            tiny = float(np.finfo(np.float64 if x.type == ir.DoubleType() else np.float32).tiny)
            return b.fcmp_unordered(">=", _call_intrinsic(em, "llvm.fabs", x),
                                    ir.Constant(x.type, tiny))
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
    if src.is_pred:
        if dst.is_float:
            return T.from_float(b, b.uitofp(v, T.compute_float_type(dst)), dst)
        return b.zext(v, T.value_type(dst))
    if src.is_float and dst.is_float:
        x = T.to_float(b, v, src)
        if dst.name == "f64":
            return b.fpext(x, T.F64) if x.type != T.F64 else x
        if dst.name == "f32":
            return b.fptrunc(x, T.F32) if x.type == T.F64 else x
        if dst.name == "f16":
            return T.f64_to_f16(b, x) if x.type == T.F64 else b.fptrunc(x, T.F16)
        if x.type == T.F64:  # f64 -> bf16 rounds twice, through f32, as XLA:CPU does
            x = b.fptrunc(x, T.F32)
        return T.f32_to_bf16_bits(b, x)
    if src.is_float:  # float -> int: saturating, NaN -> 0
        x = T.to_float(b, v, src)
        name = "llvm.fptosi.sat" if dst.is_signed else "llvm.fptoui.sat"
        dty = T.value_type(dst)
        fn = em.module.declare_intrinsic(name, [dty, x.type], ir.FunctionType(dty, [x.type]))
        return b.call(fn, [x])
    if dst.is_float:  # int -> float
        # int -> bf16 rounds twice, through f32, as XLA:CPU does; int -> f16 through f32 is
        # exact below the f16 overflow threshold and overflows to inf above it either way
        fty = T.F64 if dst.name == "f64" else T.F32
        f = b.sitofp(v, fty) if src.is_signed else b.uitofp(v, fty)
        if dst.name == "bf16":
            return T.f32_to_bf16_bits(b, f)
        if dst.name == "f16":
            return b.fptrunc(f, T.F16)
        return f
    # int -> int
    dty = T.value_type(dst)
    if dst.bits < src.bits:
        return b.trunc(v, dty)
    if dst.bits > src.bits:
        return b.sext(v, dty) if src.is_signed else b.zext(v, dty)
    return v


@elemental_rule("convert")
def _convert(em, instr, gens, index):
    return convert_value(em, gens[0](index), _operand_type(instr), _elem_type(instr))


@elemental_rule("bitcast-convert")
def _bitcast_convert(em, instr, gens, index):
    src, dst, b = _operand_type(instr), _elem_type(instr), em.b
    if src.bits == dst.bits:
        v = gens[0](index)
        if src.is_pred:
            v = b.zext(v, T.I8)
        out = b.bitcast(v, T.storage_type(dst))
        return b.trunc(out, T.I1) if dst.is_pred else out
    if src.bits > dst.bits:  # one source element -> several: the new minor dim picks a part
        v = b.bitcast(gens[0](index[:-1]), ir.IntType(src.bits))
        shift = b.mul(index[-1], ir.Constant(T.I64, dst.bits))
        if src.bits < 64:
            shift = b.trunc(shift, v.type)
        part = b.trunc(b.lshr(v, shift), ir.IntType(dst.bits))
        return b.bitcast(part, T.storage_type(dst))
    # several source elements (the operand's minor dim) -> one
    n = dst.bits // src.bits
    acc = ir.Constant(ir.IntType(dst.bits), 0)
    for k in range(n):
        part = b.bitcast(gens[0](index + [ir.Constant(T.I64, k)]), ir.IntType(src.bits))
        wide = b.zext(part, ir.IntType(dst.bits))
        acc = b.or_(acc, b.shl(wide, ir.Constant(wide.type, k * src.bits)))
    return b.bitcast(acc, T.storage_type(dst))


# (exponent bits, mantissa bits) of each float type's own format
_FLOAT_FORMAT = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


@elemental_rule("reduce-precision")
def _reduce_precision(em, instr, gens, index):
    # XLA works on the bits of the type's own width: an f16 subnormal widened to f32 would
    # be a normal number there, and round (and flush) differently.
    t, b = _elem_type(instr), em.b
    v = gens[0](index)
    bits = v if t.name == "bf16" else b.bitcast(v, ir.IntType(t.bits))
    src_e, src_m = _FLOAT_FORMAT[t.name]
    out = reduce_precision_bits(em, bits, src_e, src_m, instr.attrs["exponent_bits"],
                                instr.attrs["mantissa_bits"])
    return out if t.name == "bf16" else b.bitcast(out, v.type)


def reduce_precision_bits(em, bits, src_e: int, src_m: int, exponent_bits: int,
                          mantissa_bits: int):
    """XLA's ReducePrecision on the bits of a float with src_e exponent and src_m mantissa
    bits: round the mantissa to nearest even, then clamp the exponent range (overflow ->
    inf, underflow -> signed zero); NaN stays NaN."""
    b = em.b
    ity = bits.type
    mask = (1 << ity.width) - 1
    c = lambda v: ir.Constant(ity, v & mask)
    x = bits
    if mantissa_bits < src_m:
        drop = src_m - mantissa_bits
        last = b.and_(b.lshr(bits, c(drop)), c(1))
        bias = b.add(c((1 << (drop - 1)) - 1), last)
        bits = b.and_(b.add(bits, bias), c(~((1 << drop) - 1)))
    if exponent_bits < src_e:
        sign = b.and_(bits, c(1 << (ity.width - 1)))
        exp_bias = (1 << (src_e - 1)) - 1
        new_bias = (1 << (exponent_bits - 1)) - 1
        exp = b.and_(b.lshr(bits, c(src_m)), c((1 << src_e) - 1))
        overflow = b.icmp_unsigned(">", exp, c(exp_bias + new_bias))
        underflow = b.icmp_unsigned("<=", exp, c(exp_bias - new_bias))
        inf = b.or_(sign, c(((1 << src_e) - 1) << src_m))
        bits = b.select(overflow, inf, b.select(underflow, sign, bits))
    abs_x = b.and_(x, c((1 << (ity.width - 1)) - 1))
    is_nan = b.icmp_unsigned(">", abs_x, c(((1 << src_e) - 1) << src_m))
    return b.select(is_nan, x, bits)
