"""Elementwise functions with NumPy's promotion and broadcasting rules.

Result dtypes follow NumPy 2: float functions of bool/int8/uint8 give float16, of wider
integers float64; floor/ceil/trunc keep integer types; bitwise functions reject floats;
integer-only functions of bools (power, floor_divide, shifts, ...) compute in int8, as
NumPy's type resolution does. Functions NumPy has no primitive for are composed from
primitives, written for accuracy (sinh from expm1, arcsinh from log1p, hypot scaled,
logaddexp shifted by the max); float16 inputs of a composite are computed in float32 and
rounded once, as NumPy does for float16.

Integer division and remainder by zero give 0, as NumPy does (NumPy also warns); the
primitives underneath keep XLA's semantics (x / 0 = -1, x % 0 = x).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.primitives import basic as B
from xlapy.numpy._core import (BFLOAT16, broadcast_arrays, cast, dtype_of, float_dtype_for,
                               kind, promote, promote_and_broadcast, result_type, shape)

_F32 = np.dtype(np.float32)
_LN2 = float(np.log(2))


def _dt(x) -> np.dtype:
    return np.dtype(dtype_of(x))


def _kind(x) -> str:
    return kind(dtype_of(x))


def _copy(x):
    """x itself (traced) or a fresh NumPy array: eager results never alias the input."""
    return x if isinstance(x, Tracer) else canonicalize_value(np.array(x, copy=True))


def _c(x, value):
    """A constant with x's shape and dtype."""
    return B.full_like(x, value)


def _reject(name, x, kinds, what):
    if _kind(x) in kinds:
        raise XlapyError(f"{name} is not supported for {what} inputs (dtype {_dt(x)}), as in "
                         "NumPy")


def _in_f32(fn):
    """Run fn (of float arrays) in float32 for float16/bfloat16 inputs, rounding once."""
    def g(*xs):
        dt = _dt(xs[0])
        if dt.itemsize < 4:
            r = fn(*[cast(x, _F32) for x in xs])
            return tuple(cast(e, dt) for e in r) if isinstance(r, tuple) else cast(r, dt)
        return fn(*xs)
    return g


def _to_float(x):
    return cast(x, float_dtype_for(_dt(x)))


def _float_fn(fn):
    """A one-argument float function: ints/bools convert to NumPy's float type for them
    (int8 -> float16, int32 -> float64, ...); float16 is computed in float32."""
    inner = _in_f32(fn)

    def f(x):
        return inner(_to_float(x))
    f.__name__ = fn.__name__
    f.__doc__ = fn.__doc__
    return f


def _bf16_in_f32(prim_fn):
    """A float primitive taking bfloat16 through float32 (as XLA's CPU backend does; NumPy
    and the primitives' float checks know no bfloat16 math)."""
    def f(x, *rest):
        if _dt(x) == BFLOAT16:
            return cast(prim_fn(cast(x, _F32), *[cast(r, _F32) for r in rest]), BFLOAT16)
        return prim_fn(x, *rest)
    return f


_fdiv = _bf16_in_f32(B.div)  # division that stays float for bfloat16 (eager impls too)


def _float_unary(prim_fn):
    prim_fn = _bf16_in_f32(prim_fn)

    def f(x):
        return prim_fn(_to_float(x))
    return f


def _float_binary(fn, dtype=None):
    """A two-argument float function with NumPy's promotion (ints -> float)."""
    inner = _in_f32(fn)

    def f(x, y):
        dt = float_dtype_for(result_type(x, y)) if dtype is None else np.dtype(dtype)
        x, y = promote_and_broadcast(x, y, dtype=dt)
        return inner(x, y)
    f.__name__ = fn.__name__
    return f


def _copysign_from(r, x):
    """r with the sign of x (r >= 0 assumed; a negative zero x gives +0)."""
    return B.select(B.lt(x, B.zeros_like(x)), B.neg(r), r)


# ---- float math ---------------------------------------------------------------------------

exp = _float_unary(B.exp)
expm1 = _float_unary(B.expm1)
log = _float_unary(B.log)
log1p = _float_unary(B.log1p)
tanh = _float_unary(B.tanh)
sin = _float_unary(B.sin)
cos = _float_unary(B.cos)
tan = _float_unary(B.tan)
sqrt = _float_unary(B.sqrt)
cbrt = _float_unary(B.cbrt)


@_float_fn
def log2(x):
    return B.mul(B.log(x), _c(x, 1 / _LN2))


@_float_fn
def log10(x):
    return B.mul(B.log(x), _c(x, 1 / np.log(10)))


def exp2(x):
    x = _to_float(x)
    return B.pow_(_c(x, 2), x)


@_float_fn
def arctan(x):
    return B.atan2(x, _c(x, 1))


@_float_fn
def arcsin(x):
    # asin x = atan2(x, sqrt(1 - x^2)); (1-x)(1+x) keeps precision near |x| = 1
    one = _c(x, 1)
    return B.atan2(x, B.sqrt(B.mul(B.sub(one, x), B.add(one, x))))


@_float_fn
def arccos(x):
    one = _c(x, 1)
    return B.atan2(B.sqrt(B.mul(B.sub(one, x), B.add(one, x))), x)


_BIG = 22.0  # beyond it e^-|x| is below the precision of e^|x| in float64


@_float_fn
def sinh(x):
    # sinh|x| = (t + t/(t+1)) / 2 with t = expm1|x| (no cancellation near 0);
    # for large |x|, e^|x| / 2 as (e^(|x|/2) / 2) * e^(|x|/2) (overflows only when sinh does)
    a = B.abs_(x)
    t = B.expm1(a)
    half = _c(x, 0.5)
    small = B.mul(half, B.add(t, B.div(t, B.add(t, _c(x, 1)))))
    h = B.exp(B.mul(half, a))
    big = B.mul(B.mul(half, h), h)
    return _copysign_from(B.select(B.lt(a, _c(x, _BIG)), small, big), x)


@_float_fn
def cosh(x):
    a = B.abs_(x)
    e = B.exp(a)
    half = _c(x, 0.5)
    small = B.mul(half, B.add(e, B.div(_c(x, 1), e)))
    h = B.exp(B.mul(half, a))
    big = B.mul(B.mul(half, h), h)
    return B.select(B.lt(a, _c(x, _BIG)), small, big)


@_float_fn
def arcsinh(x):
    # asinh|x| = log1p(a + a^2 / (1 + sqrt(1 + a^2))); log(a) + ln 2 once a^2 + 1 == a^2
    a = B.abs_(x)
    one = _c(x, 1)
    a2 = B.mul(a, a)
    small = B.log1p(B.add(a, B.div(a2, B.add(one, B.sqrt(B.add(one, a2))))))
    big = B.add(B.log(a), _c(x, _LN2))
    return _copysign_from(B.select(B.gt(a, _c(x, 2.0 ** 28)), big, small), x)


@_float_fn
def arccosh(x):
    # near 1: log1p(t + sqrt(2t + t^2)), t = x - 1 (exact); then log(x + sqrt(x^2 - 1));
    # huge: log(x) + ln 2. x < 1 gives NaN on the first branch.
    one = _c(x, 1)
    t = B.sub(x, one)
    near1 = B.log1p(B.add(t, B.sqrt(B.add(B.add(t, t), B.mul(t, t)))))
    mid = B.log(B.add(x, B.sqrt(B.mul(t, B.add(x, one)))))
    big = B.add(B.log(x), _c(x, _LN2))
    r = B.select(B.gt(x, _c(x, 2.0)), mid, near1)
    return B.select(B.gt(x, _c(x, 2.0 ** 28)), big, r)


@_float_fn
def arctanh(x):
    # atanh|x| = log1p(2a / (1 - a)) / 2
    a = B.abs_(x)
    r = B.mul(_c(x, 0.5), B.log1p(B.div(B.add(a, a), B.sub(_c(x, 1), a))))
    return _copysign_from(r, x)


@_float_fn
def deg2rad(x):
    return B.mul(x, _c(x, np.pi / 180))


@_float_fn
def rad2deg(x):
    return B.mul(x, _c(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


# ---- rounding -----------------------------------------------------------------------------

def _int_identity_or(prim_fn):
    def f(x):
        if _kind(x) in "biu":
            return _copy(x)  # NumPy 2 keeps integer (and bool) types
        return prim_fn(x)
    return f


floor = _int_identity_or(_bf16_in_f32(B.floor))
ceil = _int_identity_or(_bf16_in_f32(B.ceil))
trunc = _int_identity_or(_bf16_in_f32(B.round_toward_zero))
fix = trunc
rint = _float_unary(B.round_even)


def round(x, decimals=0):
    """Round half to even at `decimals` digits (negative: left of the point), as NumPy:
    rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d. Integers stay integers."""
    decimals = int(decimals)
    dt = _dt(x)
    if kind(dt) == "b":
        if decimals:
            raise XlapyError("round of a boolean array with decimals != 0 is not supported, "
                             "as in NumPy")
        return rint(x)
    if kind(dt) in "iu":
        if decimals >= 0:
            return _copy(x)
        return cast(round(cast(x, np.float64), decimals), dt)
    round_even = _bf16_in_f32(B.round_even)
    if decimals == 0:
        return round_even(x)
    scale = _c(x, 10.0 ** (decimals if decimals > 0 else -decimals))
    if decimals > 0:
        return _fdiv(round_even(B.mul(x, scale)), scale)
    return B.mul(round_even(_fdiv(x, scale)), scale)


around = round


# ---- sign, abs, ... -----------------------------------------------------------------------

def negative(x):
    _reject("negative (the - operator)", x, "b", "boolean")
    return B.neg(x)


def positive(x):
    _reject("positive (the unary + operator)", x, "b", "boolean")
    return _copy(x)


def absolute(x):
    return _copy(x) if _kind(x) in "bu" else B.abs_(x)


abs = absolute


def sign(x):
    _reject("sign", x, "b", "boolean")
    if _kind(x) == "u":  # HLO sign takes signed and float types
        return cast(B.ne(x, B.zeros_like(x)), _dt(x))
    return B.sign(x)


def _int8_if_bool(x):
    return cast(x, np.int8) if _kind(x) == "b" else x


def square(x):
    x = _int8_if_bool(x)
    return B.mul(x, x)


def reciprocal(x):
    x = _int8_if_bool(x)
    return _fdiv(_c(x, 1), x)


# ---- predicates ---------------------------------------------------------------------------

def logical_not(x):
    return B.not_(cast(x, np.bool_))


def invert(x):
    _reject("invert (the ~ operator)", x, "f", "floating-point")
    return B.not_(x)


bitwise_not = bitwise_invert = invert


def _false(x):
    return B.full(shape(x), False, np.bool_)


def _is_finite(x):
    """x - x == 0 exactly when x is finite (inf - inf and NaN give NaN)."""
    return B.eq(B.sub(x, x), B.zeros_like(x))


def isfinite(x):
    if _kind(x) == "c":  # of either part (both, for isfinite), as NumPy
        from xlapy.frontend.primitives import complex as C
        return B.and_(isfinite(C.real(x)), isfinite(C.imag(x)))
    if _kind(x) != "f":
        return B.full(shape(x), True, np.bool_)
    return _is_finite(x)


def isnan(x):
    if _kind(x) == "c":  # of either part (both, for isfinite), as NumPy
        from xlapy.frontend.primitives import complex as C
        return B.or_(isnan(C.real(x)), isnan(C.imag(x)))
    if _kind(x) != "f":
        return _false(x)
    return B.ne(x, x)


def isinf(x):
    if _kind(x) == "c":  # of either part (both, for isfinite), as NumPy
        from xlapy.frontend.primitives import complex as C
        return B.or_(isinf(C.real(x)), isinf(C.imag(x)))
    if _kind(x) != "f":
        return _false(x)
    return B.eq(B.abs_(x), _c(x, np.inf))


def isposinf(x):
    if _kind(x) != "f":
        return _false(x)
    return B.eq(x, _c(x, np.inf))


def isneginf(x):
    if _kind(x) != "f":
        return _false(x)
    return B.eq(x, _c(x, -np.inf))


def signbit(x):
    """x < 0, and True for -0.0. (The sign of a NaN cannot be read without a bitcast:
    NaNs give False.)"""
    k = _kind(x)
    if k in "bu":
        return _false(x)
    zero = B.zeros_like(x)
    neg = B.lt(x, zero)
    if k != "f":
        return neg
    neg_zero = B.and_(B.eq(x, zero), B.lt(_fdiv(_c(x, 1), x), zero))  # 1/-0 = -inf
    return B.or_(neg, neg_zero)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    dt = _dt(x)
    if kind(dt) != "f":
        return _copy(x)
    info = ml_dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = B.select(B.ne(x, x), _c(x, nan), x)
    x = B.select(B.eq(x, _c(x, np.inf)), _c(x, posinf), x)
    return B.select(B.eq(x, _c(x, -np.inf)), _c(x, neginf), x)


# ---- binary arithmetic ----------------------------------------------------------------------

def _binary(prim_fn, name, bool_as=None, reject=""):
    def f(x, y):
        x, y = promote_and_broadcast(x, y)
        k = _kind(x)
        if k in reject:
            what = {"b": "boolean", "f": "floating-point"}[k]
            raise XlapyError(f"{name} is not supported for {what} inputs (dtype {_dt(x)}), "
                             "as in NumPy")
        if bool_as is not None and k == "b":
            return bool_as(x, y)
        return prim_fn(x, y)
    f.__name__ = name
    return f


def _bool_to_int8(x, y):
    x, y = promote_and_broadcast(x, y)
    if _kind(x) == "b":
        x, y = cast(x, np.int8), cast(y, np.int8)
    return x, y


add = _binary(B.add, "add", bool_as=B.or_)
subtract = _binary(B.sub, "subtract (the - operator)", reject="b")
multiply = _binary(B.mul, "multiply", bool_as=B.and_)
maximum = _binary(B.max_, "maximum")
minimum = _binary(B.min_, "minimum")
bitwise_and = _binary(B.and_, "bitwise_and (the & operator)", reject="f")
bitwise_or = _binary(B.or_, "bitwise_or (the | operator)", reject="f")
bitwise_xor = _binary(B.xor, "bitwise_xor (the ^ operator)", reject="f")
equal = _binary(B.eq, "equal")
not_equal = _binary(B.ne, "not_equal")
less = _binary(B.lt, "less")
less_equal = _binary(B.le, "less_equal")
greater = _binary(B.gt, "greater")
greater_equal = _binary(B.ge, "greater_equal")


def fmax(x, y):
    """The maximum, ignoring NaN (NaN only where both are NaN)."""
    x, y = promote_and_broadcast(x, y)
    return B.select(B.ne(y, y), x, B.select(B.ne(x, x), y, B.max_(x, y)))


def fmin(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.select(B.ne(y, y), x, B.select(B.ne(x, x), y, B.min_(x, y)))


def true_divide(x, y):
    dt = result_type(x, y)
    if kind(dt) not in "fc":
        dt = np.dtype(np.float64)
    x, y = promote_and_broadcast(x, y, dtype=dt)
    return _fdiv(x, y)


divide = true_divide


def _float_divmod(a, b):
    """NumPy's npy_divmod: (floor quotient, Python-style modulus) of floats."""
    zero = B.zeros_like(a)
    mod = B.rem(a, b)  # fmod
    div = B.div(B.sub(a, mod), b)
    fix = B.and_(B.ne(mod, zero), B.ne(B.lt(b, zero), B.lt(mod, zero)))
    mod = B.select(fix, B.add(mod, b), mod)
    div = B.select(fix, B.sub(div, _c(a, 1)), div)
    fl = B.floor(div)
    fl = B.select(B.gt(B.sub(div, fl), _c(a, 0.5)), B.add(fl, _c(a, 1)), fl)
    fl = B.select(B.eq(div, zero), B.mul(zero, B.div(a, b)), fl)  # signed zero of a/b
    b_zero = B.eq(b, zero)
    return B.select(b_zero, B.div(a, b), fl), B.select(b_zero, B.rem(a, b), mod)


def _int_divmod(x, y, want_q=True, want_r=True):
    """Floor quotient and modulus of integers; both 0 where y == 0 (as NumPy)."""
    zero = B.zeros_like(x)
    y_zero = B.eq(y, zero)
    safe = B.select(y_zero, _c(y, 1), y)
    q = B.div(x, safe)  # truncates
    r = B.rem(x, safe)
    if _kind(x) == "i":
        fix = B.and_(B.ne(r, zero), B.ne(B.lt(r, zero), B.lt(y, zero)))
        q = B.select(fix, B.sub(q, _c(q, 1)), q)
        r = B.select(fix, B.add(r, y), r)
    return B.select(y_zero, zero, q), B.select(y_zero, zero, r)


def divmod(x, y):
    x, y = _bool_to_int8(x, y)
    if _kind(x) == "f":
        return _in_f32(_float_divmod)(x, y)
    return _int_divmod(x, y)


def floor_divide(x, y):
    x, y = _bool_to_int8(x, y)
    if _kind(x) == "f":
        return _in_f32(lambda a, b: _float_divmod(a, b)[0])(x, y)
    return _int_divmod(x, y)[0]


def remainder(x, y):
    """Python/NumPy modulo: the result has the sign of the divisor."""
    x, y = _bool_to_int8(x, y)
    if _kind(x) == "f":
        return _in_f32(lambda a, b: _float_divmod(a, b)[1])(x, y)
    return _int_divmod(x, y)[1]


mod = remainder


def fmod(x, y):
    """C fmod: the result has the sign of the dividend; integer x % 0 gives 0."""
    x, y = _bool_to_int8(x, y)
    if _kind(x) == "f":
        return _bf16_in_f32(B.rem)(x, y)
    zero = B.zeros_like(x)
    y_zero = B.eq(y, zero)
    return B.select(y_zero, zero, B.rem(x, B.select(y_zero, _c(y, 1), y)))


def power(x, y):
    x, y = _bool_to_int8(x, y)
    return B.pow_(x, y)


pow = power


def float_power(x, y):
    dt = np.result_type(result_type(x, y), np.float64)
    x, y = promote_and_broadcast(x, y, dtype=dt)
    return B.pow_(x, y)


def arctan2(x, y):
    dt = float_dtype_for(result_type(x, y))
    x, y = promote_and_broadcast(x, y, dtype=dt)
    return _bf16_in_f32(B.atan2)(x, y)


atan2 = arctan2


def _hypot(x, y):
    a, b = B.abs_(x), B.abs_(y)
    m, n = B.max_(a, b), B.min_(a, b)
    zero = B.zeros_like(m)
    q = B.div(n, B.select(B.eq(m, zero), _c(m, 1), m))
    r = B.mul(m, B.sqrt(B.add(_c(m, 1), B.mul(q, q))))
    inf = _c(m, np.inf)
    return B.select(B.or_(B.eq(a, inf), B.eq(b, inf)), inf, r)  # hypot(inf, nan) = inf


def _logaddexp(x, y, log1p_of_2_to_minus):
    m = B.max_(x, y)
    d = B.sub(x, y)
    # min - max (= -|x - y|): its derivative splits ties evenly, so the gradient at x == y
    # is 1/2 for each operand, as JAX's (-|d| would give abs's one-sided slope there)
    r = B.add(m, log1p_of_2_to_minus(B.sub(B.min_(x, y), m)))
    return B.select(B.ne(d, d), B.add(x, y), r)  # equal infinities (or a NaN): x + y


hypot = _float_binary(_hypot)
logaddexp = _float_binary(lambda x, y: _logaddexp(x, y, lambda t: B.log1p(B.exp(t))))
logaddexp.__name__ = "logaddexp"
logaddexp2 = _float_binary(lambda x, y: _logaddexp(
    x, y, lambda t: B.mul(B.log1p(B.pow_(_c(t, 2), t)), _c(t, 1 / _LN2))))
logaddexp2.__name__ = "logaddexp2"
copysign = _float_binary(lambda x, y: B.select(signbit(y), B.neg(B.abs_(x)), B.abs_(x)))
copysign.__name__ = "copysign"


def _heaviside(x, h0):
    zero = B.zeros_like(x)
    r = B.select(B.lt(x, zero), zero, B.select(B.gt(x, zero), _c(x, 1), h0))
    return B.select(B.ne(x, x), x, r)


heaviside = _float_binary(_heaviside)
heaviside.__name__ = "heaviside"


def logical_and(x, y):
    x, y = broadcast_arrays(cast(x, np.bool_), cast(y, np.bool_))
    return B.and_(x, y)


def logical_or(x, y):
    x, y = broadcast_arrays(cast(x, np.bool_), cast(y, np.bool_))
    return B.or_(x, y)


def logical_xor(x, y):
    x, y = broadcast_arrays(cast(x, np.bool_), cast(y, np.bool_))
    return B.xor(x, y)


def _shift_args(name, x, y):
    x, y = _bool_to_int8(x, y)
    _reject(name, x, "f", "floating-point")
    return x, y


def left_shift(x, y):
    x, y = _shift_args("left_shift (the << operator)", x, y)
    return B.shift_left(x, y)


def right_shift(x, y):
    x, y = _shift_args("right_shift (the >> operator)", x, y)
    if _kind(x) == "u":
        return B.shift_right_logical(x, y)
    return B.shift_right_arithmetic(x, y)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| for finite values; infinities must be equal."""
    dt = np.result_type(result_type(a, b), 1.0)
    a, b = promote_and_broadcast(a, b, dtype=dt)
    tol = B.add(_c(b, atol), B.mul(_c(b, rtol), B.abs_(b)))
    close = B.and_(B.le(B.abs_(B.sub(a, b)), tol), _is_finite(b))
    close = B.or_(close, B.eq(a, b))
    if equal_nan:
        close = B.or_(close, B.and_(B.ne(a, a), B.ne(b, b)))
    return close


# ---- selection ----------------------------------------------------------------------------

def where(condition, x=None, y=None):
    if x is None or y is None:
        raise XlapyError("where(condition) with one argument has a data-dependent shape; "
                         "use where(condition, x, y)")
    c = cast(condition, np.bool_)
    x, y = promote(x, y)
    c, x, y = broadcast_arrays(c, x, y)
    return B.select(c, x, y)


def clip(x, a_min=None, a_max=None, *, min=None, max=None):
    """min(max(x, a_min), a_max), either bound optional (`min=`/`max=` as in NumPy 2)."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return _copy(x) if lo is None and hi is None else x


# NumPy 2 names
acos, asin, atan, acosh, asinh, atanh = arccos, arcsin, arctan, arccosh, arcsinh, arctanh
