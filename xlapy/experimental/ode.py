"""xlapy.experimental.ode.odeint (jax.experimental.ode.odeint): an adaptive ODE solver.

    ys = odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf)

solves dy/dt = func(y, t, *args) from y(t[0]) = y0 and returns y at every time of t
(stacked along a new leading axis; y0 may be any pytree of float arrays). The method is
JAX's: the Dormand-Prince 5(4) Runge-Kutta pair with an adaptive step (the step's
error, measured as an RMS norm against atol + rtol * |y|, must stay <= 1; rejected steps
are retried smaller), a first step from Hairer, Norsett and Wanner's heuristic (with 2-norms
as JAX has it), and
values at the output times from the 4th-order polynomial through each step's ends and
midpoint. mxstep bounds the steps between two output times, hmax the step size. The
whole solve is a scan over the output times of while loops, so it runs under jit.

Its gradient (reverse mode) is the adjoint method, as JAX's: the augmented system
(y, y's cotangent, t's and args' cotangents) is integrated backwards between the output
times with the same solver and tolerances. Cotangents flow to y0, t and *args; func must
not close over values being differentiated (pass them in *args: xlapy says so with an
XlapyError). Forward mode (jvp) is not defined, as in JAX.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax
from xlapy.errors import XlapyError
from xlapy.flatten_util import ravel_pytree
from xlapy.frontend import pytree
from xlapy.frontend.autodiff import vjp
from xlapy.frontend.custom_derivatives import custom_vjp

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stages, 5th-order weights, error weights (5th - 4th order),
# and the weights of the step's midpoint (for the interpolating polynomial)
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _weighted(coeffs, ks, dtype):
    """sum_i c_i k_i over the stages (k stacked on axis 0)."""
    return xnp.tensordot(xnp.asarray(np.array(coeffs), dtype=dtype), ks, 1)


def _rms(x):
    return xnp.sqrt(xnp.mean(x * x))


def _rk_step(f, y0, f0, t0, dt):
    """One Dormand-Prince step: (y1, f1, error estimate of y1, the 7 stages)."""
    ks = [f0]
    for alpha, beta in zip(_ALPHA, _BETA):
        yi = y0 + dt * _weighted(beta, xnp.stack(ks), y0.dtype)
        ks.append(f(yi, t0 + alpha * dt))
    ks = xnp.stack(ks)
    y1 = y0 + dt * _weighted(_C_SOL, ks, y0.dtype)
    err = dt * _weighted(_C_ERR, ks, y0.dtype)
    return y1, ks[-1], err, ks


def _norm(x):
    return xnp.sqrt(xnp.sum(x * x))


def _first_step(f, t0, y0, f0, rtol, atol, order=4):
    # (2-norms here, RMS norms in the error test: as JAX's)
    scale = atol + xnp.abs(y0) * rtol
    d0, d1 = _norm(y0 / scale), _norm(f0 / scale)
    h0 = xnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = _norm((f1 - f0) / scale) / h0
    h1 = xnp.where((d1 <= 1e-15) & (d2 <= 1e-15), xnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / xnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return xnp.minimum(100.0 * h0, h1)


def _error_ratio(err, rtol, atol, y0, y1):
    tol = atol + rtol * xnp.maximum(xnp.abs(y0), xnp.abs(y1))
    return _rms(err / tol)


def _next_step(dt, ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0):
    dfactor = xnp.where(ratio < 1, 1.0, dfactor)
    factor = xnp.minimum(ifactor, xnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return xnp.where(ratio == 0, dt * ifactor, dt * factor)


def _interp_coeffs(y0, y1, ks, dt):
    """The quartic p(s), s in [0, 1] over the step, with p(0) = y0, p(1) = y1, p(1/2) =
    the midpoint estimate and the end slopes of the stages; highest power first."""
    dy0, dy1 = dt * ks[0], dt * ks[-1]
    ym = y0 + dt * _weighted(_C_MID, ks, y0.dtype)
    a = -2 * dy0 + 2 * dy1 - 8 * y0 - 8 * y1 + 16 * ym
    b = 5 * dy0 - 3 * dy1 + 18 * y0 + 14 * y1 - 32 * ym
    c = -4 * dy0 + dy1 - 11 * y0 - 5 * y1 + 16 * ym
    return xnp.stack([a, b, c, dy0, y0])


def _polyval(coeffs, s):
    out = coeffs[0]
    for i in range(1, 5):
        out = out * s + coeffs[i]
    return out


def _solve(f, rtol, atol, mxstep, hmax, y0, ts):
    """The forward solve on a flat y0: y at each time of ts, stacked."""
    f0 = f(y0, ts[0])
    dt = xnp.clip(_first_step(f, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    init = (y0, f0, ts[0], dt, ts[0], xnp.stack([y0] * 5))

    def to_target(carry, target):
        def cond(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def body(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, ks = _rk_step(f, y, fy, t, dt)
            t1 = t + dt
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeffs = _interp_coeffs(y, y1, ks, dt)
            dt = xnp.clip(_next_step(dt, ratio), 0.0, hmax)
            # an accepted step moves on; a rejected one retries from t with the smaller dt
            accept = ratio <= 1.0
            new = (i + 1, y1, f1, t1, dt, t, new_coeffs)
            old = (i + 1, y, fy, t, dt, last_t, coeffs)
            return tuple(xnp.where(accept, n, o) for n, o in zip(new, old))

        state = lax.while_loop(cond, body, (xnp.asarray(0, np.int32),) + tuple(carry))
        carry = state[1:]
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return carry, _polyval(coeffs, s.astype(coeffs.dtype))

    _, ys = lax.scan(to_target, init, ts[1:])
    return xnp.concatenate([y0[None], ys])



def _check_floats(y0_leaves, ts):
    for x in y0_leaves:
        if not xnp.issubdtype(xnp.asarray(x).dtype, np.floating):
            raise XlapyError(f"odeint: y0's leaves must be floating-point arrays, got one of "
                             f"dtype {xnp.asarray(x).dtype}")
    if ts.ndim != 1 or not xnp.issubdtype(ts.dtype, np.floating):
        raise XlapyError(f"odeint: t must be a 1-d array of floating-point times, got "
                         f"{ts.dtype}{list(ts.shape)}")
    if ts.shape[0] < 1:
        raise XlapyError("odeint: t needs at least one time")


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """y at each time of t for dy/dt = func(y, t, *args), y(t[0]) = y0 (see the module)."""
    if not callable(func):
        raise XlapyError(f"odeint: func must be callable, got {type(func).__name__}")
    for name, v in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise XlapyError(f"odeint: {name} must be a Python number, got {v!r}")
        if not v > 0:
            raise XlapyError(f"odeint: {name} must be positive, got {v!r}")
    ts = xnp.asarray(t)
    _check_floats(pytree.flatten(y0)[0], ts)
    return _odeint(func, float(rtol), float(atol), float(mxstep), float(hmax), y0, ts, *args)


def _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    flat_y0, unravel = ravel_pytree(y0)

    def f(y, t):
        out = func(unravel(y), t, *args)
        flat, _ = ravel_pytree(out)
        if flat.shape != flat_y0.shape:
            raise XlapyError(f"odeint: func must return a value of y0's structure and "
                             f"shapes ({flat_y0.shape[0]} numbers), got {flat.shape[0]}")
        return flat.astype(flat_y0.dtype)

    ys = _solve(f, rtol, atol, mxstep, hmax, flat_y0, ts.astype(flat_y0.dtype))
    return _unravel_stacked(y0, ys)


def _unravel_stacked(y0, ys):
    """The rows of ys (one flat y per time) as y0's pytree with a leading time axis."""
    leaves, treedef = pytree.flatten(y0)
    out, start = [], 0
    for leaf in leaves:
        leaf = xnp.asarray(leaf)
        n = int(np.prod(leaf.shape, dtype=np.int64))
        out.append(xnp.reshape(ys[:, start:start + n], (ys.shape[0],) + tuple(leaf.shape))
                   .astype(leaf.dtype))
        start += n
    return pytree.unflatten(treedef, out)


_odeint = custom_vjp(_odeint_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res
    n = ts.shape[0]

    def at(tree, i):
        return pytree.tree_map(lambda x: lax.dynamic_index_in_dim(x, i, 0, False), tree)

    def aug_dynamics(state, t, *args):
        y, y_bar, _, _ = state
        # the system run backwards: the solver's time is -t
        y_dot, pullback = vjp(func, y, -t, *args)
        y_bar_dot, t_bar_dot, *args_bar_dot = pullback(y_bar)
        return (pytree.tree_map(lambda v: -v, y_dot), y_bar_dot, t_bar_dot,
                tuple(args_bar_dot))

    def step(carry, i):
        y_bar, t0_bar, args_bar = carry
        yi, gi = at(ys, i), at(g, i)
        ti, tprev = (lax.dynamic_index_in_dim(ts, j, 0, False) for j in (i, i - 1))
        fi = func(yi, ti, *args)
        t_bar = sum(xnp.sum(a * b) for a, b in zip(pytree.flatten(fi)[0],
                                                    pytree.flatten(gi)[0]))
        t0_bar = t0_bar - t_bar
        span = xnp.stack([-ti, -tprev])
        out = odeint(aug_dynamics, (yi, y_bar, t0_bar, args_bar), span, *args, rtol=rtol,
                     atol=atol, mxstep=mxstep, hmax=hmax)
        _, y_bar, t0_bar, args_bar = at(out, 1)
        y_bar = pytree.tree_map(lambda a, b: a + b, y_bar, at(g, i - 1))
        return (y_bar, t0_bar, args_bar), t_bar

    init = (at(g, n - 1), xnp.zeros((), ts.dtype),
            tuple(pytree.tree_map(xnp.zeros_like, a) for a in args))
    if n > 1:
        (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
            step, init, xnp.arange(n - 1, 0, -1))
        ts_bar = xnp.concatenate([t0_bar[None], rev_ts_bar[::-1]])
    else:
        (y_bar, t0_bar, args_bar) = init
        ts_bar = xnp.zeros_like(ts)
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
