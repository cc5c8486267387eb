"""erf, cbrt, sqrt, rsqrt.

erf:  |x| < 1: erf(x) = x + x * E(x^2); 1 <= |x| < b: erf = 1 - exp(Q(|x| - 1)), where Q fits
      log(erfc) with the error weighted as erf's (so Q only needs to be sharp near x = 1);
      beyond b (3.95 for f32, 5.95 for f64) erf rounds to +-1. Pure f32 for float.
cbrt: |x| = 2^(3q + rem) * m, m in [1, 2): a polynomial seed for cbrt(m), times 2^(rem/3),
      then one Halley step (cubic convergence: 2^-17 -> 2^-50, 2^-20 -> 2^-58); f64 computes
      the residual y^3 - t exactly with FMA. Floats are computed in double precision.
"""
from .math_coeffs import COEFFS
from .math_explog import _exp
from .math_ir import F64, Ctx, register

NAN = float('nan')


@register('erf')
def erf(c, x):
    sfx = 'f32' if c.f32 else 'f64'
    b = 3.95 if c.f32 else 5.95
    ax = c.fabs(x)
    small = c.fma(x, c.horner(ax * ax, COEFFS['erf_small_' + sfx][0]), x)   # odd: keeps -0
    t = c.select(ax.lt(b), ax, b) - 1.0        # NaN -> b (fixed below)
    big = 1.0 - _exp(c, c.horner(t, COEFFS['erf_large_' + sfx][0]))
    res = c.select(ax.lt(1.0), small, c.copysign(big, x))
    return c.select(c.isnan(x), x, res)


def _cbrt_abs(d, ax, seed):
    """cbrt(ax) in double for finite ax > 0 (d is a double-precision Ctx)."""
    sub = ax.lt(2.0 ** -1022)
    xs = d.select(sub, ax * 2.0 ** 54, ax)
    bits = d.bits(xs)
    ef = d.to_float(bits.lshr(52) - 1023) - d.select(sub, 54.0, 0.0)
    m = d.from_bits((bits & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000)   # [1, 2)
    q = d.floor(ef / 3.0)                      # exact: ef is a small integer
    rem = ef - 3.0 * q                         # 0, 1 or 2
    t = m * d.select(rem.eq(0.0), 1.0, d.select(rem.eq(1.0), 2.0, 4.0))
    y = d.horner(m, COEFFS[seed][0])
    y = y * d.select(rem.eq(0.0), 1.0, d.select(rem.eq(1.0), 2.0 ** (1 / 3), 2.0 ** (2 / 3)))
    if seed == 'cbrt_f64':
        a, al = d.two_prod(y, y)
        y3, y3l = d.two_prod(a, y)
        y3l = d.fma(al, y, y3l)
        res = (y3 - t) + y3l                   # y^3 - t, y3 - t is exact (Sterbenz)
        y = y - y * res / (2.0 * y3 + t)       # Halley
    else:
        y3 = y * y * y
        y = y - y * (y3 - t) / (2.0 * y3 + t)
    return y * d.pow2i(d.to_int(q))


def _cbrt_specials(c, x, res):
    res = c.select(c.isfinite(x) & x.ne(0.0), res, x + x)   # 0, inf, nan map to themselves
    return res


@register('cbrt')
def cbrt(c, x):
    if c.f32:
        d = Ctx(c.b, F64)
        xd = c.ext(x)
        ax = d.fabs(xd)
        r = c.narrow(d.copysign(_cbrt_abs(d, ax, 'cbrt_f32d'), xd))
    else:
        r = c.copysign(_cbrt_abs(c, c.fabs(x), 'cbrt_f64'), x)
    return _cbrt_specials(c, x, r)


@register('sqrt')
def sqrt(c, x):
    return c.sqrt(x)


@register('rsqrt')
def rsqrt(c, x):
    return 1.0 / c.sqrt(x)     # correctly rounded sqrt, then one rounding of the division
