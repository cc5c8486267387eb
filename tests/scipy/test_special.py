"""xlapy.scipy.special and xlapy.scipy.stats against SciPy (values, float32 and float64)
and JAX (gradients), eagerly and under jit."""

from __future__ import annotations

import jax
import jax.scipy.special as jss
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import xlapy as xp
import xlapy.scipy.special as xs
import xlapy.scipy.stats as xst

rng = np.random.default_rng(0)
X = np.concatenate([rng.standard_normal(40) * 3, [0.0, 0.5, 1.0, 2.0, 6.0, 9.0, -0.3, -7.0]])
U = np.concatenate([rng.uniform(-1, 1, 40), [0.0, 0.999, -0.9999]])
P = np.concatenate([rng.uniform(0, 1, 40), [1e-10, 1e-30, 0.5, 0.999999]])
G = np.concatenate([rng.uniform(0.01, 30, 40), [-0.5, -2.5, 0.1, 1.0, 2.0, 1e-5, 150.0]])
GP = G[G > 0]

# name, xlapy function, reference (SciPy, float64), arguments, rtol f32, rtol f64
CASES = [
    ("erf", xs.erf, ss.erf, (X,), 1e-6, 1e-14),
    ("erfc", xs.erfc, ss.erfc, (X,), 2e-6, 1e-14),
    ("erfinv", xs.erfinv, ss.erfinv, (U,), 1e-5, 1e-13),
    ("ndtr", xs.ndtr, ss.ndtr, (X,), 2e-6, 1e-14),
    ("ndtri", xs.ndtri, ss.ndtri, (P,), 1e-5, 1e-14),
    ("log_ndtr", xs.log_ndtr, ss.log_ndtr, (np.concatenate([X, [-30.0, -50.0]]),), 1e-5,
     1e-12),
    ("gammaln", xs.gammaln, ss.gammaln, (G,), 1e-5, 1e-13),
    ("gamma", xs.gamma, ss.gamma, (G[G < 20],), 1e-5, 1e-12),
    ("digamma", xs.digamma, ss.digamma, (G,), 1e-5, 1e-13),
    ("betaln", xs.betaln, ss.betaln, (GP[:15] + 1, GP[15:30] + 1), 1e-5, 1e-13),
    ("zeta", xs.zeta, ss.zeta, (rng.uniform(1.5, 6, 20), rng.uniform(0.5, 5, 20)), 1e-5,
     1e-13),
    ("polygamma", lambda x: xs.polygamma(1, x), lambda x: ss.polygamma(1, x), (GP,), 1e-5,
     1e-13),
    ("multigammaln", lambda a: xs.multigammaln(a, 3), lambda a: ss.multigammaln(a, 3),
     (GP[GP > 2],), 1e-5, 1e-13),
    ("xlogy", xs.xlogy, ss.xlogy, (np.array([0, 1, 2, 0.5]), np.array([0, 3, 0.5, 0])), 1e-6,
     1e-15),
    ("xlog1py", xs.xlog1py, ss.xlog1py, (np.array([0, 1, 2, 0.5]), np.array([-1, 3, 0.5, 0])),
     1e-6, 1e-15),
    ("entr", xs.entr, ss.entr, (np.array([0, 1, 2, 0.5, -1.0]),), 1e-6, 1e-15),
    ("rel_entr", xs.rel_entr, ss.rel_entr, (np.array([0, 1, 2, 0.5, -1.0, 1]),
                                             np.array([1, 3, 0.5, 0, 1, -1.0])), 1e-6, 1e-15),
    ("kl_div", xs.kl_div, ss.kl_div, (np.array([0, 1, 2, 0.5, -1.0]),
                                       np.array([1, 3, 0.5, 0, 1.0])), 1e-6, 1e-15),
    ("expit", xs.expit, ss.expit, (X,), 1e-6, 1e-15),
    ("logit", xs.logit, ss.logit, (np.abs(U) * 0.99 + 0.005,), 1e-5, 1e-14),
    ("logsumexp", lambda a: xs.logsumexp(a, axis=1), lambda a: ss.logsumexp(a, axis=1),
     (rng.standard_normal((4, 7)),), 1e-6, 1e-15),
    ("logsumexp_b", lambda a, b: xs.logsumexp(a, axis=0, b=b, keepdims=True),
     lambda a, b: ss.logsumexp(a, axis=0, b=b, keepdims=True),
     (rng.standard_normal((4, 7)), rng.standard_normal((4, 7))), 1e-5, 1e-14),
    ("softmax", lambda a: xs.softmax(a, axis=0), lambda a: ss.softmax(a, axis=0),
     (rng.standard_normal((4, 7)),), 1e-6, 1e-15),
    ("norm.logpdf", lambda x: xst.norm.logpdf(x, 1.0, 2.0), lambda x: st.norm.logpdf(x, 1, 2),
     (X,), 1e-6, 1e-14),
    ("norm.cdf", xst.norm.cdf, st.norm.cdf, (X,), 2e-6, 1e-14),
    ("norm.logcdf", xst.norm.logcdf, st.norm.logcdf, (X,), 1e-5, 1e-12),
    ("norm.ppf", lambda q: xst.norm.ppf(q, 0.5, 3.0), lambda q: st.norm.ppf(q, 0.5, 3.0),
     (P[:-2],), 1e-5, 1e-14),
    ("norm.sf", xst.norm.sf, st.norm.sf, (X,), 2e-6, 1e-14),
    ("norm.logsf", xst.norm.logsf, st.norm.logsf, (X,), 1e-5, 1e-12),
    ("logistic.logpdf", xst.logistic.logpdf, st.logistic.logpdf, (X,), 1e-6, 1e-14),
    ("logistic.cdf", xst.logistic.cdf, st.logistic.cdf, (X,), 1e-6, 1e-14),
    ("logistic.ppf", xst.logistic.ppf, st.logistic.ppf, (P[:-2],), 1e-5, 1e-13),
    ("bernoulli.logpmf", lambda k: xst.bernoulli.logpmf(k, 0.3),
     lambda k: st.bernoulli.logpmf(k, 0.3), (np.array([0.0, 1.0, 2.0, -1.0]),), 1e-6, 1e-15),
]


def _check(got, want, rtol, dtype):
    got = np.asarray(got)
    assert got.dtype == dtype, got.dtype
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol,
                               equal_nan=True)


@pytest.mark.parametrize("name,fn,ref,args,rtol32,rtol64", CASES, ids=[c[0] for c in CASES])
def test_values_against_scipy(name, fn, ref, args, rtol32, rtol64):
    with np.errstate(all="ignore"):
        want = np.asarray(ref(*args), np.float64)
        for dtype, rtol in ((np.float32, rtol32), (np.float64, rtol64)):
            if dtype == np.float32:
                want32 = np.asarray(ref(*[np.asarray(a, np.float32).astype(np.float64)
                                          for a in args]), np.float64)
                _check(fn(*[np.asarray(a, dtype) for a in args]), want32, rtol, dtype)
            else:
                with xp.enable_x64(True):  # float64 stays float64 (JAX's jax_enable_x64)
                    _check(fn(*[np.asarray(a, dtype) for a in args]), want, rtol, dtype)


JIT = ["erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "logsumexp_b", "norm.cdf"]


@pytest.mark.parametrize("name", JIT)
def test_jit_matches_eager(name):
    _, fn, _, args, rtol, _ = next(c for c in CASES if c[0] == name)
    args = [np.asarray(a, np.float32) for a in args]
    np.testing.assert_allclose(np.asarray(xp.jit(fn)(*args)), np.asarray(fn(*args)),
                               rtol=1e-6, atol=1e-6, equal_nan=True)


GRADS = [
    ("erf", xs.erf, jss.erf, 0.7),
    ("erfc", xs.erfc, jss.erfc, 1.7),
    ("erfinv", xs.erfinv, jss.erfinv, 0.3),
    ("ndtri", xs.ndtri, jss.ndtri, 0.2),
    ("log_ndtr", xs.log_ndtr, jss.log_ndtr, -3.0),
    ("gammaln", xs.gammaln, jss.gammaln, 3.5),
    ("digamma", xs.digamma, jss.digamma, 2.5),
    ("xlogy", lambda y: xs.xlogy(2.0, y), lambda y: jss.xlogy(2.0, y), 1.5),
    ("logsumexp", lambda a: xs.logsumexp(a * np.float32([1, 2, 3])),
     lambda a: jss.logsumexp(a * np.float32([1, 2, 3])), 0.4),
    ("norm.logpdf", lambda x: xst.norm.logpdf(x, 1.0, 2.0),
     lambda x: jst.norm.logpdf(x, 1.0, 2.0), 0.3),
    ("norm.logcdf", xst.norm.logcdf, jst.norm.logcdf, -2.0),
    ("mvn.logpdf", lambda m: xst.multivariate_normal.logpdf(
        np.float32([0.5, -1.0]), m * np.float32([1, 1]), np.float32([[2, 0.3], [0.3, 1]])),
     lambda m: jst.multivariate_normal.logpdf(
        np.float32([0.5, -1.0]), m * np.float32([1, 1]), np.float32([[2, 0.3], [0.3, 1]])),
     0.2),
]


@pytest.mark.parametrize("name,fn,jfn,x", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_jax(name, fn, jfn, x):
    x = np.float32(x)
    want = float(jax.grad(jfn)(x))
    np.testing.assert_allclose(float(xp.grad(fn)(x)), want, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(float(xp.jit(xp.grad(fn))(x)), want, rtol=2e-4, atol=1e-6)


def test_logsumexp_return_sign():
    a, b = np.array([1.0, 2.0]), np.array([1.0, -2.0])
    out, sign = xs.logsumexp(a, b=b, return_sign=True)
    want, wsign = ss.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose(out, want)
    assert float(sign) == wsign
    assert np.isnan(xs.logsumexp(a, b=b))


def test_multivariate_normal_logpdf_against_scipy():
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
    mean = np.array([0.1, -0.4, 1.0])
    x = rng.standard_normal((5, 3))
    want = st.multivariate_normal.logpdf(x, mean, cov)
    with xp.enable_x64(True):
        np.testing.assert_allclose(xst.multivariate_normal.logpdf(x, mean, cov), want,
                                   rtol=1e-12)
        np.testing.assert_allclose(xst.multivariate_normal.pdf(x, mean, cov),
                                   st.multivariate_normal.pdf(x, mean, cov), rtol=1e-12)
    got32 = xp.jit(xst.multivariate_normal.logpdf)(x.astype(np.float32),
                                                    mean.astype(np.float32),
                                                    cov.astype(np.float32))
    np.testing.assert_allclose(got32, want, rtol=1e-5)


def test_integer_inputs_become_float32():
    assert np.asarray(xs.gammaln(np.arange(1, 4))).dtype == np.float32
    assert np.asarray(xst.norm.pdf(np.arange(3))).dtype == np.float32


def test_polygamma_needs_a_concrete_order():
    with pytest.raises(Exception, match="order n of polygamma"):
        xp.jit(lambda n, x: xs.polygamma(n, x))(1, np.float32(2.0))
