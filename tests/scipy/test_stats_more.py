"""jax.scipy.stats geom, pareto and sem, and jax.scipy.integrate.trapezoid, against jax:
values (inside and outside the support), loc/scale, jit, gradients, errors."""

from __future__ import annotations

import warnings

import jax
import jax.scipy.integrate as JI
import jax.scipy.stats as J
import numpy as np
import pytest

import xlapy as xp
import xlapy.scipy.integrate as XI
import xlapy.scipy.stats as X
from xlapy.errors import UnsupportedError, XlapyError


def _close(a, b, tol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def test_geom():
    k = np.float32([-1, 0, 1, 2, 5, 2.5])
    for f in ("logpmf", "pmf"):
        _close(getattr(X.geom, f)(k, 0.3), getattr(J.geom, f)(k, 0.3))
        _close(xp.jit(getattr(X.geom, f))(k, 0.3, 1), getattr(J.geom, f)(k, 0.3, 1))
    _close(xp.grad(lambda p: X.geom.logpmf(3.0, p))(0.4), jax.grad(
        lambda p: J.geom.logpmf(3.0, p))(0.4))


def test_pareto():
    x = np.float32([0.5, 1, 1.5, 3, 10])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
            _close(getattr(X.pareto, f)(x, 2.5, 0.2, 1.1), getattr(J.pareto, f)(x, 2.5, 0.2, 1.1),
                   1e-5)
        q = np.float32([-0.1, 0, 0.3, 0.99, 1, np.nan])
        _close(X.pareto.ppf(q, 2.5, 0.2, 1.1), J.pareto.ppf(q, 2.5, 0.2, 1.1), 1e-5)
    _close(xp.grad(lambda b: X.pareto.logpdf(3.0, b))(2.0),
           jax.grad(lambda b: J.pareto.logpdf(3.0, b))(2.0))


def test_sem_and_trapezoid():
    a = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    a[1, 2] = np.nan
    for kw in ({}, {"axis": 1}, {"axis": None}, {"ddof": 0, "keepdims": True},
               {"nan_policy": "omit"}, {"nan_policy": "omit", "axis": 1}):
        _close(X.sem(a, **kw), J.sem(a, **kw))
    _close(xp.jit(X.sem)(np.arange(6)), J.sem(np.arange(6)))
    with pytest.raises(XlapyError, match="nan_policy"):
        X.sem(a, nan_policy="skip")
    with pytest.raises(UnsupportedError, match="raise"):
        X.sem(a, nan_policy="raise")
    y = a[0]
    _close(XI.trapezoid(y, dx=0.5), JI.trapezoid(y, dx=0.5))
    x = np.cumsum(np.abs(a[2])).astype(np.float32)
    _close(xp.jit(XI.trapezoid)(a[3], x), JI.trapezoid(a[3], x))


def test_binom_nbinom():
    k = np.float32([-1, 0, 1, 3, 5, 6, 2.5])
    for dist in ("binom", "nbinom"):
        for f in ("logpmf", "pmf"):
            _close(getattr(getattr(X, dist), f)(k, 5.0, 0.3),
                   getattr(getattr(J, dist), f)(k, 5.0, 0.3), 1e-5)
            _close(getattr(getattr(X, dist), f)(k, 5.0, 0.3, 1),
                   getattr(getattr(J, dist), f)(k, 5.0, 0.3, 1), 1e-5)
    _close(X.binom.logpmf(np.float32([0, 3]), np.float32([0, 3]), 1.0),
           J.binom.logpmf(np.float32([0, 3]), np.float32([0, 3]), 1.0))
    _close(xp.grad(lambda p: X.nbinom.logpmf(3.0, 4.0, p))(0.4),
           jax.grad(lambda p: J.nbinom.logpmf(3.0, 4.0, p))(0.4), 1e-5)


def test_vonmises_dirichlet():
    x = np.float32([-3, -1, 0, 0.5, 3])
    for f in ("logpdf", "pdf"):
        _close(getattr(X.vonmises, f)(x, np.float32([0.5, 2, 10, -1, 1])),
               getattr(J.vonmises, f)(x, np.float32([0.5, 2, 10, -1, 1])), 1e-5)
    alpha = np.float32([1.5, 2.0, 3.0])
    pts = np.float32([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.5, 0.6, -0.1]]).T
    for f in ("logpdf", "pdf"):
        _close(getattr(X.dirichlet, f)(pts, alpha), getattr(J.dirichlet, f)(pts, alpha), 1e-5)
        _close(getattr(X.dirichlet, f)(pts[:2], alpha), getattr(J.dirichlet, f)(pts[:2], alpha),
               1e-5)
    _close(xp.grad(lambda a: X.dirichlet.logpdf(pts[:, 0], a))(alpha),
           jax.grad(lambda a: J.dirichlet.logpdf(pts[:, 0], a))(alpha), 1e-5)
    with pytest.raises(XlapyError, match="alpha must be 1-dimensional"):
        X.dirichlet.logpdf(pts, pts)


def test_rankdata_and_mode():
    a = np.float32([[3, 1, 2, 3, 1, 5], [2, 2, 2, 0, 9, 0]])
    for method in ("average", "min", "max", "dense", "ordinal"):
        for axis in (None, 0, 1):
            _close(X.rankdata(a, method, axis=axis), J.rankdata(a, method, axis=axis))
    _close(xp.jit(lambda v: X.rankdata(v, axis=1))(a), J.rankdata(a, axis=1))
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got, want = X.mode(a, axis, keepdims=keepdims), J.mode(a, axis, keepdims=keepdims)
            _close(got.mode, want.mode)
            _close(got.count, want.count)
    with pytest.raises(XlapyError, match="method"):
        X.rankdata(a, "first")
