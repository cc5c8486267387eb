"""Minimax polynomial fitting for the math library (a developer tool, not imported at run time).

Every polynomial in math_coeffs.py was produced by this module:

    .venv/bin/pip install mpmath        # only needed to regenerate
    .venv/bin/python -m xlapy.backends.llvm.math_fit > xlapy/backends/llvm/math_coeffs.py

Algorithm: the Remez exchange algorithm on a dense discrete grid, in mpmath at 160 bits.
A fit approximates f(t) on [a, b] by sum(c_k * t**p_k) (p_k = the given powers) minimizing
max |w(t) * (f(t) - p(t))|; w expresses the error of the FINAL function (relative error of
exp(r), not of the tail polynomial), so a tail fitted as (exp(r)-1-r)/r**2 gets w = r**2/exp(r).
The coefficients are then rounded to the working precision (float32 or float64); each spec
records the type so math_coeffs.py holds exactly representable literals.
"""
import sys

import numpy as np


def _mp():
    import mpmath
    if not getattr(_mp, 'done', False):
        mpmath.mp.prec = 160
        _mp.done = True
    return mpmath


def remez(f, w, a, b, powers, npts=4000, iters=40):
    """Minimax fit on a Chebyshev-distributed grid of npts points; returns (coeffs, max weighted
    error)."""
    mp = _mp()
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(powers)
    grid = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * k / (npts - 1)) for k in range(npts)]
    # nudge points that sit on a removable singularity (t == 0)
    grid = [t if abs(t) > 2 ** -40 else mp.mpf(2) ** -40 for t in grid]
    with mp.workprec(600):          # the tails cancel heavily near t = 0
        fv = [+f(t) for t in grid]
        wv = [+w(t) for t in grid]
    basis = [[t ** p for p in powers] for t in grid]
    ref = [int(round((npts - 1) * (1 - float(mp.cos(mp.pi * i / n))) / 2)) for i in range(n + 1)]
    best = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, g in enumerate(ref):
            for k in range(n):
                A[i, k] = basis[g][k]
            A[i, n] = (-1) ** i / wv[g]
            rhs[i] = fv[g]
        sol = mp.lu_solve(A, rhs)
        c = [sol[k] for k in range(n)]
        lev = abs(sol[n])
        err = [wv[i] * (fv[i] - mp.fsum(ck * bk for ck, bk in zip(c, basis[i])))
               for i in range(npts)]
        emax = max(abs(e) for e in err)
        if best is None or emax < best[1]:
            best = (c, emax)
        if emax <= lev * (1 + mp.mpf(10) ** -4):
            break
        # exchange: one extremum per run of constant sign, then trim to n+1 alternating points
        runs = []
        start = 0
        for i in range(1, npts + 1):
            if i == npts or (err[i] >= 0) != (err[start] >= 0):
                j = max(range(start, i), key=lambda k: abs(err[k]))
                runs.append(j)
                start = i
        while len(runs) > n + 1:
            # drop the smaller end, or merge the weakest interior run with its neighbours
            if abs(err[runs[0]]) < abs(err[runs[-1]]):
                runs.pop(0)
            else:
                runs.pop()
        if len(runs) < n + 1:
            break
        ref = runs
    return best


def _spec_table():
    """name -> (dtype, f, w, a, b, powers). f and w are functions of an mpf.

    dtype is the precision the polynomial is evaluated in (f32 functions evaluated in double
    precision use 'f64' entries with fewer terms, named *_f32d)."""
    mp = _mp()
    sqrt = mp.sqrt
    S = {}
    L = 0.3466 + 0.002                      # |r| <= ln2/2 after r = x - n*ln2, plus slack
    s2 = float(mp.sqrt(2))
    P4 = float(mp.pi / 4) * 1.0001          # |r| <= pi/4 after the trig reduction
    T12 = float(2 - mp.sqrt(3)) * 1.001     # tan(pi/12), atan reduction bound
    zlog = ((s2 - 1) / (s2 + 1)) ** 2 * 1.01  # s = f/(2+f), z = s^2, f in [sqrt(.5)-1, sqrt(2)-1]

    # exp(r) = 1 + r + r^2 * P(r)
    for name, dt, n in (('exp_f32', 'f32', 5), ('exp_f64', 'f64', 10)):
        S[name] = (dt, lambda t: (mp.exp(t) - 1 - t) / t ** 2, lambda t: t ** 2 / mp.exp(t), -L, L,
                   list(range(n)))
    # expm1(r) = r + r^2/2 + r^3 * P(r)
    for name, dt, n in (('expm1_f32', 'f32', 5), ('expm1_f64', 'f64', 10)):
        S[name] = (dt, lambda t: (mp.expm1(t) - t - t ** 2 / 2) / t ** 3,
                   lambda t: abs(t ** 3 / mp.expm1(t)), -L, L, list(range(n)))
    # log(1+f) = f - f^2/2 + f^3 P(f)
    S['log_f32'] = ('f32', lambda t: (mp.log1p(t) - t + t ** 2 / 2) / t ** 3,
                    lambda t: abs(t ** 3 / mp.log1p(t)), 1 / s2 - 1 - 1e-3, s2 - 1 + 1e-3,
                    list(range(8)))
    # fdlibm form: log(1+f) = 2s + s*z*P(z)
    S['log_f64'] = ('f64', lambda z: (2 * mp.atanh(sqrt(z)) / sqrt(z) - 2) / z,
                    lambda z: z * sqrt(z) / (2 * mp.atanh(sqrt(z))), 0, zlog, list(range(7)))
    # double-double log (pow): log(1+f) = 2s + 2s^3/3 + s*z^2*P(z)
    S['logdd_f64'] = ('f64', lambda z: (2 * mp.atanh(sqrt(z)) / sqrt(z) - 2 - 2 * z / 3) / z ** 2,
                      lambda z: z ** 2 / (2 * mp.atanh(sqrt(z)) / sqrt(z)), 0, zlog, list(range(7)))
    # sin(r) = r + r^3 * S(z), cos(r) = 1 - z/2 + z^2 * C(z), z = r^2
    for name, dt, ns, nc in (('f32d', 'f64', 4, 3), ('f64', 'f64', 6, 6)):
        S['sin_' + name] = (dt, lambda z: (mp.sin(sqrt(z)) - sqrt(z)) / z ** mp.mpf(1.5),
                            lambda z: z ** mp.mpf(1.5) / mp.sin(sqrt(z)), 0, P4 ** 2,
                            list(range(ns)))
        S['cos_' + name] = (dt, lambda z: (mp.cos(sqrt(z)) - 1 + z / 2) / z ** 2,
                            lambda z: z ** 2 / mp.cos(sqrt(z)), 0, P4 ** 2, list(range(nc)))
    # atan(t) = t + t^3 * A(z), z = t^2, t in [0, tan(pi/12)]
    for name, n in (('atan_f32d', 4), ('atan_f64', 9)):
        S[name] = ('f64', lambda z: (mp.atan(sqrt(z)) - sqrt(z)) / z ** mp.mpf(1.5),
                   lambda z: z ** mp.mpf(1.5) / mp.atan(sqrt(z)), 0, T12 ** 2, list(range(n)))
    # erf(x) = x + x * E(z), z = x^2, |x| <= 1
    for name, dt, n in (('erf_small_f32', 'f32', 7), ('erf_small_f64', 'f64', 12)):
        S[name] = (dt, lambda z: mp.erf(sqrt(z)) / sqrt(z) - 1,
                   lambda z: sqrt(z) / mp.erf(sqrt(z)), 0, 1.0, list(range(n)))
    # tanh(x) = x + x^3 * T(z), z = x^2, |x| <= 0.55
    for name, dt, n in (('tanh_f32', 'f32', 5), ('tanh_f64', 'f64', 11)):
        S[name] = (dt, lambda z: (mp.tanh(sqrt(z)) - sqrt(z)) / z ** mp.mpf(1.5),
                   lambda z: z ** mp.mpf(1.5) / mp.tanh(sqrt(z)), 0, 0.5501 ** 2, list(range(n)))
    # erf(x) = 1 - exp(Q(x - 1)), 1 <= x <= (where erf rounds to 1); error weighted as erf's
    for name, dt, b, n in (('erf_large_f32', 'f32', 3.95, 7), ('erf_large_f64', 'f64', 5.95, 18)):
        S[name] = (dt, lambda t: mp.log(mp.erfc(t + 1)), lambda t: mp.erfc(t + 1) / mp.erf(t + 1),
                   0, b - 1, list(range(n)))
    # cbrt(m), m in [1, 2]: seed for one Halley step
    for name, n in (('cbrt_f32d', 5), ('cbrt_f64', 6)):
        S[name] = ('f64', lambda t: mp.cbrt(t), lambda t: 1 / mp.cbrt(t), 1, 2, list(range(n)))
    return S


def _split(x, bits, dt):
    """x = hi + lo with hi holding `bits` leading bits (so small-integer multiples of hi are
    exact)."""
    mp = _mp()
    e = int(mp.floor(mp.log(abs(x), 2)))
    hi = mp.nint(x / mp.mpf(2) ** (e - bits + 1)) * mp.mpf(2) ** (e - bits + 1)
    np_t = np.float32 if dt == 'f32' else np.float64
    return [float(np_t(float(hi))), float(np_t(float(x - hi)))]


def _dd(x):
    hi = float(x)
    return [hi, float(x - hi)]


def _constants():
    mp = _mp()
    pi = mp.pi
    return {
        'ln2_f32': _split(mp.log(2), 16, 'f32'),       # n * hi exact for |n| < 2^8
        'ln2_f64': _split(mp.log(2), 32, 'f64'),       # n * hi exact for |n| < 2^21
        'ln2_dd': _dd(mp.log(2)),
        'pio2_dd': _dd(pi / 2),
        'sqrt3_dd': _dd(mp.sqrt(3)),
        # atan2 offsets: k*pi/6 for k = 0..6, as double-double
        'pi6k_dd': [_dd(k * pi / 6) for k in range(7)],
        'pio4_dd': _dd(pi / 4),
        'pi3o4_dd': _dd(3 * pi / 4),
        # the leading 2400 bits of 2/pi (Payne-Hanek reduction tables are built from it)
        'two_over_pi_hex': format(int(mp.floor(2 / pi * mp.mpf(2) ** 2400)), 'x'),
    }


def _emit(names=None):
    mp = _mp()
    with mp.workprec(3000):
        consts = _constants()
    specs = _spec_table()
    out = ['"""Polynomial coefficients for math_*.py, generated by math_fit.py '
           '(do not edit by hand).',
           '',
           'Each entry: name -> (coefficients in increasing power order, '
           'max weighted error of the fit',
           'before rounding the coefficients).', '"""', '', 'COEFFS = {']
    for name, (dt, f, w, a, b, powers) in specs.items():
        if names and name not in names:
            continue
        c, e = remez(f, w, a, b, powers)
        np_t = np.float32 if dt == 'f32' else np.float64
        vals = [float(np_t(float(ck))) for ck in c]
        print(f'{name}: deg {len(powers)} err {float(e):.3e} (2^{float(mp.log(e, 2)):.1f})',
              file=sys.stderr)
        out.append(f'    {name!r}: ({vals!r}, {float(e):.3e}),')
    out.append('}')
    out.append('')
    out.append('CONSTS = {')
    for k, v in consts.items():
        out.append(f'    {k!r}: {v!r},')
    out.append('}')
    return '\n'.join(out)


if __name__ == '__main__':
    print(_emit(sys.argv[1:] or None))
