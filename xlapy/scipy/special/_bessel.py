"""Modified Bessel functions of the first kind, orders 0 and 1: i0, i0e, i1, i1e.

i0e(x) = e^-|x| I0(x) and i1e(x) = e^-|x| I1(x) are Chebyshev series on two ranges: |x| in
[0, 8] in the variable |x|/4 - 1, and |x| > 8 as sqrt(|x|) * i0e in the variable 16/|x| - 1
(the same split as Cephes). The coefficients are interpolated once, on first use, from
SciPy's double-precision functions at Chebyshev points (degree 30 and 24: relative error
below 3e-13 on both ranges; on [0, 8] order 1 as i1e(x)/x, so that i1e(x) is x times a
series and keeps its sign and exact zero); Clenshaw's recurrence evaluates them in the
argument's type (at least float32). i0 = i0e * e^|x|, i1 = i1e * e^|x|. Derivatives follow
the series (all operations are differentiable)."""

from __future__ import annotations

import functools

import numpy as np

import xlapy.numpy as xnp
from xlapy.frontend.jit import jit
from xlapy.frontend.primitives import basic as B
from xlapy.scipy.special._common import float1

_SPLIT = 8.0


@functools.cache
def _coefficients(order: int) -> tuple[np.ndarray, np.ndarray]:
    from numpy.polynomial import chebyshev  # only when first used
    from scipy import special  # first use only: its import is slow
    fn = special.i0e if order == 0 else special.i1e
    # order 1 near 0: i1e(x) / x (even and smooth; i1e is x times it, exactly 0 at 0)
    near = chebyshev.chebinterpolate(
        lambda u: fn((u + 1.0) * (_SPLIT / 2)) / ((u + 1.0) * (_SPLIT / 2)) ** order, 30)
    far = chebyshev.chebinterpolate(lambda v: np.sqrt(16.0 / (v + 1.0)) * fn(16.0 / (v + 1.0)),
                                    24)
    return near, far


def _clenshaw(coeffs: np.ndarray, t):
    """sum_k c_k T_k(t)."""
    dt = B.aval_of(t).dtype
    b1 = xnp.zeros_like(t)
    b2 = xnp.zeros_like(t)
    two_t = t * 2.0
    for c in coeffs[:0:-1]:
        b1, b2 = two_t * b1 - b2 + np.asarray(c, dt), b1
    return t * b1 - b2 + np.asarray(coeffs[0], dt)


def _scaled(order: int, x):
    """i0e(x) or i1e(x)."""
    near, far = _coefficients(order)
    ax = xnp.abs(x)
    is_near = ax <= _SPLIT
    safe_far = xnp.where(is_near, xnp.full_like(ax, 2 * _SPLIT), ax)
    inner = _clenshaw(near, xnp.where(is_near, ax, xnp.zeros_like(ax)) / (_SPLIT / 2) - 1.0)
    outer = _clenshaw(far, 16.0 / safe_far - 1.0) / xnp.sqrt(safe_far)
    if order == 1:
        return xnp.where(is_near, inner * x, xnp.where(x < 0.0, -outer, outer))
    return xnp.where(is_near, inner, outer)


@functools.partial(jit, static_argnums=(0, 1, 2))
def _bessel(order: int, exp_scaled: bool, dt, x):
    v = _scaled(order, x)
    if not exp_scaled:
        v = v * xnp.exp(xnp.abs(x))
    return B.convert(v, dt)


def _call(order: int, exp_scaled: bool, x):
    x = float1(x)
    dt = B.aval_of(x).dtype
    wide = B.convert(x, np.float32) if dt.itemsize < 4 else x
    return _bessel(order, exp_scaled, np.dtype(dt), wide)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, e^-|x| I0(x)."""
    return _call(0, True, x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, e^-|x| I1(x)."""
    return _call(1, True, x)


def i0(x):
    """The modified Bessel function of order 0, I0(x)."""
    return _call(0, False, x)


def i1(x):
    """The modified Bessel function of order 1, I1(x)."""
    return _call(1, False, x)
