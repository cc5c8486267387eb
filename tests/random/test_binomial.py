"""xlapy.random.binomial and multinomial: the sample distributions against scipy.stats
(chi-square goodness of fit, means, variances, fixed seeds), edge cases, and shapes and
dtypes against jax.random (by abstract evaluation: JAX's bits depend on its algorithm)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.stats as st

import xlapy as xp
import xlapy.random as xr
from xlapy.errors import XlapyError

# columns: inversion (n p <= 10), BTRS (n p > 10), p > 1/2 (mirrored), n = 0, p = 0, p = 1,
# large n, a float n (floored)
N = np.float32([10, 100, 60, 0, 7, 7, 1e6, 20.7])
P = np.float32([0.3, 0.35, 0.9, 0.5, 0.0, 1.0, 0.4, 0.25])
DRAWS = 20000


def _chi2_pvalue(x, n, p):
    """Goodness of fit of integer samples x to Binomial(n, p), bins of expected count >= 5
    (the tails pooled)."""
    ks = np.arange(n + 1)
    pmf = st.binom.pmf(ks, n, p)
    lo, hi = int(st.binom.ppf(1e-4, n, p)), int(st.binom.isf(1e-4, n, p))
    edges = np.arange(lo, hi + 1)
    observed = np.array([np.sum(x <= lo)] + [np.sum(x == k) for k in edges[1:-1]]
                        + [np.sum(x >= hi)])
    expected = np.concatenate([[pmf[:lo + 1].sum()], pmf[lo + 1:hi], [pmf[hi:].sum()]])
    expected = expected / expected.sum() * x.size
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return st.chisquare(obs, exp).pvalue


@pytest.fixture(scope="module")
def samples():
    f = xp.jit(lambda k, n, p: xr.binomial(k, n, p, shape=(DRAWS, N.size)))
    return np.asarray(f(xr.PRNGKey(1234), N, P))


def test_binomial_distribution(samples):
    assert samples.dtype == np.float32 and samples.shape == (DRAWS, N.size)
    for j, (n, p) in enumerate(zip(N, P)):
        x, n = samples[:, j], np.floor(n)
        assert np.all(x == np.floor(x)) and x.min() >= 0 and x.max() <= n, (n, p)
        mean, var = st.binom.stats(n, p)
        se = np.sqrt(var / DRAWS)
        assert abs(x.mean() - mean) <= 5 * se + 1e-6 * n, (n, p, x.mean(), mean)
        if var > 0:
            assert abs(x.var() / var - 1) < 0.05, (n, p, x.var(), var)
        else:
            assert np.all(x == mean), (n, p, np.unique(x))
        if 0 < var and n < 1000:
            assert _chi2_pvalue(x.astype(np.int64), int(n), float(p)) > 1e-3, (n, p)


def test_binomial_eager_equals_jit(samples):
    eager = xr.binomial(xr.PRNGKey(1234), N, P, shape=(DRAWS, N.size))
    np.testing.assert_array_equal(np.asarray(eager), samples)


def test_binomial_invalid_parameters():
    n = np.float32([np.nan, -1, np.inf, 5, 5, np.inf, 3])
    p = np.float32([0.5, 0.5, 0.5, np.nan, -0.1, 0.7, 1.0])
    got = np.asarray(xr.binomial(xr.PRNGKey(0), n, p))
    want = np.asarray(jax.random.binomial(jax.random.PRNGKey(0), n, p))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.inf, np.nan, np.nan, np.inf, 3])


@pytest.mark.parametrize("n,p,shape,dtype", [
    (5, 0.5, None, None),
    (np.arange(3.0), 0.5, None, np.float16),
    (np.int32([[3], [4]]), np.float32([0.1, 0.2, 0.3]), None, None),
    (10, np.float32([0.1, 0.2]), (4, 2), None),
    (np.float32(3), np.float32(0.2), (2, 3), "bfloat16"),
])
def test_binomial_shapes_and_dtypes_as_jax(n, p, shape, dtype):
    want = jax.eval_shape(lambda k: jax.random.binomial(k, n, p, shape, dtype),
                          jax.random.PRNGKey(0))
    got = xp.eval_shape(lambda k: xr.binomial(k, n, p, shape, dtype), xr.PRNGKey(0))
    assert (tuple(got.shape), np.dtype(got.dtype)) == (tuple(want.shape), np.dtype(want.dtype))


def test_multinomial_distribution():
    p = np.float32([0.1, 0.0, 0.25, 0.65])
    n = np.float32([40, 0, 3000])
    f = xp.jit(lambda k, n, p: xr.multinomial(k, n, p, shape=(3000, 3, 4)))
    x = np.asarray(f(xr.PRNGKey(7), n, p))
    assert x.dtype == np.float32 and x.shape == (3000, 3, 4)
    np.testing.assert_array_equal(x.sum(-1), np.broadcast_to(n, (3000, 3)))
    assert np.all(x[..., 1] == 0) and np.all(x[:, 1] == 0)
    for j in (0, 2):
        mean = n[j] * p
        cov = n[j] * (np.diag(p) - np.outer(p, p))
        se = np.sqrt(np.diag(cov) / x.shape[0])
        np.testing.assert_array_less(np.abs(x[:, j].mean(0) - mean), 5 * se + 1e-6)
        got_cov = np.cov(x[:, j].T)
        np.testing.assert_allclose(got_cov, cov, rtol=0.1, atol=0.05 * n[j] * 0.1)
    # each marginal is Binomial(n, p_i)
    assert _chi2_pvalue(x[:, 0, 2].astype(np.int64), 40, 0.25) > 1e-3


@pytest.mark.parametrize("n,p,shape", [
    (10, np.float32([0.2, 0.8]), None),
    (np.float32([5, 6]), np.float32([[0.5, 0.5], [0.1, 0.9]]), None),
    (10, np.float32([0.2, 0.3, 0.5]), (4, 3)),
])
def test_multinomial_shapes_as_jax(n, p, shape):
    want = jax.eval_shape(lambda k: jax.random.multinomial(k, n, p, shape=shape),
                          jax.random.PRNGKey(0))
    got = xp.eval_shape(lambda k: xr.multinomial(k, n, p, shape=shape), xr.PRNGKey(0))
    assert (tuple(got.shape), np.dtype(got.dtype)) == (tuple(want.shape), np.dtype(want.dtype))


def test_bad_arguments():
    k = xr.PRNGKey(0)
    with pytest.raises(XlapyError, match="float dtype"):
        xr.binomial(k, 5, 0.5, dtype=np.int32)
    with pytest.raises(XlapyError, match="broadcast"):
        xr.binomial(k, np.ones(3), 0.5, shape=(2,))
    with pytest.raises(XlapyError, match="at least one dimension"):
        xr.multinomial(k, 5, 0.5)
    with pytest.raises(XlapyError, match="unroll"):
        xr.multinomial(k, 5, np.float32([0.5, 0.5]), unroll=0)


def test_vmap_over_keys_and_counts():
    keys = xr.split(xr.PRNGKey(3), 4)
    n = np.float32([1, 10, 50, 100])
    got = xp.vmap(lambda k, m: xr.binomial(k, m, 0.3, shape=(5,)))(keys, n)
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(got[i]),
                                      np.asarray(xr.binomial(keys[i], n[i], 0.3, shape=(5,))))
