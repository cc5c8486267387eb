"""CHLO operations JAX emits, decomposed into HLO.

HLO has erf, tan and topk; the rest become elementwise HLO graphs. f16/bf16 operands are
computed in f32 and rounded back (as XLA's own CHLO lowering does).

  erfc      1 - erf(x) for |x| < 0.5; else exp(-x^2) * erfcx(|x|) (2 minus it for x < 0),
            erfcx from a Chebyshev series in t = 1/(1+x) (ERFCX_CHEBYSHEV, fitted for this
            file against scipy.special.erfcx: relative error 3e-15 on [0.5, inf))
  erf_inv   M. Giles' single-precision approximation ("Approximating the erfinv function",
            GPU Computing Gems, 2011); in f64 it is the starting point of Newton steps on
            erf(y) = x (|x| <= 0.5) or erfcx(y) = (1-|x|) exp(y^2) (the tails)
  lgamma,   the Lanczos approximation (g = 7, nine terms) for x >= 1/2 and the reflection
  digamma   formulas below it, with sin(pi x) taken of the reduced fraction of x
  asin, acos, atan, sinh, cosh, asinh, acosh, atanh, square, next_after, is_inf, ...:
            the usual identities, written to avoid overflow and cancellation

The test tests/hlo/stablehlo/test_chlo.py compares each against JAX (XLA) and SciPy.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.hlo.shapes import F32, PRIMITIVE_TYPES, Shape

ERFCX_CHEBYSHEV = (
    0.7544532668381743, 0.18334981862382016, -0.011128162109638589, -0.0037550549555209864,
    0.0005701241665858302, 7.666860040756051e-05, -3.408399580729106e-05, 1.9083519420791156e-06,
    1.4050381326172034e-06, -3.980793768124013e-07, 6.1614564715864325e-09,
    2.3810192051663737e-08, -6.629093182179887e-09, 1.5638406429231728e-10,
    4.4122973635965745e-10, -1.457987684028042e-10, 1.1124520965479734e-11,
    8.279563036807725e-12, -3.738689607581035e-12, 5.85341936164159e-13,
    1.2300460587234564e-13, -9.880232599739405e-14, 2.5660453098178557e-14,
    -4.677199941090517e-16, -2.3875386960397916e-15)
_ERFCX_TERMS = {"f32": 14, "f64": len(ERFCX_CHEBYSHEV)}

_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

LANCZOS_G = 7.0
LANCZOS_BASE = 0.99999999999980993
LANCZOS_COEFFICIENTS = (676.5203681218851, -1259.1392167224028, 771.32342877765313,
                        -176.61502916214059, 12.507343278686905, -0.13857109526572012,
                        9.9843695780195716e-6, 1.5056327351493116e-7)


class _Math:
    """Elementwise HLO on values of one shape: constants are broadcast to it."""

    def __init__(self, em, shape: Shape):
        self.em, self.shape = em, shape
        self.t = shape.element_type
        self._consts: dict = {}

    def c(self, value):
        key = repr(float(value))
        v = self._consts.get(key)
        if v is None:
            s = self.em.emit("constant", declared=Shape(self.t, ()),
                             literal=np.asarray(value, dtype=self.t.np_dtype))
            v = self.em.emit("broadcast", [s], {"dimensions": ()}, declared=self.shape)
            self._consts[key] = v
        return v

    def _v(self, x):
        return x if not isinstance(x, (int, float)) else self.c(x)

    def op(self, opcode, *xs):
        return self.em.emit(opcode, [self._v(x) for x in xs])

    def add(self, a, b): return self.op("add", a, b)
    def sub(self, a, b): return self.op("subtract", a, b)
    def mul(self, a, b): return self.op("multiply", a, b)
    def div(self, a, b): return self.op("divide", a, b)

    def cmp(self, a, b, direction):
        return self.em.emit("compare", [self._v(a), self._v(b)], {"direction": direction})

    def select(self, p, a, b):
        return self.em.emit("select", [p, self._v(a), self._v(b)])

    def poly(self, coeffs, x):
        """Horner: coeffs[0] * x^(n-1) + ... + coeffs[-1]."""
        p = self.c(coeffs[0])
        for k in coeffs[1:]:
            p = self.add(self.mul(p, x), k)
        return p

    def chebyshev(self, coeffs, u):
        """Clenshaw's recurrence for sum(c_k T_k(u))."""
        b1, b2 = self.c(0.0), self.c(0.0)
        for k in reversed(coeffs[1:]):
            b1, b2 = self.sub(self.add(self.mul(self.mul(u, 2.0), b1), k), b2), b1
        return self.sub(self.add(self.mul(u, b1), coeffs[0]), b2)


def _float_op(fn, widen: bool = True):
    """A lowering rule computing fn(math, *operands) in the operands' float type (f16/bf16
    in f32 where `widen`)."""
    def lower(cx):
        xs = cx.operands()
        t = xs[0].shape.element_type if xs[0].shape.is_array else None
        if t is None or not t.is_float:
            raise cx.error(f"needs floating-point operands, got {xs[0].shape}")
        if widen and t.name in ("f16", "bf16"):
            wide = [cx.emit("convert", [x], declared=x.shape.with_element_type(F32)) for x in xs]
            r = fn(_Math(cx.em, wide[0].shape), *wide)
            return [cx.emit("convert", [r], declared=r.shape.with_element_type(t))]
        return [fn(_Math(cx.em, xs[0].shape), *xs)]
    return lower


# ---- error functions -------------------------------------------------------------------------

def _erfcx_large(m: _Math, ax):
    """erfcx(ax) = exp(ax^2) erfc(ax) for ax >= 0.5 (any ax >= 0 gives a finite value)."""
    t = m.div(1.0, m.add(ax, 1.0))
    u = m.sub(m.mul(t, 3.0), 1.0)
    terms = ERFCX_CHEBYSHEV[:_ERFCX_TERMS.get(m.t.name, 14)]
    return m.mul(m.chebyshev(terms, u), t)


def _erfcx(m: _Math, ax):
    small = m.mul(m.op("exponential", m.mul(ax, ax)), m.sub(1.0, m.op("erf", ax)))
    return m.select(m.cmp(ax, 0.5, "LT"), small, _erfcx_large(m, ax))


def _erfc(m: _Math, x):
    ax = m.op("abs", x)
    tail = m.mul(_erfcx_large(m, ax), m.op("exponential", m.op("negate", m.mul(ax, ax))))
    tail = m.select(m.cmp(x, 0.0, "LT"), m.sub(2.0, tail), tail)
    return m.select(m.cmp(ax, 0.5, "LT"), m.sub(1.0, m.op("erf", x)), tail)


def _erf_inv(m: _Math, x):
    w = m.op("negate", m.op("log-plus-one", m.op("negate", m.mul(x, x))))
    central = m.poly(_GILES_CENTRAL, m.sub(w, 2.5))
    tail = m.poly(_GILES_TAIL, m.sub(m.op("sqrt", w), 3.0))
    y = m.mul(m.select(m.cmp(w, 5.0, "LT"), central, tail), x)
    ax = m.op("abs", x)
    if m.t.name == "f64":
        half_sqrt_pi = math.sqrt(math.pi) / 2
        yc = y
        for _ in range(2):  # Newton on erf(y) = x
            step = m.mul(m.mul(m.sub(m.op("erf", yc), x), m.op("exponential", m.mul(yc, yc))),
                         half_sqrt_pi)
            yc = m.sub(yc, step)
        log_q = m.op("log", m.sub(1.0, ax))
        ay = m.op("abs", y)
        for _ in range(3):  # Newton on log(erfc(y)) = log(1 - |x|): nearly linear out there
            cx = _erfcx(m, ay)
            g = m.sub(m.sub(m.op("log", cx), m.mul(ay, ay)), log_q)
            ay = m.add(ay, m.mul(m.mul(g, cx), half_sqrt_pi))
        yt = m.select(m.cmp(x, 0.0, "LT"), m.op("negate", ay), ay)
        y = m.select(m.cmp(ax, 0.5, "LE"), yc, yt)
    return m.select(m.cmp(ax, 1.0, "EQ"), m.mul(x, math.inf), y)


# ---- gamma functions -------------------------------------------------------------------------

def _lanczos(m: _Math, x):
    """(reflect?, z, t, log_t) shared by lgamma and digamma."""
    reflect = m.cmp(x, 0.5, "LT")
    z = m.select(reflect, m.op("negate", x), m.sub(x, 1.0))
    t = m.add(z, LANCZOS_G + 0.5)
    log_t = m.add(m.op("log-plus-one", m.div(z, LANCZOS_G + 0.5)), math.log(LANCZOS_G + 0.5))
    return reflect, z, t, log_t


def _reduced_fraction(m: _Math, x):
    """|x| - floor(|x|), folded into [0, 0.5] (sin(pi r) = |sin(pi x)|)."""
    ax = m.op("abs", x)
    frac = m.sub(ax, m.op("floor", ax))
    return m.select(m.cmp(frac, 0.5, "GT"), m.sub(1.0, frac), frac)


def _lgamma(m: _Math, x):
    reflect, z, t, log_t = _lanczos(m, x)
    a = m.c(LANCZOS_BASE)
    for i, p in enumerate(LANCZOS_COEFFICIENTS):
        a = m.add(a, m.div(p, m.add(z, float(i + 1))))
    log_y = m.add(m.sub(m.mul(m.add(z, 0.5), log_t), t),
                  m.add(m.op("log", a), 0.5 * math.log(2 * math.pi)))
    denom = m.op("log", m.op("sine", m.mul(_reduced_fraction(m, x), math.pi)))
    reflection = m.select(m.op("is-finite", denom), m.sub(m.sub(math.log(math.pi), denom), log_y),
                          m.op("negate", denom))
    result = m.select(reflect, reflection, log_y)
    is_inf = m.cmp(m.op("abs", x), math.inf, "EQ")
    return m.select(is_inf, math.inf, result)


def _digamma(m: _Math, x):
    reflect, z, t, log_t = _lanczos(m, x)
    num, denom = m.c(0.0), m.c(LANCZOS_BASE)
    for i, p in enumerate(LANCZOS_COEFFICIENTS):
        zi = m.add(z, float(i + 1))
        num = m.sub(num, m.div(p, m.mul(zi, zi)))
        denom = m.add(denom, m.div(p, zi))
    y = m.sub(m.add(log_t, m.div(num, denom)), m.div(LANCZOS_G, t))
    r = m.add(x, m.op("abs", m.op("floor", m.add(x, 0.5))))
    angle = m.mul(r, math.pi)
    reflection = m.sub(y, m.div(m.mul(m.op("cosine", angle), math.pi), m.op("sine", angle)))
    result = m.select(reflect, reflection, y)
    pole = m.em.emit("and", [m.cmp(x, 0.0, "LE"), m.cmp(x, m.op("floor", x), "EQ")])
    return m.select(pole, math.nan, result)


# ---- trigonometric and hyperbolic ------------------------------------------------------------

def _one_minus_square(m, x):
    return m.mul(m.sub(1.0, x), m.add(x, 1.0))  # 1 - x^2 without cancellation near |x| = 1


def _asin(m, x):
    return m.mul(m.op("atan2", x, m.add(m.op("sqrt", _one_minus_square(m, x)), 1.0)), 2.0)


def _acos(m, x):
    r = m.mul(m.op("atan2", m.op("sqrt", _one_minus_square(m, x)), m.add(x, 1.0)), 2.0)
    return m.select(m.cmp(x, -1.0, "EQ"), math.pi, r)


def _atan(m, x):
    return m.op("atan2", x, 1.0)


def _exp_halves(m, x):
    """(exp(x)/2, exp(-x)/2), finite as long as the results are (exp(x) alone overflows
    first: near the top the halving goes into the exponent instead)."""
    near_overflow = m.cmp(m.op("abs", x), math.log(float(np.finfo(m.t.np_dtype).max)) - 1, "GT")
    half = math.log(0.5)
    up = m.select(near_overflow, m.op("exponential", m.add(x, half)),
                  m.mul(m.op("exponential", x), 0.5))
    down = m.select(near_overflow, m.op("exponential", m.sub(half, x)),
                    m.mul(m.op("exponential", m.op("negate", x)), 0.5))
    return up, down


def _sinh(m, x):
    up, down = _exp_halves(m, x)
    e = m.op("exponential-minus-one", x)
    small = m.mul(m.add(e, m.div(e, m.add(e, 1.0))), 0.5)
    return m.select(m.cmp(m.op("abs", x), 1.0, "LT"), small, m.sub(up, down))


def _cosh(m, x):
    up, down = _exp_halves(m, x)
    return m.add(up, down)


def _sqrt_max(m) -> float:
    return math.sqrt(float(np.finfo(m.t.np_dtype).max))


def _asinh(m, x):
    a = m.op("abs", x)
    aa = m.mul(a, a)
    small = m.op("log-plus-one", m.add(a, m.div(aa, m.add(m.op("sqrt", m.add(aa, 1.0)), 1.0))))
    mid = m.op("log", m.add(a, m.op("sqrt", m.add(aa, 1.0))))
    large = m.add(m.op("log", a), math.log(2.0))
    r = m.select(m.cmp(a, 1.0, "LE"), small, m.select(m.cmp(a, _sqrt_max(m), "GE"), large, mid))
    return m.mul(m.op("sign", x), r)


def _acosh(m, x):
    xm1 = m.sub(x, 1.0)  # exact for x in [1, 2], where the result is small
    mid = m.op("log-plus-one", m.add(xm1, m.mul(m.op("sqrt", m.add(x, 1.0)), m.op("sqrt", xm1))))
    large = m.add(m.op("log", x), math.log(2.0))
    return m.select(m.cmp(x, _sqrt_max(m), "GE"), large, mid)


def _atanh(m, x):
    r = m.mul(m.sub(m.op("log-plus-one", x), m.op("log-plus-one", m.op("negate", x))), 0.5)
    return m.select(m.cmp(m.op("abs", x), 1.0, "GT"), math.nan, r)


def _next_after(m: _Math, x, y):
    t = m.t
    bits = {16: "u16", 32: "u32", 64: "u64"}[t.np_dtype.itemsize * 8]
    ut = PRIMITIVE_TYPES[bits]
    ushape = m.shape.with_element_type(ut)
    um = _Math(m.em, ushape)
    xb = m.em.emit("bitcast-convert", [x], declared=ushape)
    one, minus_one = um.c(1), um.c(np.iinfo(ut.np_dtype).max)  # + max == - 1 (wrapping)
    toward_larger = m.cmp(y, x, "GT")
    positive = m.cmp(x, 0.0, "GT")
    up = m.em.emit("compare", [toward_larger, positive], {"direction": "EQ"})
    moved = um.add(xb, um.select(up, one, minus_one))
    smallest = m.em.emit("bitcast-convert", [um.c(1)], declared=m.shape)
    toward_zero_y = m.select(m.cmp(y, 0.0, "LT"), m.op("negate", smallest), smallest)
    r = m.em.emit("bitcast-convert", [moved], declared=m.shape)
    r = m.select(m.cmp(x, 0.0, "EQ"), toward_zero_y, r)
    r = m.select(m.cmp(x, y, "EQ"), y, r)
    nan = m.em.emit("or", [m.cmp(x, x, "NE"), m.cmp(y, y, "NE")])
    return m.select(nan, math.nan, r)


# ---- rules the op table uses -----------------------------------------------------------------

def _predicate(fn):
    def lower(cx):
        (x,) = cx.operands()
        if not x.shape.is_array or not x.shape.element_type.is_float:
            raise cx.error(f"needs a floating-point operand, got {x.shape}")
        m = _Math(cx.em, x.shape)
        return [fn(m, x)]
    return lower


def top_k(cx):
    (x,) = cx.operands()
    k = cx.attr("k", required=True)
    k = getattr(k, "value", k)
    return cx.unpack(cx.emit("topk", [x], {"k": int(k), "largest": True}), 2)


def conj(cx):
    (x,) = cx.operands()
    return [x]


erfc = _float_op(_erfc)
erf_inv = _float_op(_erf_inv)
lgamma = _float_op(_lgamma)
digamma = _float_op(_digamma)
asin = _float_op(_asin)
acos = _float_op(_acos)
atan = _float_op(_atan)
sinh = _float_op(_sinh)
cosh = _float_op(_cosh)
asinh = _float_op(_asinh)
acosh = _float_op(_acosh)
atanh = _float_op(_atanh)
next_after = _float_op(_next_after, widen=False)
is_inf = _predicate(lambda m, x: m.cmp(m.op("abs", x), math.inf, "EQ"))
is_pos_inf = _predicate(lambda m, x: m.cmp(x, math.inf, "EQ"))
is_neg_inf = _predicate(lambda m, x: m.cmp(x, -math.inf, "EQ"))


def square(cx):
    (x,) = cx.operands()
    return [cx.emit("multiply", [x, x])]

