"""xlapy.scipy.optimize: jax.scipy.optimize's minimize (method BFGS) and OptimizeResults.

minimize runs as one program: called eagerly it compiles the whole solver (the objective
traced into it; one compile per objective function object and argument shapes), inside a
jit it traces into the caller's program. Like JAX's, it is not differentiable with
respect to x0 or args.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import UnsupportedError, XlapyError
from xlapy.numpy._core import canonicalize_dtype

__all__ = ["OptimizeResults", "minimize"]

_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


class OptimizeError(XlapyError, ValueError):
    """Bad arguments to xlapy.scipy.optimize (a ValueError too)."""


class OptimizeResults(NamedTuple):
    """The result of minimize.

    x: the last iterate (the minimizer when success); success: converged without a line
    search failure; status: 0 converged, 1 maximum iterations, 2 + the line search's status
    (3: its zoom failed, 5: it ran out of steps) on a line search failure; fun, jac: the
    objective and its gradient at x; hess_inv: the inverse-Hessian estimate; nfev, njev:
    objective and gradient evaluations; nit: iterations."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def _solve(fun, x0, args, options):
    from xlapy.scipy.optimize._bfgs import minimize_bfgs
    s = minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=s.ls_status,
                           fun=s.f, jac=s.g, hess_inv=s.H, nfev=s.nfev, njev=s.nfev,
                           nit=s.k)


_SOLVE = {}


def _jitted(options: tuple):
    from xlapy.frontend.jit import jit
    f = _SOLVE.get(options)
    if f is None:
        f = _SOLVE[options] = jit(lambda fun, x0, args: _solve(fun, x0, args, dict(options)),
                                  static_argnums=0)
    return f


def minimize(fun, x0, args=(), method="BFGS", tol=None, options=None):
    """Minimize fun(x, *args) (a real scalar) over x (shape (n,)) from x0. method: "BFGS"
    (the only one, as in JAX). options: maxiter (default 200 n), gtol (default 1e-5; `tol`
    sets it when options do not, as in scipy), norm (of the gradient in the stopping test,
    default inf), line_search_maxiter (default 10)."""
    if not isinstance(args, tuple):
        raise OptimizeError(f"minimize: args must be a tuple, got {type(args).__name__}")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise UnsupportedError(f"minimize: method {method!r} is not supported (only 'BFGS')")
    options = dict(options or {})
    unknown = sorted(set(options) - set(_BFGS_OPTIONS))
    if unknown:
        raise OptimizeError(f"minimize: unknown BFGS options {unknown}; known: "
                            f"{list(_BFGS_OPTIONS)}")
    if tol is not None and "gtol" not in options:
        options["gtol"] = tol
    if options.get("maxiter") is not None:
        options["maxiter"] = int(options["maxiter"])
    x0 = xnp.asarray(x0)
    if x0.ndim != 1:
        raise OptimizeError(f"minimize: x0 must be 1-dimensional (shape (n,)), got shape "
                            f"{tuple(x0.shape)}")
    if np.dtype(x0.dtype).kind == "c":
        raise OptimizeError("minimize: complex x0 is not supported (BFGS minimizes over "
                            "real vectors)")
    if np.dtype(x0.dtype).kind not in "f":
        x0 = x0.astype(canonicalize_dtype(np.float64))
    try:
        key = tuple(sorted(options.items()))
        hash(key)
    except TypeError:
        raise OptimizeError(f"minimize: options must have hashable values, got {options}") \
            from None
    return _jitted(key)(fun, x0, args)
