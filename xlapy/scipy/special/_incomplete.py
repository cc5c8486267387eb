"""Regularized incomplete gamma and beta functions: gammainc (P), gammaincc (Q), betainc (I).

  gammainc   the power series  P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n))
             where x < max(1, a); elsewhere Q by the continued fraction
             x^a e^-x / Gamma(a) * 1 / (x+1-a - 1(1-a) / (x+3-a - 2(2-a) / ...)), evaluated
             with the modified Lentz algorithm, and P = 1 - Q
  betainc    the continued fraction of I_x(a, b) (even and odd steps, modified Lentz),
             taken for x < (a+1)/(a+b+2), through I_x(a, b) = 1 - I_(1-x)(b, a) above
Both iterate in a while loop until every element has converged (relative step under the
dtype's epsilon) or an iteration cap, so one jitted program serves any argument values.

Derivatives: d/dx exactly (the integrand), as JAX; d/da (and d/db of betainc, which JAX
does not differentiate) by forward differentiation of the iteration itself."""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax
from xlapy.frontend.custom_derivatives import custom_jvp
from xlapy.frontend.forward import jvp
from xlapy.frontend.jit import jit
from xlapy.frontend.primitives import basic as B
from xlapy.scipy.special._common import floats
from xlapy.scipy.special._gamma import betaln, gammaln

_MAX_ITER = 2000
_STREAK = 16  # converged steps in a row before an element stops: its derivative (forward
#              differentiation of these steps) converges a few steps after its value


def _eps(x) -> float:
    return float(np.finfo(B.aval_of(x).dtype).eps)


def _tiny(x) -> float:
    return float(np.finfo(B.aval_of(x).dtype).tiny) * 1e3


def _iterate(step, state, done):
    """Run `state = step(n, state)` for elements not yet done until all are; step returns
    (state, converged). The iteration count is the loop's first carried value."""
    def cond(c):
        return (c[0] < _MAX_ITER) & ~xnp.all(c[1])

    def body(c):
        n, finished, streak, st = c
        new, conv = step(n + 1, st)
        kept = tuple(xnp.where(finished, old, v) for old, v in zip(st, new))
        streak = xnp.where(conv, streak + 1, xnp.zeros_like(streak))
        return n + 1, finished | (streak >= _STREAK), streak, kept

    init = (np.int32(0), done, xnp.zeros(B.aval_of(done).shape, np.int32), state)
    return lax.while_loop(cond, body, init)[3]


def _series(a, x, active):
    """sum_n x^n / ((a+1)...(a+n)), n >= 0, for the active elements."""
    def step(n, st):
        r, term, total = st
        r = r + 1.0
        term = term * x / r
        total = total + term
        return (r, term, total), xnp.abs(term) <= xnp.abs(total) * _eps(x)
    one = xnp.ones_like(x)
    return _iterate(step, (a, one, one), ~active)[2]


def _gamma_cf(a, x, active):
    """The continued fraction h with Q(a, x) = x^a e^-x / Gamma(a) * h."""
    tiny = _tiny(x)

    def guard(v):
        return xnp.where(xnp.abs(v) < tiny, xnp.full_like(v, tiny), v)

    def step(n, st):
        b, c, d, h = st
        k = B.convert(n, B.aval_of(x).dtype)
        an = -k * (k - a)
        b = b + 2.0
        d = 1.0 / guard(an * d + b)
        c = guard(b + an / c)
        delta = d * c
        return (b, c, d, h * delta), xnp.abs(delta - 1.0) <= _eps(x)
    b0 = x + 1.0 - a
    b0 = xnp.where(active, b0, xnp.ones_like(b0))
    d0 = 1.0 / guard(b0)
    return _iterate(step, (b0, xnp.full_like(x, 1.0 / tiny), d0, d0), ~active)[3]


def _log_prefix(a, x):
    """log(x^a e^-x / Gamma(a)). For a >= 10 as -a d(x/a) + log(a / 2 pi) / 2 - s(a), with
    d(r) = r - 1 - log r through log1p and s Stirling's series of log Gamma: the direct
    form loses float32's digits to the cancellation of a log x, x and log Gamma(a) (about
    1e-3 relative near a = x = 1e4)."""
    direct = a * xnp.log(x) - x - gammaln(a)
    big = a >= 10.0
    sa = xnp.where(big, a, xnp.full_like(a, 10.0))
    r1 = (x - sa) / sa
    d = r1 - xnp.log1p(r1)
    inv2 = 1.0 / (sa * sa)
    stirling = (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0))) / sa
    asymptotic = -sa * d + 0.5 * xnp.log(sa / (2.0 * np.pi)) - stirling
    return xnp.where(big, asymptotic, direct)


def _igamma_pair(a, x):
    """(P, Q) of the regularized incomplete gamma function, with edge cases as JAX."""
    bad = (a < 0.0) | (x < 0.0) | xnp.isnan(a) | xnp.isnan(x) | xnp.isinf(a)
    use_series = (x < 1.0) | (x < a)
    safe_x = xnp.where(bad | (x == 0.0) | xnp.isinf(x), xnp.ones_like(x), x)
    safe_a = xnp.where(bad | (a == 0.0), xnp.ones_like(a), a)
    live = ~bad & (x > 0.0) & ~xnp.isinf(x) & (a > 0.0)
    s = _series(safe_a, safe_x, live & use_series)
    h = _gamma_cf(safe_a, safe_x, live & ~use_series)
    pre = _log_prefix(safe_a, safe_x)
    p_series = xnp.exp(pre - xnp.log(safe_a)) * s
    q_cf = xnp.exp(pre) * h
    p = xnp.where(use_series, p_series, 1.0 - q_cf)
    q = xnp.where(use_series, 1.0 - p_series, q_cf)
    # a = 0 (x > 0): P = 1; x = 0 (a > 0): P = 0; x = inf: P = 1
    one, zero = xnp.ones_like(p), xnp.zeros_like(p)
    p = xnp.where((a == 0.0) | xnp.isinf(x), one, xnp.where(x == 0.0, zero, p))
    q = xnp.where((a == 0.0) | xnp.isinf(x), zero, xnp.where(x == 0.0, one, q))
    nan = xnp.full_like(p, np.nan)
    both_zero = (a == 0.0) & (x == 0.0)
    return xnp.where(bad | both_zero, nan, p), xnp.where(bad | both_zero, nan, q)


def _derivative(fn, v):
    """d fn / d v elementwise, by forward differentiation of fn's iteration."""
    return jvp(fn, (v,), (xnp.ones_like(v),))[1]


def _make_igamma(index):
    sign = 1.0 if index == 0 else -1.0

    @custom_jvp
    def f(a, x):
        return (lambda a_, x_: _igamma_pair(a_, x_)[index])(a, x)

    @f.defjvp
    def _jvp(primals, tangents):
        a, x = primals
        ta, tx = tangents
        out = f(a, x)
        safe_x = xnp.where(x > 0.0, x, xnp.ones_like(x))
        dx = xnp.exp(_log_prefix(a, safe_x)) / safe_x
        dx = xnp.where(x > 0.0, dx, xnp.zeros_like(dx))
        da = _derivative(lambda v: (lambda a_, x_: _igamma_pair(a_, x_)[index])(v, x), a)
        return out, sign * dx * tx + da * ta

    return f


_igamma = jit(_make_igamma(0))
_igammac = jit(_make_igamma(1))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = floats(a, x)
    a, x = xnp.broadcast_arrays(a, x)
    return _igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = floats(a, x)
    a, x = xnp.broadcast_arrays(a, x)
    return _igammac(a, x)


def _beta_cf(a, b, x, active):
    """The continued fraction of I_x(a, b) (x below the switch point)."""
    tiny = _tiny(x)

    def guard(v):
        return xnp.where(xnp.abs(v) < tiny, xnp.full_like(v, tiny), v)

    def half(aa, c, d):
        d = 1.0 / guard(1.0 + aa * d)
        c = guard(1.0 + aa / c)
        return c, d, c * d

    def step(n, st):
        c, d, h = st
        m = B.convert(n, B.aval_of(x).dtype)
        m2 = 2.0 * m
        c, d, e = half(m * (b - m) * x / ((a - 1.0 + m2) * (a + m2)), c, d)
        h = h * e
        c, d, delta = half(-(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2)), c, d)
        return (c, d, h * delta), xnp.abs(delta - 1.0) <= _eps(x)
    d0 = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    return _iterate(step, (xnp.ones_like(x), d0, d0), ~active)[2]


def _betainc(a, b, x):
    bad = (a < 0.0) | (b < 0.0) | (x < 0.0) | (x > 1.0) | xnp.isnan(a) | xnp.isnan(b) | \
        xnp.isnan(x) | xnp.isinf(a) | xnp.isinf(b) | ((a == 0.0) & (b == 0.0))
    flip = x > (a + 1.0) / (a + b + 2.0)
    aa, bb = xnp.where(flip, b, a), xnp.where(flip, a, b)
    xx = xnp.where(flip, 1.0 - x, x)
    live = ~bad & (x > 0.0) & (x < 1.0) & (a > 0.0) & (b > 0.0)
    one = xnp.ones_like(x)
    sa, sb = xnp.where(live, aa, one), xnp.where(live, bb, one)
    sx = xnp.where(live, xx, xnp.full_like(x, 0.5))
    h = _beta_cf(sa, sb, sx, live)
    front = xnp.exp(sa * xnp.log(sx) + sb * xnp.log1p(-sx) - betaln(sa, sb)) / sa
    v = front * h
    v = xnp.where(flip, 1.0 - v, v)
    # a = 0 (b > 0): 1; b = 0 (a > 0): 0; x = 0: 0; x = 1: 1
    zero = xnp.zeros_like(v)
    v = xnp.where(x == 0.0, zero, xnp.where(x == 1.0, one, v))
    v = xnp.where(a == 0.0, one, xnp.where(b == 0.0, zero, v))
    return xnp.where(bad, xnp.full_like(v, np.nan), v)


@custom_jvp
def _betainc_cj(a, b, x):
    return _betainc(a, b, x)


@_betainc_cj.defjvp
def _betainc_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    inside = (x > 0.0) & (x < 1.0)
    sx = xnp.where(inside, x, xnp.full_like(x, 0.5))
    dx = xnp.exp((a - 1.0) * xnp.log(sx) + (b - 1.0) * xnp.log1p(-sx) - betaln(a, b))
    dx = xnp.where(inside, dx, xnp.zeros_like(dx))
    da = _derivative(lambda v: _betainc(v, b, x), a)
    db = _derivative(lambda v: _betainc(a, v, x), b)
    return _betainc_cj(a, b, x), dx * tx + da * ta + db * tb


_betainc_jit = jit(_betainc_cj)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = floats(a, b, x)
    a, b, x = xnp.broadcast_arrays(a, b, x)
    return _betainc_jit(a, b, x)
