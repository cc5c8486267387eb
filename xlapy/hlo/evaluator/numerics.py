"""Numeric helpers shared by the interpreter rules: dtype facts, XLA's conversions, the
TOTALORDER key and ReducePrecision.

Conventions (XLA semantics, checked against XLA:CPU through JAX):
  - f16/bf16 arithmetic is done in f32 and rounded once per operation; f32 has more than
    twice the precision of either, so this is the correctly rounded result XLA produces.
  - float -> integer conversion truncates toward zero and saturates to the target range;
    NaN converts to 0.  float -> pred is `x != 0` (NaN -> true).
  - conversions to bf16 from f64 and from integers go through f32 (two roundings), as
    XLA:CPU does (and ml_dtypes does); every other conversion rounds once.
  - TOTALORDER orders floats by bit pattern: -NaN < -Inf < ... < -0.0 < +0.0 < ... < +Inf
    < +NaN; `totalorder_key` maps each float to a signed integer with that order.
  - ReducePrecision follows XLA's bit-level algorithm (EmitReducePrecisionIR): round the
    mantissa to nearest even, then flush values below the reduced type's normal range to
    signed zero and values above its range to signed infinity; NaN stays NaN.

The interpreter assumes a little-endian host (bitcast-convert uses NumPy views).
"""

from __future__ import annotations

import contextlib
import contextvars

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


class Token:
    """The value of a token (after-all, token parameters): carries no data."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TOKEN"


TOKEN = Token()


# ---- dtype facts --------------------------------------------------------------------------

def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt == BF16 or dt.kind == "f"


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def is_int(dt) -> bool:
    return np.dtype(dt).kind in "iu"


def is_signed_int(dt) -> bool:
    return np.dtype(dt).kind == "i"


def is_pred(dt) -> bool:
    return np.dtype(dt) == np.bool_


def bit_width(dt) -> int:
    return np.dtype(dt).itemsize * 8


def uint_of(dt) -> np.dtype:
    """The unsigned integer dtype of the same width."""
    return np.dtype(f"u{np.dtype(dt).itemsize}")


def sint_of(dt) -> np.dtype:
    """The signed integer dtype of the same width."""
    return np.dtype(f"i{np.dtype(dt).itemsize}")


def float_bits(dt) -> tuple[int, int]:
    """(exponent_bits, mantissa_bits) of a float dtype."""
    dt = np.dtype(dt)
    if dt == BF16:
        return 8, 7
    info = np.finfo(dt)
    return info.nexp, info.nmant


def compute_dtype(dt) -> np.dtype:
    """The dtype arithmetic on `dt` is carried out in: f32 for f16/bf16, else `dt` (complex
    arithmetic is carried out in the complex type itself, as XLA does)."""
    dt = np.dtype(dt)
    return F32 if dt in (F16, BF16) else dt


def as_array(x, dtype=None) -> np.ndarray:
    """`x` as an ndarray (0-d stays 0-d), converted to `dtype` if given and different."""
    a = np.asarray(x)
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    return a


# ---- conversions ------------------------------------------------------------------------------

def convert(x: np.ndarray, to) -> np.ndarray:
    """XLA `convert` of array `x` to dtype `to` (see the module docstring)."""
    x = np.asarray(x)
    to = np.dtype(to)
    src = x.dtype
    if src == to:
        return x.copy()
    if to == np.bool_:
        return np.asarray(x != 0)
    if src == np.bool_:
        return x.astype(np.uint8).astype(to)
    if is_complex(src) and not is_complex(to):  # the shape rule rejects it, as XLA does
        raise ValueError(f"cannot convert complex {src} to {to}")
    if is_complex(to) and not is_complex(src) and not is_float(src):
        return x.astype(F64).astype(to)  # integers: through f64, like int -> float
    if is_float(src) and is_int(to):
        return _float_to_int(x, to)
    if to == BF16 and (src == F64 or is_int(src)):
        return x.astype(F32).astype(BF16)
    return x.astype(to)


def _float_to_int(x: np.ndarray, to: np.dtype) -> np.ndarray:
    info = np.iinfo(to)
    t = np.trunc(np.where(np.isnan(x), 0, x).astype(F64))  # exact for f16/bf16/f32
    over = t >= 2.0 ** (bit_width(to) - (1 if info.min < 0 else 0))  # beyond max
    under = t < float(info.min)
    safe = np.where(over | under, 0, t).astype(to)
    return np.asarray(np.where(over, info.max, np.where(under, info.min, safe)).astype(to))


def round_float_result(y: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Round a result computed in f64 (or f32) to float dtype `dt`, through f32 for f16/bf16
    (XLA computes their math in f32 and rounds the f32 result). A complex result (computed
    in c128) rounds each part to the component type of `dt`. Inside flushing_f32(), a bf16
    result's f32 value is flushed before that rounding (see there)."""
    dt = np.dtype(dt)
    y = np.asarray(y)
    if dt in (F16, BF16) and y.dtype == F64:
        y = y.astype(F32)
    if dt == BF16 and y.dtype == F32 and _flushing_f32.get():
        y = np.asarray(flush_denormals(y))
    return np.asarray(y.astype(dt))


_flushing_f32: contextvars.ContextVar = contextvars.ContextVar("xlapy_eval_flushing_f32",
                                                               default=False)


@contextlib.contextmanager
def flushing_f32():
    """Results rounded from f32 to bf16 (round_float_result) have their f32 value flushed
    first, as compiled code computes bf16 arithmetic in f32 registers under FTZ: a product
    of 1.2e-38 and -0.996 is -1.17090e-38 in f32, subnormal and flushed to 0, where rounding
    it to bf16 first gives the smallest normal bf16 (fuzz jax 27004049). The flushing
    evaluator (Evaluator(flush_denormals=True)) computes its arithmetic inside."""
    token = _flushing_f32.set(True)
    try:
        yield
    finally:
        _flushing_f32.reset(token)


# ---- denormals flushed to zero ---------------------------------------------------------------

def flush_denormals(x):
    """`x` with subnormal f32/f64/bf16 elements replaced by zeros of the same sign (arrays,
    or tuples of them). The arithmetic of compiled cpu code runs with FTZ and DAZ, which act
    on f32 and f64 registers; bf16 is computed in f32, so its subnormals (the same range as
    f32's) flush too, while f16 subnormals are normal numbers in f32 and survive."""
    if isinstance(x, tuple):
        return tuple(flush_denormals(v) for v in x)
    a = np.asarray(x)
    if a.dtype not in (F32, F64, BF16) or a.size == 0:
        return x
    tiny = np.finfo(F64 if a.dtype == F64 else F32).tiny
    with np.errstate(invalid="ignore"):
        sub = (a != 0) & (np.abs(a.astype(F64 if a.dtype == F64 else F32)) < tiny)
    if not sub.any():
        return x
    return np.asarray(np.where(sub, np.copysign(np.zeros((), a.dtype), a), a).astype(a.dtype))


# ---- ordering ------------------------------------------------------------------------------

def totalorder_key(x: np.ndarray) -> np.ndarray:
    """Signed-integer keys whose order is XLA's TOTALORDER of the floats `x`."""
    x = np.asarray(x, order="C")
    s = x.view(sint_of(x.dtype))
    flip = np.array(np.iinfo(s.dtype).max, dtype=s.dtype)
    return np.where(s < 0, s ^ flip, s)


# ---- reduce-precision ------------------------------------------------------------------------

def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA ReducePrecision of float array `x` (bit-level, in x's own width)."""
    x = np.asarray(x, order="C")
    dt = x.dtype
    src_exp, src_mant = float_bits(dt)
    nbits = bit_width(dt)
    ut = uint_of(dt)
    u = x.view(ut).copy()
    one = lambda v: np.array(v, dtype=ut)
    if mantissa_bits < src_mant:
        shift = src_mant - mantissa_bits
        last_bit = one(1 << shift)
        base_bias = one((1 << (shift - 1)) - 1)
        x_last_bit = (u & last_bit) >> one(shift)
        truncation_mask = ~one((1 << shift) - 1)
        u = (u + x_last_bit + base_bias) & truncation_mask
    if exponent_bits < src_exp:
        sign_mask = one(1 << (nbits - 1))
        exp_mask = one(((1 << src_exp) - 1) << src_mant)
        bias = (1 << (src_exp - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_exp = one((bias + reduced_bias) << src_mant)
        min_exp = one((bias - reduced_bias) << src_mant)
        x_exp = u & exp_mask
        signed_zero = u & sign_mask
        signed_inf = signed_zero | exp_mask
        u = np.where(x_exp > max_exp, signed_inf, np.where(x_exp <= min_exp, signed_zero, u))
    out = np.asarray(u, dtype=ut).view(dt)
    return np.asarray(np.where(np.isnan(x), x, out))

