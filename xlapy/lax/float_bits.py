"""Floating-point bit manipulations of jax.lax: reduce_precision and nextafter.

reduce_precision(x, exponent_bits, mantissa_bits): x rounded to the nearest value of a
float format with that many exponent and mantissa bits (ties to even), kept in x's type:
values beyond the format's range become +-inf, values below its smallest normal number
become +-0 (the reduced format has no subnormals), NaN stays NaN. With the type's own
exponent width, subnormal inputs are rounded like normal ones. Its derivative is
reduce_precision of the tangent (as JAX's) in forward mode; in reverse mode the cotangent
passes through without the rounding (JAX rounds it too: gradients differ by that rounding).

nextafter(x1, x2): the next representable value after x1 in the direction of x2 (NaN if
either is NaN; x2 when they are equal; the smallest subnormal towards x2 from zero).

Both are built from bitcasts and integer arithmetic, so they run eagerly, under jit,
vmap and grad with the primitives xlapy already has.
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.errors import XlapyError

# (exponent bits, mantissa bits) of the float types
_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}


def _layout(dtype, where: str):
    name = np.dtype(dtype).name
    if name not in _LAYOUT:
        raise XlapyError(f"{where}: expects a floating-point operand (float16, bfloat16, "
                         f"float32, float64), got {np.dtype(dtype)}")
    return _LAYOUT[name]


def _uint(dtype):
    return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


def _reduce_bits(x, exponent_bits: int, mantissa_bits: int):
    import xlapy.numpy as xnp
    from xlapy.lax import bitcast_convert_type

    src_e, src_m = _layout(x.dtype, "reduce_precision")
    ut = _uint(x.dtype)
    nbits = ut.itemsize * 8
    c = lambda v: np.array(v, dtype=ut)  # (unsigned constants of x's width)
    bits = bitcast_convert_type(x, ut)
    if mantissa_bits < src_m:
        drop = src_m - mantissa_bits
        last = 1 << drop                      # the lowest mantissa bit that is kept
        half_minus_one = (last >> 1) - 1
        odd = xnp.right_shift(xnp.bitwise_and(bits, c(last)), c(drop))
        bits = xnp.bitwise_and(bits + odd + c(half_minus_one),
                               c(((1 << nbits) - 1) ^ (last - 1)))
    if exponent_bits < src_e:
        sign_mask = 1 << (nbits - 1)
        exp_mask = ((1 << src_e) - 1) << src_m
        bias = (1 << (src_e - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exp = xnp.bitwise_and(bits, c(exp_mask))
        over = exp > c((bias + reduced_bias) << src_m)
        under = exp <= c((bias - reduced_bias) << src_m)
        signed_zero = xnp.bitwise_and(bits, c(sign_mask))
        signed_inf = xnp.bitwise_or(signed_zero, c(exp_mask))
        bits = xnp.where(over, signed_inf, xnp.where(under, signed_zero, bits))
    out = bitcast_convert_type(bits, x.dtype)
    return xnp.where(xnp.isnan(x), x, out)  # (NaN stays NaN, with 0 mantissa bits too)


@functools.lru_cache(maxsize=None)
def _reducer(exponent_bits: int, mantissa_bits: int):
    from xlapy.frontend.custom_derivatives import custom_jvp

    @custom_jvp
    def reduce(x):
        return _reduce_bits(x, exponent_bits, mantissa_bits)

    @reduce.defjvp
    def reduce_jvp(primals, tangents):
        from xlapy.lax import stop_gradient
        t = tangents[0]
        # the tangent rounded as JAX's rule rounds it, written as t plus a constant so that
        # reverse mode can transpose it: there the cotangent passes through unrounded
        return reduce(primals[0]), t + stop_gradient(_reduce_bits(t, exponent_bits,
                                                                  mantissa_bits) - t)

    return reduce


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """operand rounded to a float format of exponent_bits and mantissa_bits, in its own
    type (jax.lax.reduce_precision)."""
    import xlapy.numpy as xnp

    for name, v, lo in (("exponent_bits", exponent_bits, 1), ("mantissa_bits", mantissa_bits,
                                                               0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise XlapyError(f"reduce_precision: {name} must be an integer >= {lo}, got {v!r}")
    x = xnp.asarray(operand)
    e, m = _layout(x.dtype, "reduce_precision")
    if exponent_bits >= e and mantissa_bits >= m:
        return x
    return _reducer(int(exponent_bits), int(mantissa_bits))(x)


def nextafter(x1, x2):
    """The next representable value after x1 towards x2, elementwise (jax.lax.nextafter)."""
    import xlapy.numpy as xnp
    from xlapy.lax import bitcast_convert_type, stop_gradient

    x1, x2 = xnp.asarray(x1), xnp.asarray(x2)
    if x1.dtype != x2.dtype:
        raise XlapyError(f"nextafter: operands must have one dtype, got {x1.dtype} and "
                         f"{x2.dtype}")
    _layout(x1.dtype, "nextafter")
    x1, x2 = stop_gradient(x1), stop_gradient(x2)  # (piecewise constant steps: no gradient)
    ut = _uint(x1.dtype)
    nbits = ut.itemsize * 8
    c = lambda v: np.array(v, dtype=ut)
    bits = bitcast_convert_type(x1, ut)
    sign_mask = c(1 << (nbits - 1))
    # from +-0: the smallest subnormal with x2's sign
    tiny = xnp.bitwise_or(xnp.bitwise_and(bitcast_convert_type(x2, ut), sign_mask), c(1))
    # away from zero (|x1| grows) when x2 lies beyond x1 on x1's side of zero
    away = (x2 > x1) == (x1 > 0)
    stepped = xnp.where(away, bits + c(1), bits - c(1))
    out = xnp.where(x1 == 0, tiny, stepped)
    out = bitcast_convert_type(out, x1.dtype)
    out = xnp.where(x1 == x2, x2, out)
    nan = xnp.isnan(x1) | xnp.isnan(x2)
    return xnp.where(nan, xnp.asarray(np.nan, x1.dtype), out)
