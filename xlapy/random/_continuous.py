"""Bits and the samplers built on uniform floats: uniform, normal, truncated_normal,
exponential, laplace, logistic, gumbel, cauchy, lognormal, rademacher, maxwell, ...

Each follows JAX's algorithm step by step (jax._src.random), so that for the same key the
samples are JAX's, bit for bit where the arithmetic allows it (see _xla_math for f32
erf_inv, log and log1p, and tests/random for what is checked):

  uniform    the top `nmant` bits of a random word become the mantissa of a float in
             [1, 2) (for 16-bit floats with fewer than 8 mantissa bits the word has 8
             bits); minus 1 gives [0, 1); then max(lo, u * (hi - lo) + lo), the multiply-add
             fused as XLA's CPU backend fuses it
  normal     sqrt(2) * erf_inv(uniform on [nextafter(-1, 0), 1))
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.bitcast import bitcast_convert_type
from xlapy.random import _threefry, _xla_math as XM
from xlapy.random._common import (RandomError, canonical_shape, check_shape, float_dtype,
                                  int_dtype, jitted)
from xlapy.random._keys import key_arg

F32 = np.dtype(np.float32)


def _finfo(dtype):
    return ml_dtypes.finfo(dtype)


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _is_unit(minval, maxval) -> bool:
    return (type(minval) in (int, float) and type(maxval) in (int, float)
            and minval == 0 and maxval == 1)


# ---- bits --------------------------------------------------------------------------------

def _bits(key, shape, width):
    return _threefry.random_bits(key, width, shape)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default, uint64 with x64)."""
    data, _ = key_arg("bits", key)
    dtype = int_dtype(dtype, "bits", unsigned=True)
    return jitted(_bits, "shape", "width")(data, shape=canonical_shape(shape, "bits"),
                                           width=dtype.itemsize * 8)


# ---- uniform ------------------------------------------------------------------------------

def _rng_bits(dtype) -> int:
    fi = _finfo(dtype)
    return 8 if fi.nmant < 8 else fi.bits


def unit_floats(key, shape, dtype):
    """Floats in [0, 1) with `nmant` random mantissa bits (JAX's construction)."""
    return floats_from_bits(_threefry.random_bits(key, _rng_bits(dtype), shape), dtype)


def unit_floats_batched(keys, dtype):
    """unit_floats(k, (), dtype) of every key of an array of shape S + (2,)."""
    return floats_from_bits(_threefry.scalar_bits_batched(keys, _rng_bits(dtype)), dtype)


def floats_from_bits(word, dtype):
    fi = _finfo(dtype)
    nbits, nmant = fi.bits, fi.nmant
    rng_bits = B.aval_of(word).dtype.itemsize * 8
    udt = np.dtype(f"uint{nbits}")
    word = B.convert(word, udt)
    one = int(np.array(1.0, dtype).view(udt))
    mant = L.bitwise_or(L.shift_right_logical(word, rng_bits - nmant), one)
    return L.sub(bitcast_convert_type(mant, dtype), 1.0)


def _mul_add(a, b, c):
    """a*b + c as XLA computes it: fused (one rounding) for f32."""
    if B.aval_of(a).dtype == F32:
        return XM.fma(a, b, c)
    return L.add(L.mul(a, b), c)


def scaled_uniform(key, shape, dtype, minval, maxval):
    floats = unit_floats(key, shape, dtype)
    lo = xnp.broadcast_to(B.convert(_arr(minval), dtype), shape)
    hi = xnp.broadcast_to(B.convert(_arr(maxval), dtype), shape)
    return L.max(lo, _mul_add(floats, L.sub(hi, lo), lo))


def _uniform(key, minval, maxval, shape, dtype, unit):
    if unit:
        return unit_floats(key, shape, dtype)
    return scaled_uniform(key, shape, dtype, minval, maxval)


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval)."""
    data, _ = key_arg("uniform", key)
    dtype = float_dtype(dtype, "uniform")
    shape = canonical_shape(shape, "uniform")
    check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
    unit = _is_unit(minval, maxval)
    if unit:
        minval = maxval = 0
    return jitted(_uniform, "shape", "dtype", "unit")(
        data, minval, maxval, shape=shape, dtype=dtype, unit=unit)


# ---- normal --------------------------------------------------------------------------------

def erf_inv(u, fma_fn=XM.fma):
    """erf_inv as XLA computes it for u's dtype (16-bit floats through f32)."""
    dt = B.aval_of(u).dtype
    if dt == np.float64:
        return XM.erf_inv_f64(u)
    if dt == F32:
        return XM.erf_inv(u, fma_fn)
    return B.convert(XM.erf_inv(B.convert(u, F32), fma_fn), dt)


def normal_real(key, shape, dtype):
    return normal_from_floats(unit_floats(key, shape, dtype))


def normal_from_floats(floats):
    dtype = B.aval_of(floats).dtype
    lo = float(np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype)))
    # floats * (1 - lo) + lo: the product is exact (1 - lo rounds to 2), so the unfused
    # multiply and add round as XLA's fused one does
    u = L.max(L.add(L.mul(floats, float(np.array(1.0, dtype) - np.array(lo, dtype))), lo),
              lo)
    if dtype == F32:
        # every one of the 2^23 possible u gives JAX's value with the faster emulated fma
        # (tests/random/test_normal_exhaustive.py)
        w = XM.erf_inv(u, XM.fma_fast)
    else:
        w = erf_inv(u)
    return L.mul(w, float(np.array(np.sqrt(2), dtype)))


def _normal(key, shape, dtype):
    return normal_real(key, shape, dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal floats."""
    data, _ = key_arg("normal", key)
    dtype = float_dtype(dtype, "normal")
    return jitted(_normal, "shape", "dtype")(data, shape=canonical_shape(shape, "normal"),
                                             dtype=dtype)


def _erf(x):
    dt = B.aval_of(x).dtype
    if dt == F32:
        return XM.erf(x)
    if dt == np.float64:
        return L.erf(x)
    return B.convert(XM.erf(B.convert(x, F32)), dt)


def nextafter(x, toward: float):
    """The next representable value after x towards +inf or -inf (x finite or inf)."""
    a = B.aval_of(x)
    udt = np.dtype(f"uint{a.dtype.itemsize * 8}")
    bits = bitcast_convert_type(x, udt)
    zero = XM.const(x, 0.0)
    up = toward > 0
    # moving away from zero adds one to the magnitude's bits, towards zero subtracts one
    away = L.gt(x, zero) if up else L.lt(x, zero)
    stepped = bitcast_convert_type(L.select(away, L.add(bits, 1), L.sub(bits, 1)), a.dtype)
    smallest = XM.const(x, float(np.nextafter(np.array(0, a.dtype), np.array(toward, a.dtype))))
    out = L.select(L.eq(x, zero), smallest, stepped)
    return L.select(L.ne(x, x), x, out)


def _truncated_normal(key, lower, upper, shape, dtype):
    sqrt2 = float(np.array(np.sqrt(2), dtype))
    rsqrt2 = float(np.array(1, dtype) / np.array(np.sqrt(2), dtype))  # XLA: x/c -> x*(1/c)
    lower = B.convert(_arr(lower), dtype)
    upper = B.convert(_arr(upper), dtype)
    a = _erf(L.mul(lower, rsqrt2))
    b = _erf(L.mul(upper, rsqrt2))
    u = scaled_uniform(key, shape, dtype, a, b)
    # the faster fma emulation: equal to JAX on all 2^23 possible u for bounds (-2, 2) (the
    # initializers', tests/random/test_exhaustive.py), (-1.5, 2) and (-3, 3)
    out = L.mul(erf_inv(u, XM.fma_fast), sqrt2)
    lo = xnp.broadcast_to(nextafter(lower, np.inf), shape)
    hi = xnp.broadcast_to(nextafter(upper, -np.inf), shape)
    return L.min(L.max(out, lo), hi)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to (lower, upper)."""
    data, _ = key_arg("truncated_normal", key)
    dtype = float_dtype(dtype, "truncated_normal")
    shape = canonical_shape(shape, "truncated_normal")
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    return jitted(_truncated_normal, "shape", "dtype")(data, lower, upper, shape=shape,
                                                        dtype=dtype)


# ---- transforms of uniform floats ------------------------------------------------------------

def _log(x):
    return XM.log(x) if B.aval_of(x).dtype == F32 else L.log(x)


def _log1p(x):
    return XM.log1p(x) if B.aval_of(x).dtype == F32 else L.log1p(x)


def _exponential(key, shape, dtype):
    return L.neg(_log1p(L.neg(unit_floats(key, shape, dtype))))


def _laplace(key, shape, dtype):
    u = scaled_uniform(key, shape, dtype, -1.0 + float(_finfo(dtype).epsneg), 1.0)
    return L.mul(L.sign(u), _log1p(L.neg(L.abs(u))))


def _logistic(key, shape, dtype):
    x = scaled_uniform(key, shape, dtype, float(_finfo(dtype).tiny), 1.0)
    return L.sub(_log(x), _log1p(L.neg(x)))


def _gumbel(key, shape, dtype, mode):
    fi = _finfo(dtype)
    if mode == "low":
        u = scaled_uniform(key, shape, dtype, float(fi.tiny), 1.0)
        return L.neg(_log(L.neg(_log(u))))
    both = unit_floats(key, (2,) + tuple(shape), dtype)
    high, low = xnp.reshape(both[0], shape), xnp.reshape(both[1], shape)
    x = L.select(L.ge(high, XM.const(high, 0.5)), high,
                 L.add(L.add(high, L.mul(low, float(2.0 ** -fi.nmant))), float(fi.tiny)))
    return L.neg(_log(L.neg(_log1p(L.neg(x)))))


def _cauchy(key, shape, dtype):
    u = scaled_uniform(key, shape, dtype, float(_finfo(dtype).eps), 1.0)
    return L.tan(L.mul(L.sub(u, 0.5), float(np.array(np.pi, dtype))))


def _sampler(fn, name, extra=()):
    def sample(key, shape=(), dtype=None, **kw):
        data, _ = key_arg(name, key)
        dtype = float_dtype(dtype, name)
        shape = canonical_shape(shape, name)
        return jitted(fn, "shape", "dtype", *extra)(data, shape=shape, dtype=dtype, **kw)
    sample.__name__ = name
    return sample


exponential = _sampler(_exponential, "exponential")
exponential.__doc__ = "Standard exponential floats: -log1p(-u)."
laplace = _sampler(_laplace, "laplace")
laplace.__doc__ = "Standard Laplace floats."
logistic = _sampler(_logistic, "logistic")
logistic.__doc__ = "Standard logistic floats: log(u) - log1p(-u)."
cauchy = _sampler(_cauchy, "cauchy")
cauchy.__doc__ = "Standard Cauchy floats: tan(pi (u - 1/2))."
_gumbel_sampler = _sampler(_gumbel, "gumbel", ("mode",))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats: -log(-log(u)) ('low' mode, JAX's default) or through log1p
    near 1 ('high')."""
    mode = "low" if mode is None else mode
    if mode not in ("low", "high", "highest"):
        raise RandomError(f"gumbel: mode must be 'low', 'high' or 'highest', got {mode!r}")
    return _gumbel_sampler(key, shape, dtype, mode="high" if mode == "highest" else mode)


def _lognormal(key, sigma, shape, dtype):
    return L.exp(L.mul(normal_real(key, shape, dtype), B.convert(_arr(sigma), dtype)))


def lognormal(key, sigma=1., shape=None, dtype=None):
    """exp(sigma * standard normal)."""
    data, _ = key_arg("lognormal", key)
    dtype = float_dtype(dtype, "lognormal")
    shape = np.shape(sigma) if shape is None else canonical_shape(shape, "lognormal")
    check_shape("lognormal", shape, np.shape(sigma))
    sigma = xnp.broadcast_to(xnp.asarray(sigma, dtype), shape)
    return jitted(_lognormal, "shape", "dtype")(data, sigma, shape=shape, dtype=dtype)


def _rademacher(key, shape, dtype):
    bern = L.lt(unit_floats(key, shape, float_dtype(None, "rademacher")), 0.5)
    return L.sub(L.mul(B.convert(bern, dtype), 2), 1)


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability (an integer dtype, int32 by default)."""
    data, _ = key_arg("rademacher", key)
    dtype = int_dtype(dtype, "rademacher")
    return jitted(_rademacher, "shape", "dtype")(
        data, shape=canonical_shape(shape, "rademacher"), dtype=dtype)
