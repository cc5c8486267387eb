"""Elementwise functions with NumPy's promotion and broadcasting rules."""

from __future__ import annotations

import numpy as np

from xlapy.frontend.primitives import basic as B
from xlapy.numpy._core import (cast, dtype_of, float_dtype_for, promote_and_broadcast,
                               result_type, shape)


def _float_unary(prim_fn):
    def f(x):
        dt = float_dtype_for(dtype_of(x))
        return prim_fn(cast(x, dt))
    return f


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
floor = _float_unary(B.floor)
ceil = _float_unary(B.ceil)
rint = _float_unary(B.round_even)


def _float_const(x, value):
    return np.asarray(value, dtype=dtype_of(x))


def log2(x):
    y = log(x)
    return B.div(y, B.full_like(y, np.log(2)))


def log10(x):
    y = log(x)
    return B.div(y, B.full_like(y, np.log(10)))


def exp2(x):
    x = cast(x, float_dtype_for(dtype_of(x)))
    return B.exp(B.mul(x, B.full_like(x, np.log(2))))


def round(x, decimals=0):  # noqa: A001
    if decimals != 0:
        x = cast(x, float_dtype_for(dtype_of(x)))
        scale = B.full_like(x, 10.0 ** decimals)
        return B.div(B.round_even(B.mul(x, scale)), scale)
    if np.dtype(dtype_of(x)).kind in "biu":
        return x
    return B.round_even(x)


around = round


def negative(x):
    return B.neg(x) if np.dtype(dtype_of(x)) != np.bool_ else _bool_neg_error()


def _bool_neg_error():
    from xlapy.errors import XlapyError
    raise XlapyError("negative of a boolean array is not supported (use logical_not)")


def positive(x):
    return x


def absolute(x):
    return x if np.dtype(dtype_of(x)).kind in "bu" else B.abs_(x)


abs = absolute  # noqa: A001


def sign(x):
    return B.sign(x)


def square(x):
    return B.mul(x, x)


def reciprocal(x):
    return B.div(B.full_like(x, 1), x)


def logical_not(x):
    return B.not_(cast(x, np.bool_))


def invert(x):
    return B.not_(x)


bitwise_not = invert


def isfinite(x):
    if np.dtype(dtype_of(x)).kind != "f":
        return B.full(shape(x), True, np.bool_)
    return B.is_finite(x)


def isnan(x):
    if np.dtype(dtype_of(x)).kind != "f":
        return B.full(shape(x), False, np.bool_)
    return B.ne(x, x)


def isinf(x):
    if np.dtype(dtype_of(x)).kind != "f":
        return B.full(shape(x), False, np.bool_)
    return B.eq(B.abs_(x), B.full_like(x, np.inf))


def _binary(prim_fn, bool_as=None):
    def f(x, y):
        x, y = promote_and_broadcast(x, y)
        if bool_as is not None and np.dtype(dtype_of(x)) == np.bool_:
            return bool_as(x, y)
        return prim_fn(x, y)
    return f


add = _binary(B.add, bool_as=B.or_)
subtract = _binary(B.sub)
multiply = _binary(B.mul, bool_as=B.and_)
maximum = _binary(B.max_)
minimum = _binary(B.min_)
bitwise_and = _binary(B.and_)
bitwise_or = _binary(B.or_)
bitwise_xor = _binary(B.xor)
equal = _binary(B.eq)
not_equal = _binary(B.ne)
less = _binary(B.lt)
less_equal = _binary(B.le)
greater = _binary(B.gt)
greater_equal = _binary(B.ge)


def fmax(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.select(B.ne(y, y), x, B.select(B.ne(x, x), y, B.max_(x, y)))


def fmin(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.select(B.ne(y, y), x, B.select(B.ne(x, x), y, B.min_(x, y)))


def true_divide(x, y):
    dt = result_type(x, y)
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    x, y = promote_and_broadcast(x, y, dtype=dt)
    return B.div(x, y)


divide = true_divide


def floor_divide(x, y):
    x, y = promote_and_broadcast(x, y)
    if np.dtype(dtype_of(x)).kind == "f":
        return B.floor(B.div(x, y))
    # truncating division, corrected toward -inf when the signs differ and it is inexact
    q = B.div(x, y)
    if np.dtype(dtype_of(x)).kind == "u":
        return q
    zero = B.zeros_like(x)
    r = B.rem(x, y)
    fix = B.and_(B.ne(r, zero), B.ne(B.lt(x, zero), B.lt(y, zero)))
    return B.select(fix, B.sub(q, B.full_like(q, 1)), q)


def remainder(x, y):
    """Python/NumPy modulo: the result has the sign of the divisor."""
    x, y = promote_and_broadcast(x, y)
    r = B.rem(x, y)
    if np.dtype(dtype_of(x)).kind == "u":
        return r
    zero = B.zeros_like(r)
    fix = B.and_(B.ne(r, zero), B.ne(B.lt(r, zero), B.lt(y, zero)))
    return B.select(fix, B.add(r, y), r)


mod = remainder


def fmod(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.rem(x, y)


def power(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.pow_(x, y)


def arctan2(x, y):
    dt = float_dtype_for(result_type(x, y))
    x, y = promote_and_broadcast(x, y, dtype=dt)
    return B.atan2(x, y)


def logical_and(x, y):
    x, y = promote_and_broadcast(cast(x, np.bool_), cast(y, np.bool_))
    return B.and_(x, y)


def logical_or(x, y):
    x, y = promote_and_broadcast(cast(x, np.bool_), cast(y, np.bool_))
    return B.or_(x, y)


def logical_xor(x, y):
    x, y = promote_and_broadcast(cast(x, np.bool_), cast(y, np.bool_))
    return B.xor(x, y)


def left_shift(x, y):
    x, y = promote_and_broadcast(x, y)
    return B.shift_left(x, y)


def right_shift(x, y):
    x, y = promote_and_broadcast(x, y)
    if np.dtype(dtype_of(x)).kind == "u":
        return B.shift_right_logical(x, y)
    return B.shift_right_arithmetic(x, y)


def where(condition, x=None, y=None):
    if x is None or y is None:
        from xlapy.errors import XlapyError
        raise XlapyError("where(condition) with one argument has a data-dependent shape; "
                         "use where(condition, x, y)")
    c = cast(condition, np.bool_)
    x, y = promote(x, y)
    c, x, y = _broadcast3(c, x, y)
    return B.select(c, x, y)


def _broadcast3(a, b, c):
    from xlapy.numpy._core import broadcast_arrays
    return broadcast_arrays(a, b, c)


def clip(x, a_min=None, a_max=None):
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x
