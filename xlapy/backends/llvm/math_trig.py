"""sin, cos, tan, atan2.

Argument reduction (branch-free Payne-Hanek for every |x| >= pi/4, so the whole finite range
is exact up to the final roundings; |x| < pi/4 skips the reduction):

  |x| = M * 2^E (M an integer of p = 24 or 53 bits). Bits b_j (weight 2^-j) of 2/pi with
  E - j >= 2 only add multiples of 4 to |x|*2/pi, so the product starts at bit j0 = E - 1.
  A table row holds the next bits of 2/pi as 4 chunks; the exact partial products |x|*C_i
  (f32: 24-bit chunks, exact in double; f64: 53-bit chunks, exact as FMA two-products) are
  summed from the top with the integer part removed (mod 4 -> quadrant q) at each step, so
  the fraction F of |x|*2/pi keeps full relative precision even when |F| is tiny (~2^-62 for
  the worst double). r = F*pi/2 (a double-double for f64), |r| <= pi/4.
  f32 rows are indexed by j0 directly (130 rows); f64 rows by j0 rounded down to a multiple
  of 8 (129 rows), the remaining 0..7 bits shift |x|'s scaled mantissa instead.

sin/cos kernels on [-pi/4, pi/4]: fdlibm's formulation with our own minimax coefficients;
tan = sin/cos (f64: within ~2 ulp). Floats are computed in double precision throughout.

atan2: a = min(|y|,|x|), b = max; t = a/b; t > tan(pi/12) is reduced with
atan(a/b) = pi/6 + atan((a*sqrt3 - b)/(a + b*sqrt3)); the quadrant and octant give
atan2 = C + s*atan(t') with C = k*pi/6 (a double-double from a 7-entry table) and s = +-1;
the sign of y is applied last (C99 signed-zero and infinity semantics).
"""
import math

from .math_coeffs import COEFFS, CONSTS
from .math_ir import F64, I32, I64, Ctx, register

NAN = float('nan')
_BITS = int(CONSTS['two_over_pi_hex'], 16)     # 2/pi = _BITS / 2^NB
_NB = len(CONSTS['two_over_pi_hex']) * 4


def _chunk(j0, width):
    """The integer formed by bits j0 .. j0+width-1 of 2/pi (bits j <= 0 are zero)."""
    v = 0
    for j in range(j0, j0 + width):
        v = 2 * v + ((_BITS >> (_NB - j)) & 1 if j >= 1 else 0)
    return v


def _f32_table():
    # row for j0 in [-26, 103]: chunk i = bits j0+24i .. j0+24i+23, value sum b_j 2^-j
    rows = []
    for j0 in range(-26, 104):
        rows += [math.ldexp(_chunk(j0 + 24 * i, 24), -(j0 + 24 * i + 23)) for i in range(4)]
    return rows


def _f64_table():
    # row k for j0' = 8k - 56: chunk i (53 bits) scaled by 2^(j0'+54): value in [0, 2^55)
    rows = []
    for k in range(129):
        j0 = 8 * k - 56
        rows += [math.ldexp(_chunk(j0 + 53 * i, 53), -(j0 + 53 * i + 52) + j0 + 54)
                 for i in range(4)]
    return rows


def _reduce_f32(d, ax, xf):
    """|x| (double holding a float, xf the float's V) -> (r, q): |x| = q*pi/2 + r, |r| <= pi/4."""
    tab = d.table('xlapy.two_over_pi.f32', _f32_table(), F64)
    be = (d.bits(xf).lshr(23)) & 0xFF
    j0 = be - 151
    j0 = d.select(j0.lt(-26), d.const(-26, j0.type), j0)
    base = d.sext(j0 + 26, I64) * 4
    C = [d.load(tab, base + i) for i in range(4)]
    p0 = ax * C[0]                              # exact products (24 x 24 bits)
    n0 = d.rint(p0)
    s = (p0 - n0) + ax * C[1]                   # exact: at most 49 significant bits
    n1 = d.rint(s)
    f = (s - n1) + (ax * C[2] + ax * C[3])
    qf = d.select(d.isfinite(p0), n0 + n1, 0.0)  # inf/nan input: keep fptosi defined
    q = d.to_int(qf, I32) & 3                   # |n0 + n1| < 2^27
    return f * CONSTS['pio2_dd'][0], q


def _reduce_f64(c, ax):
    """|x| -> (rh, rl, q): |x| = q*pi/2 + rh + rl for finite |x| >= pi/4 (double-double r)."""
    tab = c.table('xlapy.two_over_pi.f64', _f64_table(), F64)
    bits = c.bits(ax)
    be = bits.lshr(52)
    j0 = be - 1076
    j0 = c.select(j0.lt(-54), c.iconst(-54), j0)
    k = (j0 + 56) >> 3
    shift = j0 + 56 - (k << 3)                  # 0..7
    xs = c.from_bits((bits & 0xFFFFFFFFFFFFF) | ((shift + 1022) << 52))   # |x| * 2^-(j0'+54)
    base = k * 4
    T = [c.load(tab, base + i) for i in range(4)]
    h0, l0 = c.two_prod(xs, T[0])
    h1, l1 = c.two_prod(xs, T[1])
    h2, l2 = c.two_prod(xs, T[2])
    h3 = xs * T[3]
    n0 = c.rint(h0)
    q0 = n0 - 4.0 * c.floor(n0 * 0.25)          # n0 mod 4, exact
    m0 = c.rint(l0)
    s1 = (h0 - n0) + (l0 - m0)                  # exact, |s1| <= 1
    s2, e2 = c.two_sum(s1, h1)
    n2 = c.rint(s2)
    s2 = s2 - n2
    a, ea = c.two_sum(e2, l1)
    b, eb = c.two_sum(a, h2)
    fh, fl = c.two_sum(s2, b)
    fl = fl + (((ea + eb) + l2) + h3)
    fh, fl = c.fast_two_sum(fh, fl)
    qf = c.select(c.isfinite(h0), q0 + m0 + n2, 0.0)   # inf/nan input: keep fptosi defined
    q = c.to_int(qf) & 3
    ph, pl = CONSTS['pio2_dd']
    rh = fh * ph
    rl = c.fma_exact(fh, ph, -rh) + (fh * pl + fl * ph)
    rh, rl = c.fast_two_sum(rh, rl)
    return rh, rl, q


def _sincos_f64(c, rh, rl):
    z = rh * rh
    S = c.horner(z, COEFFS['sin_f64'][0])
    s = rh + c.fma(z * rh, S, c.fma(-0.5 * z, rl, rl))
    C = c.horner(z, COEFFS['cos_f64'][0])
    hz = 0.5 * z
    w = 1.0 - hz
    co = w + (((1.0 - w) - hz) + c.fma(z * z, C, -(rh * rl)))
    return s, co


def _sincos_f32d(d, r):
    z = r * r
    s = d.fma(z * r, d.horner(z, COEFFS['sin_f32d'][0]), r)
    co = d.fma(z * z, d.horner(z, COEFFS['cos_f32d'][0]), 1.0 - 0.5 * z)
    return s, co


def _trig(c, x, which):
    """which: 'sin', 'cos' or 'tan'."""
    if c.f32:
        d = Ctx(c.b, F64)
        xd = c.ext(x)
        ax = d.fabs(xd)
        r, q = _reduce_f32(d, ax, x)
        small = ax.lt(math.pi / 4)
        r = d.select(small, ax, r)
        q = d.select(small, d.const(0, I32), q)
        s, co = _sincos_f32d(d, r)
        dc = d
    else:
        ax = c.fabs(x)
        rh, rl, q = _reduce_f64(c, ax)
        small = ax.lt(math.pi / 4)
        rh = c.select(small, ax, rh)
        rl = c.select(small, 0.0, rl)
        q = c.select(small, c.iconst(0), q)
        s, co = _sincos_f64(c, rh, rl)
        dc = c
    odd = (q & 1).ne(0)
    if which == 'sin':
        res = dc.select(odd, co, s)
        neg = (q & 2).ne(0)
    elif which == 'cos':
        res = dc.select(odd, s, co)
        neg = ((q + 1) & 2).ne(0)
    else:
        res = dc.select(odd, -co, s) / dc.select(odd, s, co)
        neg = None
    if neg is not None:
        res = dc.select(neg, -res, res)
    if c.f32:
        res = c.narrow(res)
    if which != 'cos':
        res = c.select(c.bits(x).lt(0), -res, res)   # odd function of x (keeps -0)
    # inf - inf is x86's default NaN (sign set) and NaN - NaN the NaN itself: what XLA's
    # sin, cos and tan give for them
    return c.select(c.isfinite(x), res, x - x)


@register('sin')
def sin(c, x):
    return _trig(c, x, 'sin')


@register('cos')
def cos(c, x):
    return _trig(c, x, 'cos')


@register('tan')
def tan(c, x):
    return _trig(c, x, 'tan')


def _atan2_abs(d, ay, ax, xneg, coeffs, precise):
    """atan2 of (|y|, x) in [0, pi] in double precision (d: double Ctx); xneg = sign bit of x.
    precise: carry the reduced argument as a double-double (f64; ~1 ulp instead of ~2)."""
    pi6k = [v for hl in CONSTS['pi6k_dd'] for v in hl]          # k*pi/6, k = 0..6
    tab = d.table('xlapy.atan2_offsets', pi6k + CONSTS['pio4_dd'] + CONSTS['pi3o4_dd'], F64)
    swap = ay.gt(ax)
    a = d.select(swap, ax, ay)
    b = d.select(swap, ay, ax)
    both_inf = d.isinf(a)                      # a = min(|y|, |x|) infinite: both are
    zero = a.eq(0.0) | both_inf
    t = d.select(zero, 0.0, a / b)             # 0/0 -> 0
    big = t.gt(0.2679491924311227)             # tan(pi/12)
    # t' = (a*sqrt3 - b) / (a + b*sqrt3) from a and b (not t: no rounding of t to inherit),
    # scaled by a power of 2 so that neither overflows nor loses bits to underflow
    sc = d.select(b.gt(2.0 ** 1000), 2.0 ** -600, d.select(b.lt(2.0 ** -900), 2.0 ** 600, 1.0))
    a_s, b_s = a * sc, b * sc
    s3h, s3l = CONSTS['sqrt3_dd']
    if precise:
        p, pl = d.two_prod(a_s, s3h)
        nh, nl = d.two_sum(p, -b_s)
        nl = nl + (pl + a_s * s3l)
        q, ql = d.two_prod(b_s, s3h)
        dh, dl = d.two_sum(q, a_s)
        dl = dl + (ql + b_s * s3l)
        th = nh / dh
        tl = (d.fma_exact(-th, dh, nh) + nl - th * dl) / dh
        tr = d.select(big, th, t)
        exact = zero | d.isinf(b)              # t = a/b is exact (or a is +-inf: NaN below)
        tl = d.select(big, tl, d.select(exact, 0.0, d.fma_exact(-t, b, a) / b))
    else:
        num = d.fma_exact(a_s, s3h, -b_s) + a_s * s3l
        tr = d.select(big, num / d.fma(b_s, s3h, a_s), t)
        tl = 0.0
    z = tr * tr
    tail = d.fma(z * tr, d.horner(z, COEFFS[coeffs][0]), tl)   # atan(tr + tl) - tr
    kb = d.select(big, d.iconst(1), d.iconst(0))
    # |y| > |x| ("swap") reflects about pi/4, x < 0 about pi/2:
    #   C + s*atan(t') with C = k*pi/6, s = +1 when swap == xneg
    k = d.select(swap, d.select(xneg, kb + 3, 3 - kb), d.select(xneg, 6 - kb, kb))
    k = d.select(both_inf, d.select(xneg, d.iconst(8), d.iconst(7)), k)   # 3pi/4 or pi/4
    sgn = d.select(swap ^ xneg, -1.0, 1.0)
    ch = d.load(tab, k * 2)
    cl = d.load(tab, k * 2 + 1)
    if not precise:
        return ch + d.fma(sgn, tr + tail, cl)
    r, re = d.two_sum(ch, sgn * tr)
    return r + (re + d.fma(sgn, tail, cl))


@register('atan2', 2)
def atan2(c, y, x):
    if c.f32:
        d = Ctx(c.b, F64)
        yd, xd = c.ext(y), c.ext(x)
        th = c.narrow(_atan2_abs(d, d.fabs(yd), d.fabs(xd), c.bits(x).lt(0), 'atan_f32d', False))
    else:
        th = _atan2_abs(c, c.fabs(y), c.fabs(x), c.bits(x).lt(0), 'atan_f64', True)
    res = c.copysign(th, y)
    return c.select(c.isnan(x) | c.isnan(y), x + y, res)
