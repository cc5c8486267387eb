"""BFGS (Nocedal and Wright, Numerical Optimization, algorithm 6.1) as one lax.while_loop:
the direction -H g from the inverse-Hessian estimate H (initially the identity), a strong
Wolfe line search along it, and the rank-two update
    H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T,   rho = 1 / (y.s)
(skipped when y.s is 0 or not finite). It stops when the gradient's `norm` (default the
max norm) is below gtol, after maxiter iterations, or when the line search fails.
The first trial step of each line search is min(1, 2.02 (f_k - f_{k-1}) / p.g) as scipy's
(with f_{-1} = f_0 + |g_0| / 2).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax
from xlapy.frontend.autodiff import value_and_grad
from xlapy.scipy.optimize._line_search import line_search

# status codes (as jax.scipy.optimize's BFGS)
CONVERGED, MAXITER, LINE_SEARCH_FAILED = 0, 1, 2


class BFGSState(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    x: object
    f: object
    g: object
    H: object
    f_old: object
    ls_status: object


def _norm(g, order):
    return xnp.linalg.norm(g, ord=order)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """BFGSState after minimizing fun (R^n -> R) from x0 (shape (n,))."""
    n = x0.shape[0]
    maxiter = 200 * n if maxiter is None else int(maxiter)
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    f0 = xnp.asarray(f0).astype(x0.dtype)
    i32 = np.int32
    state = BFGSState(converged=_norm(g0, norm) < gtol, failed=xnp.asarray(False),
                      k=xnp.asarray(0, i32), nfev=xnp.asarray(1, i32), x=x0, f=f0, g=g0,
                      H=xnp.eye(n, dtype=x0.dtype),
                      f_old=f0 + xnp.linalg.norm(g0) / 2.0, ls_status=xnp.asarray(0, i32))

    def go_on(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s):
        p = -xnp.matmul(s.H, s.g)
        slope = xnp.dot(s.g, p)
        guess = 2.02 * (s.f - s.f_old) / slope
        start = xnp.where((guess > 0.0) & (guess < 1.0), guess, 1.0).astype(x0.dtype)
        ls = line_search(vg, s.x, p, s.f, s.g, start, maxiter=line_search_maxiter)
        step_ = ls.a * p
        y = ls.g - s.g
        rho = 1.0 / xnp.dot(y, step_)
        eye = xnp.eye(n, dtype=x0.dtype)
        w = eye - rho * xnp.outer(step_, y)
        H = xnp.matmul(xnp.matmul(w, s.H), w.T) + rho * xnp.outer(step_, step_)
        H = xnp.where(xnp.isfinite(rho), H, s.H)
        return BFGSState(converged=_norm(ls.g, norm) < gtol, failed=ls.failed, k=s.k + 1,
                         nfev=s.nfev + ls.nfev, x=s.x + step_, f=ls.f, g=ls.g, H=H,
                         f_old=s.f, ls_status=ls.status)

    s = lax.while_loop(go_on, step, state)
    status = xnp.where(s.converged, CONVERGED,
                       xnp.where(s.k >= maxiter, MAXITER,
                                 xnp.where(s.failed, LINE_SEARCH_FAILED + s.ls_status, -1)))
    return s._replace(ls_status=status.astype(i32))
