"""The gamma function family: gammaln, gamma, gammasgn, digamma, polygamma, zeta (Hurwitz),
betaln, beta, multigammaln, factorial.

  gammaln    Lanczos' approximation (g = 7, 9 terms, as XLA) for x >= 1/2; the reflection
             formula log(pi / |sin(pi x)|) - gammaln(1 - x) below, with sin(pi x) taken at
             x's distance to the nearest integer; +inf at 0 and the negative integers
  digamma    the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
             series log x - 1/(2x) - sum B_2k / (2k x^2k); reflection
             psi(1 - x) - pi / tan(pi x) below 1/2
  zeta       Euler-Maclaurin summation of the Hurwitz zeta function sum (q + k)^-s: N terms
             directly, the integral of the tail, and M Bernoulli corrections (N = M = 8 in
             f32, 16 in f64, as JAX)
  polygamma  (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for n = 0
All are compositions of differentiable operations (gradients follow the approximations).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import xlapy.numpy as xnp
from xlapy.frontend.core import concrete_or_error
from xlapy.frontend.primitives import basic as B
from xlapy.scipy.special._common import const, float1, floats

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2), by the recurrence sum_k C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_B = _bernoulli(40)


def _lanczos_positive(x):
    """gammaln(x) for x >= 1/2."""
    z = x - 1.0
    acc = xnp.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        acc = acc + const(z, c) / (z + float(i))
    t = z + (_LANCZOS_G + 0.5)
    half_log_2pi = const(z, 0.5 * math.log(2 * math.pi))
    # (z + 1/2) log t - t, with log t = log(g + 1/2) + log1p(z / (g + 1/2)) (accurate near 1)
    log_t = const(z, math.log(_LANCZOS_G + 0.5)) + xnp.log1p(z / (_LANCZOS_G + 0.5))
    return half_log_2pi + (z + 0.5) * log_t - t + xnp.log(acc)


def _sin_pi(x):
    """|sin(pi x)| computed from x's distance to the nearest integer."""
    r = x - xnp.round(x)
    return xnp.abs(xnp.sin(const(r, math.pi) * r))


def _reflected(fn, x, positive, reflection, pole_value):
    """fn(x) (a float; narrower than f32 computed in f32): positive(x) for x >= 0.5, else
    reflection(x, positive(1 - x)); pole_value at 0, -1, -2, ..."""
    x = float1(x)
    dt = B.aval_of(x).dtype
    if dt.itemsize < 4:
        return B.convert(fn(B.convert(x, np.float32)), dt)
    reflect = x < 0.5
    p = positive(xnp.where(reflect, 1.0 - x, x))
    out = xnp.where(reflect, reflection(x, p), p)
    pole = (x <= 0.0) & (x == xnp.floor(x))
    return xnp.where(pole, xnp.full_like(out, pole_value), out)


def gammaln(x):
    """log|Gamma(x)|."""
    def reflection(x, lg):   # log(pi / |sin(pi x)|) - lgamma(1 - x)
        s = _sin_pi(x)
        return const(x, math.log(math.pi)) - xnp.log(xnp.where(s == 0.0, xnp.ones_like(s), s)) - lg
    return _reflected(gammaln, x, _lanczos_positive, reflection, np.inf)


def gammasgn(x):
    """The sign of Gamma(x) (NaN at the poles, as SciPy)."""
    x = float1(x)
    fl = xnp.floor(x)
    neg = xnp.where(xnp.remainder(fl, 2.0) == 0.0, xnp.ones_like(x), -xnp.ones_like(x))
    out = xnp.where(x > 0.0, xnp.ones_like(x), neg)
    out = xnp.where(x == 0.0, xnp.copysign(xnp.ones_like(x), x), out)
    return xnp.where((x < 0.0) & (x == fl), xnp.full_like(x, np.nan), out)


def gamma(x):
    """The gamma function."""
    x = float1(x)
    return gammasgn(x) * xnp.exp(gammaln(x))


def _digamma_positive(x, steps: int = 10):
    acc = xnp.zeros_like(x)
    for _ in range(steps):
        small = x < float(steps)
        acc = acc - xnp.where(small, 1.0 / x, xnp.zeros_like(x))
        x = xnp.where(small, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    series = xnp.zeros_like(x)
    for k in range(7, 0, -1):  # sum_k B_2k / (2k) x^-2k, Horner in 1/x^2
        series = (series + const(x, float(_B[2 * k] / (2 * k)))) * inv2
    return acc + xnp.log(x) - 0.5 / x - series


def digamma(x):
    """The logarithmic derivative of the gamma function."""
    def reflection(x, psi):   # psi(1 - x) - pi cot(pi x)
        r = x - xnp.round(x)
        sin = xnp.sin(const(r, math.pi) * r)
        cot = xnp.cos(const(r, math.pi) * r) / xnp.where(sin == 0.0, xnp.ones_like(sin), sin)
        return psi - const(x, math.pi) * cot
    return _reflected(digamma, x, _digamma_positive, reflection, np.nan)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (q + k)^-x (q is required, as in JAX)."""
    if q is None:
        raise NotImplementedError("the Riemann zeta function is not implemented; pass q "
                                  "for the Hurwitz zeta function")
    s, a = floats(x, q)
    s, a = xnp.broadcast_arrays(s, a)
    dt = B.aval_of(a).dtype
    n = 8 if dt == np.float32 else 16
    head = xnp.zeros_like(a)
    for k in range(n):
        head = head + (a + float(k)) ** -s
    an = a + float(n)
    integral = an ** (1.0 - s) / (s - 1.0)
    t0 = an ** -s
    corr = xnp.zeros_like(a)
    prod = xnp.ones_like(a)
    inv = 1.0 / an
    for j in range(1, n + 1):
        # s (s+1) ... (s+2j-2) / an^(2j-1), times B_2j / (2j)!
        prod = prod * (s + float(2 * j - 2)) * inv
        term = prod * const(a, float(_B[2 * j] / math.factorial(2 * j)))
        corr = corr + term
        prod = prod * (s + float(2 * j - 1)) * inv
    return head + integral + t0 * (0.5 + corr)


def polygamma(n, x):
    """The n-th derivative of digamma (n a non-negative integer, the same for all x)."""
    n_int = int(concrete_or_error(n, "the order n of polygamma"))
    if n_int < 0:
        raise ValueError(f"polygamma: n must be non-negative, got {n_int}")
    x = float1(x)
    if n_int == 0:
        return digamma(x)
    sign = -1.0 if n_int % 2 == 0 else 1.0
    return const(x, sign * math.factorial(n_int)) * zeta(const(x, n_int + 1.0), x)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = floats(a, b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a, b):
    a, b = floats(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * xnp.exp(betaln(a, b))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d."""
    d = int(concrete_or_error(d, "the dimension d of multigammaln"))
    a = float1(a)
    out = xnp.full_like(a, 0.25 * d * (d - 1) * math.log(math.pi))
    for i in range(d):
        out = out + gammaln(a - 0.5 * i)
    return out


def factorial(n, exact=False):
    """n! = Gamma(n + 1) (0 for negative n), as floats."""
    if exact:
        raise NotImplementedError("factorial(exact=True) is not supported (as in JAX)")
    n = float1(n)
    return xnp.where(n < 0.0, xnp.zeros_like(n), gamma(n + 1.0))
