"""The error function family: erf, erfc, erfinv, ndtr, ndtri, log_ndtr.

  erf      xlapy's erf primitive
  erfc     Cephes' erfc (as XLA decomposes it): 1 - erf(x) for |x| < 1; beyond,
           exp(-x^2) times a rational function (f64: P/Q up to 8, R/S above; f32: two
           polynomials in 1/x^2 split at 2); 2 - erfc(-x) for negative x; 0 where exp(-x^2)
           underflows
  erfinv   Giles' approximations (f32: one polynomial for w = -log(1-x^2) < 5 and one
           above; f64: three ranges), from plain operations so that it is differentiable
  ndtr     0.5 (1 + erf(x/sqrt2)) near 0, 0.5 erfc(|x|/sqrt2) (or 1 minus it) beyond
  ndtri    Cephes' ndtri: a rational function of p - 1/2 for p in [e^-2, 1 - e^-2],
           z - log(z)/z - R(1/z)/z with z = sqrt(-2 log p) in the tails
  log_ndtr log(ndtr(x)) in the middle, -ndtr(-x) for large x, and an asymptotic series
           (with `series_order` terms) for very negative x, as JAX
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.primitives import basic as B
from xlapy.random import _xla_math as XM
from xlapy.scipy.special._common import const, float1, polyval

_ERF_T = (9.604973739870516, 90.02601972038427, 2232.005345946843, 7003.325141128051,
          55592.30130103949)
_ERF_U = (1.0, 33.56171416475031, 521.3579497801527, 4594.323829709801, 22629.000061389095,
          49267.39426086359)
_ERFC_P = (2.461969814735305e-10, 0.5641895648310689, 7.463210564422699, 48.63719709856814,
           196.5208329560771, 526.4451949954773, 934.5285271719576, 1027.5518868951572,
           557.5353353693994)
_ERFC_Q = (1.0, 13.228195115474499, 86.70721408859897, 354.9377788878199, 975.7085017432055,
           1823.9091668790973, 2246.3376081871097, 1656.6630919416134, 557.5353408177277)
_ERFC_R = (0.5641895835477551, 1.275366707599781, 5.019050422511805, 6.160210979930536,
           7.4097426995044895, 2.9788666537210022)
_ERFC_S = (1.0, 2.2605286322011726, 9.396035249380015, 12.048953980809666, 17.08144507475659,
           9.608968090632859, 3.369076451000815)
_ERF32 = (7.85386146e-05, -0.000801019371, 0.00518832775, -0.0268538129, 0.112835854,
          -0.37612626, 1.12837911)
_ERFC32_SMALL = (0.0232682, -0.138703942, 0.368742466, -0.582473278, 0.621000469,
                 -0.494451523, 0.340488, -0.274112701, 0.563825965)
_ERFC32_LARGE = (-10.477664, 12.9772, -7.49551868, 2.92101908, -1.01526523, 0.42184633,
                 -0.282076746, 0.564189494)


def erf(x):
    """The error function."""
    return L.erf(float1(x))


def _erfc64(x):
    a = xnp.abs(x)
    small = 1.0 - x * polyval(_ERF_T, x * x) / polyval(_ERF_U, x * x)
    z = xnp.exp(-x * x)
    safe = xnp.where(a < 1.0, const(a, 1.0), a)
    mid = z * polyval(_ERFC_P, safe) / polyval(_ERFC_Q, safe)
    far = z * polyval(_ERFC_R, safe) / polyval(_ERFC_S, safe)
    y = xnp.where(a < 8.0, mid, far)
    y = xnp.where(-x * x < -709.782712893384, xnp.zeros_like(y), y)
    y = xnp.where(x < 0.0, 2.0 - y, y)
    return xnp.where(a < 1.0, small, y)


def _erfc32(x):
    a = xnp.abs(x)
    small = 1.0 - x * polyval(_ERF32, x * x)
    safe = xnp.where(a < 1.0, const(a, 1.0), a)
    y2 = 1.0 / (safe * safe)
    p = xnp.where(a < 2.0, polyval(_ERFC32_SMALL, y2), polyval(_ERFC32_LARGE, y2))
    y = xnp.exp(-x * x) * (1.0 / safe) * p
    y = xnp.where(-x * x < -88.7228394, xnp.zeros_like(y), y)
    y = xnp.where(x < 0.0, 2.0 - y, y)
    return xnp.where(a < 1.0, small, y)


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1."""
    x = float1(x)
    dt = B.aval_of(x).dtype
    if dt == np.float64:
        return _erfc64(x)
    if dt == np.float32:
        return _erfc32(x)
    return B.convert(_erfc32(B.convert(x, np.float32)), dt)


def erfinv(x):
    """The inverse error function."""
    x = float1(x)
    dt = B.aval_of(x).dtype
    if dt == np.float64:
        return XM.erf_inv_f64(x)
    y = B.convert(x, np.float32) if dt != np.float32 else x
    w = -xnp.log1p(-y * y)
    central = w < 5.0
    # (each branch's input is kept in its own domain, so the other branch's gradient is 0,
    # not 0 * inf)
    t = xnp.where(central, w - 2.5, xnp.sqrt(xnp.where(central, const(w, 25.0), w)) - 3.0)
    p = xnp.where(central, const(t, XM.f32_bits(XM._ERFINV[0][0])),
                  const(t, XM.f32_bits(XM._ERFINV[0][1])))
    for lo, hi in XM._ERFINV[1:]:
        p = p * t + xnp.where(central, const(t, XM.f32_bits(lo)), const(t, XM.f32_bits(hi)))
    r = y * xnp.where(xnp.abs(y) == 1.0, const(p, np.inf), p)
    return B.convert(r, dt) if dt != np.float32 else r


def ndtr(x):
    """The standard normal CDF."""
    x = float1(x)
    half_sqrt2 = float(np.sqrt(2.0) / 2)
    w = x * const(x, half_sqrt2)
    z = xnp.abs(w)
    y = xnp.where(z < half_sqrt2, 1.0 + erf(w), xnp.where(w > 0.0, 2.0 - erfc(z), erfc(z)))
    return 0.5 * y


_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def ndtri(p):
    """The inverse of the standard normal CDF."""
    p = float1(p)
    dt = B.aval_of(p).dtype
    hi = float(np.array(-np.expm1(-2.0), dt))
    mcp = xnp.where(p > hi, 1.0 - p, p)
    mcp = xnp.where(mcp == 0.0, xnp.full_like(mcp, 0.5), mcp)
    w = mcp - 0.5
    ww = w * w
    central = (w + w * ww * (polyval(_NDTRI_P0, ww) / polyval(_NDTRI_Q0, ww))) * \
        const(w, -np.sqrt(2 * np.pi))
    z = xnp.sqrt(-2.0 * xnp.log(mcp))
    first = z - xnp.log(z) / z
    iz = 1.0 / z
    small_p = first - polyval(_NDTRI_P2, iz) / polyval(_NDTRI_Q2, iz) / z
    other = first - polyval(_NDTRI_P1, iz) / polyval(_NDTRI_Q1, iz) / z
    x = xnp.where(mcp > float(np.array(np.exp(-2.0), dt)), central,
                  xnp.where(z >= 8.0, small_p, other))
    x = xnp.where(p > float(np.array(1 - np.exp(-2.0), dt)), x, -x)
    return xnp.where(p == 0.0, xnp.full_like(x, -np.inf),
                     xnp.where(p == 1.0, xnp.full_like(x, np.inf), x))


def _double_factorial(n: int) -> int:
    return int(np.prod(np.arange(n, 1, -2))) if n > 1 else 1


def log_ndtr(x, series_order: int = 3):
    """log of the standard normal CDF, accurate far into both tails."""
    if not isinstance(series_order, int) or not 0 <= series_order <= 30:
        from xlapy.random._common import RandomError
        raise RandomError(f"log_ndtr: series_order must be an int in [0, 30], got "
                          f"{series_order!r}")
    x = float1(x)
    dt = B.aval_of(x).dtype
    lower, upper = (-20.0, 8.0) if dt == np.float64 else (-10.0, 5.0)
    above = x > upper
    arg = xnp.where(above, -x, xnp.maximum(x, lower))
    res = ndtr(arg)
    xl = xnp.minimum(x, lower)
    x2 = xl * xl
    log_scale = -0.5 * x2 - xnp.log(-xl) - const(xl, 0.5 * np.log(2.0 * np.pi))
    even, odd = xnp.zeros_like(xl), xnp.zeros_like(xl)
    x2n = x2
    for n in range(1, series_order + 1):
        y = const(xl, _double_factorial(2 * n - 1)) / x2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x2n = x2n * x2
    series = 1.0 + even - odd
    low = log_scale + xnp.log(series)
    return xnp.where(above, -res, xnp.where(x > lower, xnp.log(res), low))
