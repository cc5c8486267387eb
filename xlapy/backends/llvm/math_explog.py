"""exp, expm1, log, log1p, tanh, logistic and pow.

Kernels (`_exp`, `_expm1`, `_log_parts`, ...) emit straight-line IR and leave NaN and the other
special inputs to the registered wrappers, which fix them with selects at the end.

exp:   n = rint(x/ln2), r = x - n*ln2 (Cody-Waite, ln2 split so n*ln2_hi is exact),
       exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2, result = p * 2^(n/2) * 2^(n - n/2): the first
       product is exact and the second rounds once, so subnormal results are correctly scaled.
expm1: same reduction; expm1(x) = 2^k expm1(r) + (2^k - 1) (exact scalings, one rounding).
log:   x = 2^e (1+f), 1+f in [sqrt(1/2), sqrt(2)); f32: log(1+f) = f - f^2/2 + f^3 P(f);
       f64: fdlibm's form with s = f/(2+f). Subnormal x is scaled by 2^24 / 2^54 first.
log1p: u = 1+x, log1p(x) = log(u) + (x - (u-1))/u (the rounding error of u, first order).
tanh:  |x| < 0.55: x + x^3 T(x^2); beyond, t = expm1(2|x|), tanh = sign(x) * t/(t+2).
logistic: e = exp(-|x|); 1/(1+e) for x >= 0, e/(1+e) for x < 0 (never overflows).
pow:   f32 inputs: exp(y*log|x|) in double precision. f64: log|x| as a double-double (~2^-66),
       y*log|x| as a double-double, exp of a double-double. C99 special cases by selects.
"""
from .math_coeffs import COEFFS, CONSTS
from .math_ir import F64, Ctx, register

LOG2E = 1.4426950408889634
INF = float('inf')
NAN = float('nan')
# x86's default NaN, which XLA:CPU's f32 log and log1p give for negative arguments (sign
# set: a TOTALORDER compare or a sort sees the difference); its f64 ones give a positive NaN
# there, and f64 log1p passes a NaN argument through (measured, jaxlib 0.10.2)
NEG_NAN = -float('nan')


def _domain_nan(c):
    """The NaN XLA:CPU's log and log1p give for an argument outside their domain."""
    return NEG_NAN if c.f32 else NAN


def _ln2(c):
    return CONSTS['ln2_f32'] if c.f32 else CONSTS['ln2_f64']


def _clamp(c, x, lo, hi):
    """min(max(x, lo), hi); NaN becomes lo (callers restore NaN at the end)."""
    x = c.select(x.ge(lo), x, lo)
    return c.select(x.le(hi), x, hi)


def _exp(c, x, xlo=None):
    """exp(x [+ xlo]) for non-NaN x; xlo (f64 only) is a small low-order addend."""
    lo, hi = (-104.0, 89.0) if c.f32 else (-746.0, 710.0)
    l2h, l2l = _ln2(c)
    xc = _clamp(c, x, lo, hi)
    n = c.rint(xc * LOG2E)
    r = c.fma(n, -l2h, xc)                    # exact: n*l2h is exact and cancels with xc
    if c.f32:
        r = c.fma(n, -l2l, r)
        p = c.fma(r * r, c.horner(r, COEFFS['exp_f32'][0]), r) + 1.0
    else:
        t = n * l2l
        rh = r - t
        rl = (r - rh) - t                      # rounding error of rh
        if xlo is not None:
            rl = rl + c.select(x.eq(xc), xlo, 0.0)
        ps = c.fma(rh * rh, c.horner(rh, COEFFS['exp_f64'][0]), rh)   # expm1(rh)
        p = (ps + c.fma(rl, ps, rl)) + 1.0      # exp(rh + rl) ~ (1 + ps)(1 + rl)
    return c.ldexp_split(p, c.to_int(n))


def _expm1(c, x):
    """expm1(x) for non-NaN x, except that expm1(-0) returns +0."""
    lo, hi, emax = (-30.0, 89.0, 127) if c.f32 else (-60.0, 710.0, 1023)
    l2h, l2l = _ln2(c)
    xc = _clamp(c, x, lo, hi)
    k = c.rint(xc * LOG2E)
    r = c.fma(k, -l2h, xc)                    # exact
    if c.f32:
        r = c.fma(k, -l2l, r)
        p = c.fma(r * r, c.fma(r, c.horner(r, COEFFS['expm1_f32'][0]), 0.5), r)
    else:
        t = k * l2l
        rh = r - t
        rl = (r - rh) - t
        p = c.fma(rh * rh, c.fma(rh, c.horner(rh, COEFFS['expm1_f64'][0]), 0.5), rh)
        p = c.fma(rl, p + 1.0, p)               # expm1(rh + rl) ~ p + rl * exp(rh)
    ki = c.to_int(k)
    kk = c.select(ki.gt(emax), c.iconst(emax), ki)   # 2^k must stay finite: k = emax+1 is split
    tk = c.pow2i(kk)
    # 2^k * p is exact; 2^k - 1 is exact for -24 <= k <= 24 (f32) and rounds harmlessly beyond
    return c.fma(tk, p, tk - 1.0) * c.pow2i(ki - kk)


def _log_parts(c, x):
    """x = 2^e * (1 + f) with 1+f in [sqrt(1/2), sqrt(2)) for finite x > 0; returns (e, f)
    floats."""
    if c.f32:
        scale, sbits, k = 2.0 ** 24, 24, 0x3F3504F3      # bits of sqrt(1/2)
        mask, tiny = 0x7FFFFF, 2.0 ** -126
    else:
        scale, sbits, k = 2.0 ** 54, 54, 0x3FE6A09E667F3BCD
        mask, tiny = 0xFFFFFFFFFFFFF, 2.0 ** -1022
    sub = x.lt(tiny)
    xs = c.select(sub, x * scale, x)
    ix = c.bits(xs) - k
    e = (ix >> c.mant_bits) - c.select(sub, c.iconst(sbits), c.iconst(0))
    m = c.from_bits((ix & mask) + k)
    return c.to_float(e), m - 1.0


def _log1p_f(c, f, corr=None):
    """log(1+f) for f in [sqrt(1/2)-1, sqrt(2)-1] (+ a tiny additive correction), f32 only."""
    t = f * f
    tail = t * c.fma(f, c.horner(f, COEFFS['log_f32'][0]), -0.5)
    if corr is not None:
        tail = tail + corr
    return f + tail


def _log(c, x, corr=None):
    """log(x) [+ corr] for finite x > 0."""
    e, f = _log_parts(c, x)
    l2h, l2l = _ln2(c)
    if c.f32:
        return c.fma(e, l2h, c.fma(e, l2l, _log1p_f(c, f, corr)))
    # fdlibm: log(1+f) = f - hfsq + s*(hfsq + R), s = f/(2+f), R = z*P(z), z = s^2
    s = f / (f + 2.0)
    z = s * s
    R = z * c.horner(z, COEFFS['log_f64'][0])
    hfsq = 0.5 * f * f
    lo = e * l2l if corr is None else c.fma(e, l2l, corr)
    return e * l2h - ((hfsq - c.fma(s, hfsq + R, lo)) - f)


def _log_specials(c, x, res):
    res = c.select(x.lt(0.0), _domain_nan(c), res)
    res = c.select(x.eq(0.0), -INF, res)
    res = c.select(x.eq(INF), INF, res)
    return c.select(c.isnan(x), x, res)


@register('exp')
def exp(c, x):
    return c.select(c.isnan(x), x, _exp(c, x))


@register('expm1')
def expm1(c, x):
    res = _expm1(c, x)
    # keeps the sign of zero; a subnormal x compares equal to zero with denormals flushed
    # and gives a zero of its sign then (XLA gives the subnormal itself in some fusions and
    # a zero in others: xlapy flushes, as its compiled code does everywhere)
    res = c.select(x.eq(0.0), c.copysign(0.0, x), res)
    return c.select(c.isnan(x), x, res)


@register('log')
def log(c, x):
    return _log_specials(c, x, _log(c, x))


@register('log1p')
def log1p(c, x):
    u = x + 1.0
    corr = (x - (u - 1.0)) / u                # rounding error of u, to first order
    res = _log(c, u, corr)
    # a subnormal x compares equal to zero with denormals flushed: XLA's log1p gives a zero
    # of its sign then (the select must not pass the subnormal through, expm1 does)
    res = c.select(x.eq(0.0), c.copysign(0.0, x), res)
    res = c.select(x.lt(-1.0), _domain_nan(c), res)
    res = c.select(x.eq(-1.0), -INF, res)
    res = c.select(x.eq(INF), INF, res)
    # XLA's f32 log1p of any NaN has its sign set; its f64 one is the NaN argument
    return c.select(c.isnan(x), NEG_NAN if c.f32 else x, res)


@register('tanh')
def tanh(c, x):
    big = 10.0 if c.f32 else 20.0             # tanh(big) rounds to 1
    ax = c.fabs(x)
    z = x * x
    small = c.fma(z * x, c.horner(z, COEFFS['tanh_' + ('f32' if c.f32 else 'f64')][0]), x)
    ax = c.select(ax.lt(big), ax, big)
    if c.f32:
        # |x| >= 0.55: tanh = 1 - 2 / (exp(2|x|) + 1); exp's argument is in [1.1, 20], so
        # 2^n needs no overflow or subnormal care (cheaper than expm1, same accuracy here)
        y = ax + ax
        n = c.rint(y * LOG2E)
        l2h, l2l = _ln2(c)
        r = c.fma(n, -l2l, c.fma(n, -l2h, y))
        e = c.fma(r * r, c.horner(r, COEFFS['exp_f32'][0]), r) + 1.0
        e = e * c.pow2i(c.to_int(n))
        big_res = 1.0 - 2.0 / (e + 1.0)
    else:
        t = _expm1(c, ax + ax)
        big_res = t / (t + 2.0)
    res = c.select(ax.lt(0.55), small, c.copysign(big_res, x))
    res = c.select(x.eq(0.0), c.copysign(0.0, x), res)   # tanh(-0) = -0 (a subnormal: as
    # expm1's)
    return c.select(c.isnan(x), x, res)


@register('logistic')
def logistic(c, x):
    e = _exp(c, -c.fabs(x))
    d = e + 1.0
    res = c.select(x.lt(0.0), e / d, 1.0 / d)
    return c.select(c.isnan(x), -x, res)  # XLA's 1 / (1 + exp(-x)): the NaN's sign flipped


# ---------------------------------------------------------------------------------------- pow

def _log_dd(c, ax):
    """log(ax) as a double-double (relative error ~2^-66) for finite ax > 0 (f64)."""
    e, f = _log_parts(c, ax)
    d = f + 2.0
    dl = (2.0 - d) + f                         # 2+f = d + dl exactly
    sh = f / d
    sl = (c.fma_exact(-sh, d, f) - sh * dl) / d   # s = f/(2+f) = sh + sl
    q, ql = c.two_prod(sh, sh)
    s3, s3l = c.two_prod(q, sh)
    s3l = s3l + (ql * sh + 3.0 * q * sl)       # s^3 = s3 + s3l
    c23h, c23l = 2.0 / 3.0, 3.700743415417188e-17   # 2/3 as a double-double
    th, tl = c.two_prod(s3, c23h)
    tl = tl + (s3 * c23l + s3l * c23h)         # (2/3) s^3 = th + tl
    tail = s3 * q * c.horner(q, COEFFS['logdd_f64'][0])   # s^5 P(z)
    lnh, lnl = CONSTS['ln2_dd']
    eh, el = c.two_prod(e, lnh)
    a, ae = c.two_sum(eh, sh + sh)
    a, be = c.two_sum(a, th)
    lo = ae + be + (el + e * lnl) + (sl + sl) + tl + tail
    return c.fast_two_sum(a, lo)


def _pow_specials(c, x, y, r):
    """C99 pow special cases around r = |x|^y (r must already be NaN when x or y is)."""
    yint = c.trunc(y).eq(y)                   # true for +-inf (an even integer for C)
    yh = y * 0.5
    yodd = yint & c.trunc(yh).ne(yh)
    xsign = c.bits(x).lt(0)                   # sign bit: -0 and -inf count as negative
    r = c.select(xsign & yodd, -r, r)
    bad = x.lt(0.0) & x.gt(-INF) & ~yint & c.isfinite(y)   # negative ** non-integer
    r = c.select(bad, NEG_NAN, r)  # x86's default NaN, as glibc's pow and XLA give it
    r = c.select(c.isnan(y), y, r)            # a NaN operand passes through, x's first
    r = c.select(c.isnan(x), x, r)            # (as XLA: pow(-NaN, 0.5) is -NaN)
    r = c.select(c.fabs(x).eq(1.0) & c.isinf(y), 1.0, r)  # (-1) ** +-inf = 1
    r = c.select(x.eq(1.0), 1.0, r)           # 1 ** y = 1, even for NaN y
    return c.select(y.eq(0.0), 1.0, r)        # x ** 0 = 1, even for NaN x


@register('pow', 2)
def pow(c, x, y):
    if c.f32:
        d = Ctx(c.b, F64)
        xd, yd = c.ext(x), c.ext(y)
        ax = d.fabs(xd)
        lg = _log_specials(d, ax, _log(d, ax))
        z = yd * lg
        r = d.select(d.isnan(z), z, _exp(d, z))
        return _pow_specials(c, x, y, c.narrow(r))
    ax = c.fabs(x)
    lh, ll = _log_dd(c, ax)
    lh = _log_specials(c, ax, lh)
    ll = c.select(c.isfinite(lh), ll, 0.0)
    zh, zl = c.two_prod(y, lh)
    zl = c.fma(y, ll, zl)
    zl = c.select(c.isfinite(zh), zl, 0.0)
    r = c.select(c.isnan(zh), zh, _exp(c, zh, zl))
    return _pow_specials(c, x, y, r)
