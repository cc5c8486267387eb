"""f32 log, log1p and erf_inv computed as XLA's CPU backend computes them, bit for bit.

JAX's samplers turn uniform floats into other distributions with erf_inv (normal,
truncated_normal), log1p (exponential) and log (gumbel, categorical). For xlapy's samples
to equal JAX's bit for bit these must round exactly as XLA's compiled code does, which
xlapy's own math library (accurate to a couple of ulp, with its own polynomials) does not.
This module reproduces XLA's f32 algorithms from basic IEEE operations, which every xlapy
backend (and the NumPy eager path) evaluates exactly:

  log(z)     Cephes' logf, as XLA's CPU math library: z = m * 2^e with m in [sqrt(1/2),
             sqrt(2)) (frexp by bit manipulation), x = m - 1,
             log z = x - x^2/2 + x^3 P(x) + e*ln2 (ln2 split in a high and a low part),
             P a degree-8 polynomial evaluated as three interleaved Horner chains; z <= 0
             gives NaN (all bits set), 0 gives -inf, inf stays inf, subnormals are clamped
             to the smallest normal.
  log1p(y)   for |y| < sqrt(2) - 1 a rational approximation (degree-6 polynomials, Cephes'
             log1p) y - y^2/2 + y^3 N(y)/D(y); otherwise log(1 + y).
  erf_inv(x) Giles' single-precision approximation ("Approximating the erfinv function",
             2010): w = -log1p(-x^2); for w < 5 a degree-8 polynomial in w - 2.5, else one
             in sqrt(w) - 3; times x; +-inf at |x| = 1.

XLA compiles with LLVM allowed to contract a multiply feeding an add into one fused
multiply-add (one rounding instead of two), and LLVM does so wherever the product has no
other use. The same contractions are made here, explicitly: `fma` computes a*b + c with a
single rounding through f64, where the product of two f32 values is exact. Rounding the f64
sum to f32 can differ from a single rounding when the sum lands exactly halfway between
two f32 values (double rounding); `fma` corrects that case (round to odd: 53 >= 24 + 2
bits), `fma_fast` does not. The normal sampler uses `fma_fast`: its f32 input takes only
2^23 values, and tests/random checks all of them against JAX. The f64 steps run with
64-bit types enabled for their few operations (enable_x64), whatever the user's setting:
otherwise f64 would be canonicalized to f32 and the emulation would round twice.
"""

from __future__ import annotations

import numpy as np

from xlapy import lax as L
from xlapy.config import enable_x64
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.bitcast import bitcast_convert_type

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
U32, I32, U64 = np.dtype(np.uint32), np.dtype(np.int32), np.dtype(np.uint64)


def f32_bits(bits: int) -> float:
    """The f32 with the given bit pattern, as a Python float (exactly)."""
    return float(np.array(bits, U32).view(F32))


def const(like, value, dtype=None):
    a = B.aval_of(like)
    return B.full(a.shape, value, a.dtype if dtype is None else dtype)


def fma_fast(a, b, c):
    """a*b + c rounded once, except in the rare double-rounding case (see the module doc)."""
    with enable_x64(True):
        return _fma_fast(a, b, c)


def _fma_fast(a, b, c):
    s = L.add(L.mul(B.convert(a, F64), B.convert(b, F64)), B.convert(c, F64))
    return B.convert(s, F32)


def fma(a, b, c):
    """a*b + c with a single rounding to f32 (for finite a, b, c)."""
    with enable_x64(True):
        return _fma(a, b, c)


def _fma(a, b, c):
    p = L.mul(B.convert(a, F64), B.convert(b, F64))            # exact
    c64 = B.convert(c, F64)
    s = L.add(p, c64)
    # error of the f64 sum (Knuth's TwoSum): p + c = s + e exactly
    bb = L.sub(s, p)
    e = L.add(L.sub(p, L.sub(s, bb)), L.sub(c64, bb))
    # round s to odd: an inexact s with an even last bit moves one ulp towards p + c
    bits = bitcast_convert_type(s, U64)
    even = L.eq(L.bitwise_and(bits, 1), const(bits, 0))
    inexact = L.ne(e, const(e, 0.0))
    away = L.eq(L.gt(e, const(e, 0.0)), L.gt(s, const(s, 0.0)))
    nudged = L.select(away, L.add(bits, 1), L.sub(bits, 1))
    bits = L.select(L.bitwise_and(even, inexact), nudged, bits)
    return B.convert(bitcast_convert_type(bits, F64), F32)


def _select_const(pred, a: float, b: float):
    return L.select(pred, const(pred, a, F32), const(pred, b, F32))


# Cephes' logf: P(x) split in three interleaved Horner chains of three coefficients each
_LOG_P = ((0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A), (0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50),
          (0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))
_SQRT_HALF = 0x3F3504F3
_LN2_LO, _LN2_HI = 0xB95E8083, 0x3F318000
_MIN_NORMAL = 0x00800000


def log(z, fma_fn=fma):
    """XLA's f32 natural logarithm."""
    tiny = f32_bits(_MIN_NORMAL)
    zc = L.select(L.gt(z, const(z, tiny)), z, const(z, tiny))
    bits = bitcast_convert_type(zc, U32)
    e = L.add(B.convert(L.sub(B.convert(L.shift_right_logical(bits, 23), I32), 127), F32), 1.0)
    m = bitcast_convert_type(L.bitwise_or(L.bitwise_and(bits, 0x807FFFFF), 0x3F000000), F32)
    small = L.lt(m, const(m, f32_bits(_SQRT_HALF)))                  # m < sqrt(1/2): use 2m
    x = L.add(L.sub(m, 1.0), L.select(small, m, const(m, 0.0)))
    e = L.sub(e, L.select(small, const(e, 1.0), const(e, 0.0)))
    x2 = L.mul(x, x)
    x3 = L.mul(x2, x)
    chains = []
    for c0, c1, c2 in _LOG_P:
        p = fma_fn(x, const(x, f32_bits(c0)), const(x, f32_bits(c1)))
        chains.append(fma_fn(p, x, const(x, f32_bits(c2))))
    q = fma_fn(chains[0], x3, chains[1])
    q = fma_fn(q, x3, chains[2])
    r = fma_fn(q, x3, L.mul(e, f32_bits(_LN2_LO)))
    t = fma_fn(x2, const(x2, -0.5), x)
    out = fma_fn(e, const(e, f32_bits(_LN2_HI)), L.add(t, r))
    # special values, with XLA's bit patterns: NaN (all bits set) below zero, -inf at zero
    zero, inf = const(z, 0.0), const(z, np.inf)
    not_zero, not_inf = L.ne(z, zero), L.ne(z, inf)
    u = lambda v: const(z, v, U32)
    edge = L.select(not_zero, L.select(not_inf, u(0), u(0x7F800000)), u(0xFF800000))
    body = L.select(L.bitwise_not(L.gt(z, zero)), u(0xFFFFFFFF), bitcast_convert_type(out, U32))
    body = L.select(L.bitwise_and(not_zero, not_inf), body, u(0))
    return bitcast_convert_type(L.bitwise_or(edge, body), F32)


# Cephes' log1p for small |y|: y - y^2/2 + y^3 N(y)/D(y)
_LOG1P_N = (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD, 0x41A05101)
_LOG1P_D = (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A, 0x42707982)
_LOG1P_N0 = 4.527e-05
_LOG1P_SMALL = 0x3ED413CD  # sqrt(2) - 1


def log1p(y, fma_fn=fma):
    """XLA's f32 log(1 + y)."""
    large = log(L.add(y, 1.0), fma_fn)
    y2 = L.mul(y, y)
    y0 = L.mul(y, 0.0)  # XLA's polynomials start from y * 0 (NaN and inf propagate)
    d = L.add(y0, 1.0)
    for c in _LOG1P_D:
        d = fma_fn(d, y, const(y, f32_bits(c)))
    n = L.add(y0, float(np.float32(_LOG1P_N0)))
    for c in _LOG1P_N:
        n = fma_fn(n, y, const(y, f32_bits(c)))
    small = L.add(y, fma_fn(y2, const(y2, -0.5), L.mul(L.mul(y, y2), L.div(n, d))))
    return L.select(L.lt(L.abs(y), const(y, f32_bits(_LOG1P_SMALL))), small, large)


# Giles' erfinv: coefficient pairs (w < 5, w >= 5), highest degree first
_ERFINV = ((0x32F16588, 0xB951F09B), (0x34B84B36, 0x38D3B56B), (0xB66C7357, 0x3AB0DC72),
           (0xB6935AC1, 0xBB70BDE7), (0x396532DB, 0x3BBC127B), (0xBAA45408, 0xBBF9C5D7),
           (0xBB88E4EF, 0x3C1AA57E), (0x3E7C8F63, 0x3F8036DB), (0x3FC02E2F, 0x40354F7E))


def erf_inv(x, fma_fn=fma):
    """XLA's f32 inverse error function."""
    w = L.neg(log1p(L.mul(x, L.neg(x)), fma_fn))
    central = L.lt(w, const(w, 5.0))
    t = L.select(central, L.sub(w, 2.5), L.sub(L.sqrt(w), 3.0))
    p = _select_const(central, *map(f32_bits, _ERFINV[0]))
    for lo, hi in _ERFINV[1:]:
        p = fma_fn(p, t, _select_const(central, f32_bits(lo), f32_bits(hi)))
    p = L.select(L.eq(L.abs(x), const(x, 1.0)), const(x, np.inf), p)
    return L.mul(x, p)


# erf: x * N(x^2) / D(x^2) on [-c, c], +-1 beyond (XLA emits these multiply-adds as fma)
_ERF_CLAMP = 0x406F9C68
_ERF_N = (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA)
_ERF_D = (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A, 0x3F800000)


def erf(x, fma_fn=fma):
    """XLA's f32 error function."""
    c = f32_bits(_ERF_CLAMP)
    big = L.ge(L.abs(x), const(x, c))
    sign = L.select(L.lt(x, const(x, 0.0)), const(x, -1.0), const(x, 1.0))
    xc = L.min(L.max(x, const(x, -c)), const(x, c))
    x2 = L.mul(xc, xc)
    n = fma_fn(x2, const(x2, f32_bits(_ERF_N[0])), const(x2, f32_bits(_ERF_N[1])))
    for k in _ERF_N[2:]:
        n = fma_fn(n, x2, const(x2, f32_bits(k)))
    d = fma_fn(x2, const(x2, f32_bits(_ERF_D[0])), const(x2, f32_bits(_ERF_D[1])))
    for k in _ERF_D[2:]:
        d = fma_fn(d, x2, const(x2, f32_bits(k)))
    return L.select(big, sign, L.div(L.mul(xc, n), d))


# Giles' double-precision erfinv: three ranges of w = -log(1 - x^2), highest degree first
_ERFINV64 = (
    (6.25, 3.125, False, (
        -3.64441206401782e-21, -1.6850591381820166e-19, 1.28584807152564e-18,
        1.1157877678025181e-17, -1.333171662854621e-16, 2.0972767875968562e-17,
        6.637638134358324e-15, -4.054566272975207e-14, -8.151934197605472e-14,
        2.6335093153082323e-12, -1.2975133253453532e-11, -5.415412054294628e-11,
        1.0512122733215323e-09, -4.112633980346984e-09, -2.9070369957882005e-08,
        4.2347877827932404e-07, -1.3654692000834679e-06, -1.3882523362786469e-05,
        0.00018673420803405714, -0.000740702534166267, -0.006033670871430149,
        0.24015818242558962, 1.6536545626831027)),
    (16.0, 3.25, True, (
        2.2137376921775787e-09, 9.075656193888539e-08, -2.7517406297064545e-07,
        1.8239629214389228e-08, 1.5027403968909828e-06, -4.013867526981546e-06,
        2.9234449089955446e-06, 1.2475304481671779e-05, -4.7318229009055734e-05,
        6.828485145957318e-05, 2.4031110387097894e-05, -0.0003550375203628475,
        0.0009532893797373805, -0.0016882755560235047, 0.002491442096107851,
        -0.003751208507569241, 0.005370914553590064, 1.0052589676941592,
        3.0838856104922208)),
    (np.inf, 5.0, True, (
        -2.7109920616438573e-11, -2.555641816996525e-10, 1.5076572693500548e-09,
        -3.789465440126737e-09, 7.61570120807834e-09, -1.496002662714924e-08,
        2.914795345090108e-08, -6.771199775845234e-08, 2.2900482228026655e-07,
        -9.9298272942317e-07, 4.526062597223154e-06, -1.968177810553167e-05,
        7.599527703001776e-05, -0.00021503011930044477, -0.00013871931833623122,
        1.0103004648645344, 4.849906401408584)),
)


def erf_inv_f64(x):
    """f64 inverse error function: Giles' double-precision polynomials, as XLA evaluates
    them but with xlapy's log1p and without XLA's fused multiply-adds (so within a few ulp
    of JAX's f64 values, not always equal)."""
    w = L.neg(L.log1p(L.mul(x, L.neg(x))))
    sw = L.sqrt(w)
    result = None
    for bound, shift, use_sqrt, coeffs in reversed(_ERFINV64):
        t = L.sub(sw if use_sqrt else w, shift)
        p = const(t, coeffs[0])
        for c in coeffs[1:]:
            p = L.add(L.mul(p, t), c)
        result = p if result is None else L.select(L.lt(w, const(w, bound)), p, result)
    result = L.select(L.eq(L.abs(x), const(x, 1.0)), const(x, np.inf), result)
    return L.mul(x, result)
