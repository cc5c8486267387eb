"""Complex arithmetic on LLVM values: a complex number is a two-field struct {re, im} of
float (c64) or double (c128); see types.py. These helpers build the code of one complex
operation from the parts; the elemental rules (elemental_complex.py), dot/convolution
accumulation (elemental_reduce.py) and the FFT emitter use them.

Formulas (no fast-math; the parts are computed in the component type, as XLA:CPU does):
  multiply   (ac - bd) + (ad + bc)i
  divide     Smith's algorithm (scaled by the larger part of the divisor: no overflow of
             c^2 + d^2), what NumPy uses
  abs        hypot: m * sqrt(1 + (n/m)^2) with m = max(|re|, |im|), n = min; inf if either
             part is infinite (even with a NaN), 0 at 0
  exp        e^a (cos b + i sin b); b = 0 gives (e^a, b) exactly
  log        log|z| + i atan2(b, a), log|z| = log m + log1p((n/m)^2)/2 (no overflow)
  sqrt       t = sqrt((|a| + |z|) / 2): (t, b/2t) for a >= 0, (|b|/2t, copysign(t, b)) else
             (+t for b = -0, as XLA); scaled by 1/4 (result times 2) near overflow
  sin, cos   through cosh and sinh of the imaginary part (sinh from expm1: accurate near 0)
  tanh       (sinh 2a + i sin 2b) / (cosh 2a + cos 2b); +-1 + 0i for |a| > 20
  tan        -i tanh(iz)
  power      exp(y log x); 0^0 = 1, 0^y = 0 for real y > 0
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm.math import math_function


def parts(b: ir.IRBuilder, z):
    return b.extract_value(z, 0), b.extract_value(z, 1)


def make(b: ir.IRBuilder, re, im):
    ty = ir.LiteralStructType([re.type, re.type])
    return b.insert_value(b.insert_value(ir.Constant(ty, ir.Undefined), re, 0), im, 1)


def _c(x, v: float):
    return ir.Constant(x.type, v)


def _intr(b: ir.IRBuilder, name: str, *args):
    ty = args[0].type
    fn = b.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * len(args)))
    return b.call(fn, list(args))


def _math(b: ir.IRBuilder, name: str, *args):
    return b.call(math_function(b.module, name, args[0].type), list(args))


def add(b, x, y):
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, b.fadd(a, d), b.fadd(c, e))


def sub(b, x, y):
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, b.fsub(a, d), b.fsub(c, e))


def neg(b, x):
    a, c = parts(b, x)
    return make(b, b.fneg(a), b.fneg(c))


def mul(b, x, y):
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, b.fsub(b.fmul(a, d), b.fmul(c, e)), b.fadd(b.fmul(a, e), b.fmul(c, d)))


def scale(b, x, s):
    """x times the real number s."""
    a, c = parts(b, x)
    return make(b, b.fmul(a, s), b.fmul(c, s))


def div(b, x, y):
    """Smith's algorithm: (a + ci) / (d + ei)."""
    (a, c), (d, e) = parts(b, x), parts(b, y)
    small_e = b.fcmp_ordered("<=", _intr(b, "llvm.fabs", e), _intr(b, "llvm.fabs", d))
    # |e| <= |d|: r = e/d, den = d + e r, ((a + c r) + (c - a r) i) / den
    r1 = b.fdiv(e, d)
    den1 = b.fadd(d, b.fmul(e, r1))
    re1 = b.fdiv(b.fadd(a, b.fmul(c, r1)), den1)
    im1 = b.fdiv(b.fsub(c, b.fmul(a, r1)), den1)
    # else: r = d/e, den = d r + e, ((a r + c) + (c r - a) i) / den
    r2 = b.fdiv(d, e)
    den2 = b.fadd(b.fmul(d, r2), e)
    re2 = b.fdiv(b.fadd(b.fmul(a, r2), c), den2)
    im2 = b.fdiv(b.fsub(b.fmul(c, r2), a), den2)
    # a zero divisor: each part divided by +0 (inf or NaN, as NumPy gives)
    zero = b.and_(b.fcmp_ordered("==", d, _c(d, 0.0)), b.fcmp_ordered("==", e, _c(e, 0.0)))
    re0, im0 = b.fdiv(a, _intr(b, "llvm.fabs", d)), b.fdiv(c, _intr(b, "llvm.fabs", d))
    re = b.select(zero, re0, b.select(small_e, re1, re2))
    im = b.select(zero, im0, b.select(small_e, im1, im2))
    return make(b, re, im)


def abs_(b, x):
    a, c = parts(b, x)
    fa, fc = _intr(b, "llvm.fabs", a), _intr(b, "llvm.fabs", c)
    m, n = _intr(b, "llvm.maxnum", fa, fc), _intr(b, "llvm.minnum", fa, fc)
    q = b.fdiv(n, m)
    r = b.fmul(m, _intr(b, "llvm.sqrt", b.fadd(_c(m, 1.0), b.fmul(q, q))))
    inf = _c(a, float("inf"))
    any_inf = b.or_(b.fcmp_ordered("==", fa, inf), b.fcmp_ordered("==", fc, inf))
    any_nan = b.or_(b.fcmp_unordered("uno", a, a), b.fcmp_unordered("uno", c, c))
    r = b.select(b.fcmp_ordered("==", m, _c(m, 0.0)), _c(m, 0.0), r)
    r = b.select(any_nan, _c(a, float("nan")), r)
    return b.select(any_inf, inf, r)


def sign(b, x):
    a, c = parts(b, x)
    r = abs_(b, x)
    zero = b.fcmp_ordered("==", r, _c(r, 0.0))
    return make(b, b.select(zero, a, b.fdiv(a, r)), b.select(zero, c, b.fdiv(c, r)))


def exp(b, x):
    a, c = parts(b, x)
    ea = _math(b, "exp", a)
    real_only = b.fcmp_ordered("==", c, _c(c, 0.0))
    re = b.select(real_only, ea, b.fmul(ea, _math(b, "cos", c)))
    im = b.select(real_only, c, b.fmul(ea, _math(b, "sin", c)))
    return make(b, re, im)


def expm1(b, x):
    """e^z - 1 = (expm1(a) cos b - 2 sin^2(b/2)) + i e^a sin b."""
    a, c = parts(b, x)
    s = _math(b, "sin", b.fmul(c, _c(c, 0.5)))
    re = b.fsub(b.fmul(_math(b, "expm1", a), _math(b, "cos", c)), b.fmul(_c(s, 2.0), b.fmul(s, s)))
    im = b.fmul(_math(b, "exp", a), _math(b, "sin", c))
    real_only = b.fcmp_ordered("==", c, _c(c, 0.0))
    return make(b, b.select(real_only, _math(b, "expm1", a), re), b.select(real_only, c, im))


def log(b, x):
    """log|z| as log(m) + log1p((n/m)^2)/2 (m, n the larger and smaller |part|), so that
    |z| beyond the largest float does not overflow; non-finite and zero z through |z|."""
    a, c = parts(b, x)
    fa, fc = _intr(b, "llvm.fabs", a), _intr(b, "llvm.fabs", c)
    m, n = _intr(b, "llvm.maxnum", fa, fc), _intr(b, "llvm.minnum", fa, fc)
    q = b.fdiv(n, m)
    scaled = b.fadd(_math(b, "log", m), b.fmul(_c(m, 0.5), _math(b, "log1p", b.fmul(q, q))))
    ordinary = b.and_(b.fcmp_ordered(">", m, _c(m, 0.0)),
                      b.fcmp_ordered("<", m, _c(m, float("inf"))))
    re = b.select(ordinary, scaled, _math(b, "log", abs_(b, x)))
    return make(b, re, _math(b, "atan2", c, a))


def log1p(b, x):
    """log(1 + z): real part 0.5 log1p(a(2 + a) + b^2) for moderate z (accurate near 0),
    log|1 + z| otherwise."""
    a, c = parts(b, x)
    one = _c(a, 1.0)
    t = b.fadd(b.fmul(a, b.fadd(_c(a, 2.0), a)), b.fmul(c, c))
    near = b.fmul(_c(a, 0.5), _math(b, "log1p", t))
    far = _math(b, "log", abs_(b, make(b, b.fadd(one, a), c)))
    moderate = b.fcmp_ordered("<", _intr(b, "llvm.maxnum", _intr(b, "llvm.fabs", a),
                                           _intr(b, "llvm.fabs", c)), _c(a, 0.5))
    return make(b, b.select(moderate, near, far), _math(b, "atan2", c, b.fadd(one, a)))


def sqrt(b, x):
    a, c = parts(b, x)
    # |z| near the top of the range: sqrt(z) = 2 sqrt(z / 4), so |a| + |z| cannot overflow
    big = b.fcmp_ordered(">", _intr(b, "llvm.maxnum", _intr(b, "llvm.fabs", a),
                                     _intr(b, "llvm.fabs", c)),
                         _c(a, 2.0 ** (120 if a.type == ir.FloatType() else 1000)))
    k = b.select(big, _c(a, 0.25), _c(a, 1.0))
    x = make(b, b.fmul(a, k), b.fmul(c, k))
    re, im = _sqrt_parts(b, x, c)
    two = b.select(big, _c(a, 2.0), _c(a, 1.0))
    return make(b, b.fmul(re, two), b.fmul(im, two))


def _sqrt_parts(b, x, c0):
    a, c = parts(b, x)
    r = abs_(b, x)
    t = _intr(b, "llvm.sqrt", b.fmul(b.fadd(_intr(b, "llvm.fabs", a), r), _c(a, 0.5)))
    half = b.fdiv(c, b.fmul(t, _c(t, 2.0)))
    nonneg = b.fcmp_ordered(">=", a, _c(a, 0.0))
    re = b.select(nonneg, t, _intr(b, "llvm.fabs", half))
    # a negative real axis approached from -0i still gives +i sqrt|a|, as XLA's does
    im_neg = b.select(b.fcmp_ordered("==", c, _c(c, 0.0)), t, _intr(b, "llvm.copysign", t, c))
    im = b.select(nonneg, half, im_neg)
    zero = b.fcmp_ordered("==", r, _c(r, 0.0))
    inf_im = b.fcmp_ordered("==", _intr(b, "llvm.fabs", c), _c(c, float("inf")))
    re = b.select(zero, _c(a, 0.0), b.select(inf_im, _c(a, float("inf")), re))
    im = b.select(zero, c, b.select(inf_im, c, im))
    return re, im


def _cosh_sinh(b, y):
    """(cosh y, sinh y), from expm1(|y|): accurate near 0 and without the cancellation
    e^y = expm1(y) + 1 would suffer for negative y."""
    ay = _intr(b, "llvm.fabs", y)
    em1 = _math(b, "expm1", ay)
    ey = b.fadd(em1, _c(y, 1.0))
    sinh = b.fmul(_c(y, 0.5), b.fadd(em1, b.fdiv(em1, ey)))
    cosh = b.fmul(_c(y, 0.5), b.fadd(ey, b.fdiv(_c(y, 1.0), ey)))
    return cosh, _intr(b, "llvm.copysign", sinh, y)


def sin(b, x):
    a, c = parts(b, x)
    ch, sh = _cosh_sinh(b, c)
    return make(b, b.fmul(_math(b, "sin", a), ch), b.fmul(_math(b, "cos", a), sh))


def cos(b, x):
    a, c = parts(b, x)
    ch, sh = _cosh_sinh(b, c)
    return make(b, b.fmul(_math(b, "cos", a), ch), b.fneg(b.fmul(_math(b, "sin", a), sh)))


def tanh(b, x):
    a, c = parts(b, x)
    two = _c(a, 2.0)
    ch, sh = _cosh_sinh(b, b.fmul(a, two))
    s2 = _math(b, "sin", b.fmul(c, two))
    den = b.fadd(ch, _math(b, "cos", b.fmul(c, two)))
    re, im = b.fdiv(sh, den), b.fdiv(s2, den)
    big = b.fcmp_ordered(">", _intr(b, "llvm.fabs", a), _c(a, 20.0))
    re = b.select(big, _intr(b, "llvm.copysign", _c(a, 1.0), a), re)
    im = b.select(big, _intr(b, "llvm.copysign", _c(a, 0.0), s2), im)
    return make(b, re, im)


def tan(b, x):
    a, c = parts(b, x)
    p, q = parts(b, tanh(b, make(b, b.fneg(c), a)))  # tanh(iz) = p + qi; tan z = q - pi
    return make(b, q, b.fneg(p))


def logistic(b, x):
    one = make(b, _c(parts(b, x)[0], 1.0), _c(parts(b, x)[0], 0.0))
    return div(b, one, add(b, one, exp(b, neg(b, x))))


def rsqrt(b, x):
    a = parts(b, x)[0]
    return div(b, make(b, _c(a, 1.0), _c(a, 0.0)), sqrt(b, x))


def power(b, x, y):
    a, c = parts(b, x)
    d, e = parts(b, y)
    r = exp(b, mul(b, y, log(b, x)))
    zero = _c(a, 0.0)
    x0 = b.and_(b.fcmp_ordered("==", a, zero), b.fcmp_ordered("==", c, zero))
    y0 = b.and_(b.fcmp_ordered("==", d, zero), b.fcmp_ordered("==", e, zero))
    ypos = b.and_(b.fcmp_ordered(">", d, zero), b.fcmp_ordered("==", e, zero))
    re, im = parts(b, r)
    re = b.select(x0, b.select(y0, _c(a, 1.0), b.select(ypos, zero, re)), re)
    im = b.select(x0, b.select(b.or_(y0, ypos), zero, im), im)
    return make(b, re, im)
