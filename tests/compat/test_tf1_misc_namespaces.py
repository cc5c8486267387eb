"""TF 1.15 namespaces and symbols added together: the tf.distributions families (Gamma,
Exponential, Beta, Dirichlet, Multinomial, DirichletMultinomial, Laplace, StudentT) against
SciPy, tf.strings.format and the Unicode ops, tf.io.decode_compressed, tf.sysconfig
and tf.load_op_library, tf.config, tf.saved_model.main_op, the estimator parse specs,
session tensor handles and tf.nn.ctc_loss_v2 (against a NumPy forward recursion), in the
executor and with XLA auto-clustering."""

import gzip
import math
import os
import zlib

import numpy as np
import pytest
from scipy import integrate, special, stats

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (DataLossError, InvalidArgumentError, InvalidTypeError,
                                    NotFoundError)

from xlapy.compat.v1.ops.session_handle_ops import TensorHandle

from .conftest import jit_config
from .helpers import all_compiled, assert_close, run_both

R = np.random.default_rng(1115)


def run(*fetches, feed=None, config=None):
    with tf.Session(config=config) as s:
        return s.run(list(fetches), feed)


# ---- distributions: values against SciPy ---------------------------------------------------------

def _stats(d, x):
    return run(d.log_prob(x), d.prob(x), d.cdf(x), d.entropy(), d.mean(), d.variance(),
               d.stddev())


def test_gamma_and_exponential_against_scipy():
    c = np.array([0.7, 1.5, 3.0], np.float32)
    r = np.array([2.0, 0.5, 1.25], np.float32)
    x = R.uniform(0.1, 4.0, (4, 3)).astype(np.float32)
    d = tf.distributions.Gamma(concentration=c, rate=r)
    lp, p, cdf, h, m, v, sd = _stats(d, x)
    ref = stats.gamma(c, scale=1 / r)
    assert_close(lp, ref.logpdf(x).astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(p, ref.pdf(x).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(cdf, ref.cdf(x).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(m, c / r)
    assert_close(v, c / r ** 2)
    assert_close(sd, np.sqrt(c) / r)
    (mode,) = run(d.mode())
    assert np.isnan(mode[0]) and np.allclose(mode[1:], ((c - 1) / r)[1:])
    assert d.batch_shape.as_list() == [3] and d.event_shape.as_list() == []
    assert d.reparameterization_type == tf.distributions.FULLY_REPARAMETERIZED
    assert run(d.batch_shape_tensor())[0].tolist() == [3]

    rate = np.array([[0.5], [2.0]], np.float32)
    e = tf.distributions.Exponential(rate=rate)
    lp, p, cdf, h, m, v, sd = _stats(e, x[:1])
    ref = stats.expon(scale=1 / rate)
    assert_close(lp, ref.logpdf(x[:1]).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(cdf, ref.cdf(x[:1]).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(m, 1 / rate)
    assert_close(v, 1 / rate ** 2)
    assert_close(run(e.mode())[0], np.zeros_like(rate))
    assert isinstance(e, tf.distributions.Gamma) and e.batch_shape.as_list() == [2, 1]


def test_beta_against_scipy():
    a = np.array([0.5, 2.0, 3.5], np.float32)
    b = np.array([[1.5], [0.8]], np.float32)
    x = R.uniform(0.05, 0.95, (2, 3)).astype(np.float32)
    d = tf.distributions.Beta(concentration1=a, concentration0=b)
    lp, p, cdf, h, m, v, sd = _stats(d, x)
    ref = stats.beta(a, b)
    assert_close(lp, ref.logpdf(x).astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(cdf, ref.cdf(x).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(m, ref.mean().astype(np.float32), rtol=1e-6)
    assert_close(v, ref.var().astype(np.float32), rtol=1e-5)
    assert_close(sd, ref.std().astype(np.float32), rtol=1e-5)
    (mode,) = run(d.mode())
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where((a > 1) & (b > 1), (a - 1) / (a + b - 2), np.nan)
    np.testing.assert_allclose(mode, want, rtol=1e-6)
    assert d.batch_shape.as_list() == [2, 3]
    assert_close(run(d.total_concentration)[0], a + b)


def test_dirichlet_against_scipy():
    c = np.array([[0.8, 2.0, 3.0], [1.5, 1.2, 4.0]], np.float32)
    x = R.dirichlet([1, 1, 1], 2).astype(np.float32)
    d = tf.distributions.Dirichlet(c)
    lp, h, m, v, cov, mode = run(d.log_prob(x), d.entropy(), d.mean(), d.variance(),
                                 d.covariance(), d.mode())
    for i in range(2):
        ref = stats.dirichlet(c[i].astype(np.float64))
        assert_close(lp[i], np.float32(ref.logpdf(x[i])), rtol=1e-5)
        assert_close(h[i], np.float32(ref.entropy()), rtol=1e-5, atol=1e-6)
        assert_close(m[i], ref.mean().astype(np.float32), rtol=1e-6)
        assert_close(v[i], ref.var().astype(np.float32), rtol=1e-5)
        assert_close(cov[i], ref.cov().astype(np.float32), rtol=1e-5, atol=1e-7)
    assert np.isnan(mode[0]).all()
    assert_close(mode[1], (c[1] - 1) / (c[1].sum() - 3), rtol=1e-6)
    assert d.batch_shape.as_list() == [2] and d.event_shape.as_list() == [3]
    assert run(d.event_shape_tensor())[0].tolist() == [3]


def test_multinomial_and_dirichlet_multinomial_against_scipy():
    n = np.array([5.0, 8.0], np.float32)
    logits = np.array([[0.2, -1.0, 0.5], [1.0, 0.0, -0.5]], np.float32)
    counts = np.array([[2.0, 1.0, 2.0], [3.0, 3.0, 2.0]], np.float32)
    d = tf.distributions.Multinomial(total_count=n, logits=logits)
    probs = special.softmax(logits.astype(np.float64), -1)
    lp, p, m, v, cov = run(d.log_prob(counts), d.prob(counts), d.mean(), d.variance(),
                           d.covariance())
    for i in range(2):
        ref = stats.multinomial(int(n[i]), probs[i])
        assert_close(lp[i], np.float32(ref.logpmf(counts[i])), rtol=1e-5)
        assert_close(p[i], np.float32(ref.pmf(counts[i])), rtol=1e-5)
        assert_close(cov[i], ref.cov().astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(m, (n[:, None] * probs).astype(np.float32), rtol=1e-6)
    assert_close(v, (n[:, None] * probs * (1 - probs)).astype(np.float32), rtol=1e-5)
    assert d.batch_shape.as_list() == [2] and d.event_shape.as_list() == [3]
    assert d.reparameterization_type == tf.distributions.NOT_REPARAMETERIZED
    # probs= gives the same distribution; a zero probability with a zero count is fine
    dp = tf.distributions.Multinomial(total_count=4.0, probs=[0.5, 0.5, 0.0])
    (lpp,) = run(dp.log_prob([2.0, 2.0, 0.0]))
    assert_close(lpp, np.float32(stats.multinomial(4, [0.5, 0.5, 0]).logpmf([2, 2, 0])))

    conc = np.array([[0.5, 2.0, 1.5], [3.0, 1.0, 2.0]], np.float32)
    dm = tf.distributions.DirichletMultinomial(total_count=n, concentration=conc)
    lp, m, v, cov = run(dm.log_prob(counts), dm.mean(), dm.variance(), dm.covariance())
    for i in range(2):
        ref = stats.dirichlet_multinomial(conc[i].astype(np.float64), int(n[i]))
        assert_close(lp[i], np.float32(ref.logpmf(counts[i])), rtol=1e-5)
        assert_close(m[i], ref.mean().astype(np.float32), rtol=1e-5)
        assert_close(v[i], ref.var().astype(np.float32), rtol=1e-5)
        assert_close(cov[i], ref.cov().astype(np.float32), rtol=1e-5, atol=1e-6)
    assert dm.event_shape.as_list() == [3] and dm.batch_shape.as_list() == [2]


def test_laplace_and_student_t_against_scipy():
    loc = np.array([0.0, 1.0, -2.0], np.float32)
    scale = np.array([1.0, 0.5, 2.5], np.float32)
    x = R.standard_normal((4, 3)).astype(np.float32) * 2
    d = tf.distributions.Laplace(loc, scale)
    lp, p, cdf, h, m, v, sd = _stats(d, x)
    ref = stats.laplace(loc, scale)
    assert_close(lp, ref.logpdf(x).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(cdf, ref.cdf(x).astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5, atol=1e-6)
    assert_close(m, loc)
    assert_close(v, 2 * scale ** 2)
    assert_close(sd, np.sqrt(2) * scale, rtol=1e-6)
    assert_close(run(d.mode())[0], loc)

    df = np.array([0.8, 1.5, 5.0], np.float32)
    t = tf.distributions.StudentT(df=df, loc=loc, scale=scale)
    lp, p, cdf, h, m, v, sd = _stats(t, x)
    ref = stats.t(df, loc, scale)
    assert_close(lp, ref.logpdf(x).astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(cdf, ref.cdf(x).astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5, atol=1e-5)
    assert np.isnan(m[0]) and np.allclose(m[1:], loc[1:])
    assert np.isnan(v[0]) and np.isinf(v[1]) and np.isclose(v[2], 5 / 3 * scale[2] ** 2)
    assert t.batch_shape.as_list() == [3]


def test_kl_divergences_against_integrals():
    g1 = tf.distributions.Gamma(np.float64(2.0), np.float64(1.5))
    g2 = tf.distributions.Gamma(np.float64(3.5), np.float64(0.7))
    e = tf.distributions.Exponential(np.float64(0.9))
    b1 = tf.distributions.Beta(np.float64(2.0), np.float64(3.0))
    b2 = tf.distributions.Beta(np.float64(0.7), np.float64(1.4))
    c1, c2 = np.array([1.5, 0.7, 2.5]), np.array([2.0, 1.0, 0.6])
    d1, d2 = tf.distributions.Dirichlet(c1), tf.distributions.Dirichlet(c2)
    kg, ke, kb, kd = run(tf.distributions.kl_divergence(g1, g2), e.kl_divergence(g2),
                         tf.distributions.kl_divergence(b1, b2),
                         tf.distributions.kl_divergence(d1, d2))

    def kl_quad(p, q, lo, hi):
        return integrate.quad(lambda t: p.pdf(t) * (p.logpdf(t) - q.logpdf(t)), lo, hi)[0]
    sg1, sg2 = stats.gamma(2.0, scale=1 / 1.5), stats.gamma(3.5, scale=1 / 0.7)
    assert np.isclose(kg, kl_quad(sg1, sg2, 0, np.inf), rtol=1e-7)
    assert np.isclose(ke, kl_quad(stats.expon(scale=1 / 0.9), sg2, 0, np.inf), rtol=1e-7)
    assert np.isclose(kb, kl_quad(stats.beta(2, 3), stats.beta(0.7, 1.4), 0, 1), rtol=1e-7)
    # Dirichlet: -H(p) - E_p[log q], E_p[log x_i] = digamma(c_i) - digamma(sum c)
    e_log = special.digamma(c1) - special.digamma(c1.sum())
    cross = -(np.sum((c2 - 1) * e_log) - (special.gammaln(c2).sum() -
                                          special.gammaln(c2.sum())))
    assert np.isclose(kd, cross - stats.dirichlet(c1).entropy(), rtol=1e-10)
    with pytest.raises(tf.errors.UnimplementedError, match="Laplace"):
        tf.distributions.kl_divergence(tf.distributions.Laplace(0.0, 1.0),
                                       tf.distributions.Laplace(0.0, 2.0))


# ---- distributions: samples and gradients --------------------------------------------------------

def test_samples_match_moments_and_are_seeded():
    n = 20000
    dists = {
        "gamma": tf.distributions.Gamma([2.0, 0.6], [1.5, 2.0]),
        "exp": tf.distributions.Exponential([0.5, 3.0]),
        "beta": tf.distributions.Beta([2.0, 0.5], [3.0, 0.5]),
        "laplace": tf.distributions.Laplace([1.0, -1.0], [0.5, 2.0]),
        "t": tf.distributions.StudentT([5.0, 10.0], [0.0, 2.0], [1.0, 0.5]),
        "dir": tf.distributions.Dirichlet([[1.0, 2.0, 3.0], [0.3, 0.3, 5.0]]),
        "mult": tf.distributions.Multinomial([4.0, 7.0], probs=[[0.2, 0.3, 0.5],
                                                                 [0.6, 0.3, 0.1]]),
        "dm": tf.distributions.DirichletMultinomial([4.0, 7.0], [[1.0, 2.0, 3.0],
                                                                 [5.0, 1.0, 0.5]]),
    }
    names = list(dists)
    draws = [dists[k].sample(n, seed=7) for k in names]
    moments = [(dists[k].mean(), dists[k].variance()) for k in names]
    got, mv = run(draws, moments)
    for k, s, (m, v) in zip(names, got, mv):
        assert s.shape == (n,) + tuple(dists[k].batch_shape.as_list()) + \
            tuple(dists[k].event_shape.as_list()), k
        se = np.sqrt(v / n)
        assert np.all(np.abs(s.mean(0) - m) < 5 * se + 1e-3), (k, s.mean(0), m)
        assert np.allclose(s.var(0), v, rtol=0.1, atol=1e-3), (k, s.var(0), v)
    mult, dm = got[names.index("mult")], got[names.index("dm")]
    for s, total in ((mult, [4, 7]), (dm, [4, 7])):
        assert np.array_equal(s, np.round(s)) and (s >= 0).all()
        assert np.array_equal(s.sum(-1), np.broadcast_to(total, s.shape[:-1]))
    assert np.allclose(got[names.index("dir")].sum(-1), 1.0, atol=1e-5)
    # a graph seed and op seeds make the draws repeatable, in another graph too
    again = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            d = tf.distributions.Beta([2.0, 0.5], [3.0, 0.5])
            m = tf.distributions.Multinomial(5.0, logits=[0.0, 1.0])
            again.append(run(d.sample([2, 3], seed=1), m.sample(4, seed=2)))
    assert again[0][0].shape == (2, 3, 2) and again[0][1].shape == (4, 2)
    assert all(np.array_equal(a, b) for a, b in zip(again[0], again[1]))


def test_reparameterized_sample_gradients():
    conc = tf.Variable(np.float32(2.0))
    rate = tf.Variable(np.float32(1.5))
    g = tf.distributions.Gamma(conc, rate).sample(20000, seed=3)
    b = tf.distributions.Beta(conc, rate).sample(20000, seed=4)
    dg = tf.gradients(tf.reduce_mean(g), [conc, rate])
    db = tf.gradients(tf.reduce_mean(b), [conc, rate])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        gv, dgv, dbv = s.run([g, dg, db])
    # E[g] = c / r: d/dc = 1/r (the implicit gradient), d/dr = -mean / r exactly
    assert abs(dgv[0] - 1 / 1.5) < 0.03
    assert np.isclose(dgv[1], -gv.mean() / 1.5, rtol=1e-4)
    # E[beta] = a / (a + b): d/da = b / (a+b)^2, d/db = -a / (a+b)^2
    assert abs(dbv[0] - 1.5 / 3.5 ** 2) < 0.01 and abs(dbv[1] + 2.0 / 3.5 ** 2) < 0.01


def test_log_prob_gradients_against_closed_forms_and_differences():
    x = np.array([0.3, 1.7, 2.5])
    c, r, a, b = np.array([1.5, 2.5, 0.8]), np.array([0.7, 2.0, 1.1]), 1.7, 0.9
    df, loc, sc = np.array([3.0, 1.5, 7.0]), 0.4, 1.3
    params = [tf.constant(v, tf.float64) for v in (c, r, a, b, df, loc, sc)]
    tc, tr, ta, tb, tdf, tloc, tsc = params
    lg = tf.reduce_sum(tf.distributions.Gamma(tc, tr).log_prob(x))
    lb = tf.reduce_sum(tf.distributions.Beta(ta, tb).log_prob(x / 3))
    lt = tf.reduce_sum(tf.distributions.StudentT(tdf, tloc, tsc).log_prob(x))
    (gc, gr), (ga, gb), (gdf, gloc, gsc) = run(
        tf.gradients(lg, [tc, tr]), tf.gradients(lb, [ta, tb]),
        tf.gradients(lt, [tdf, tloc, tsc]))
    # the derivatives of the log densities in closed form
    np.testing.assert_allclose(gc, np.log(r) + np.log(x) - special.digamma(c), rtol=1e-10)
    np.testing.assert_allclose(gr, c / r - x, rtol=1e-10)
    u = x / 3
    np.testing.assert_allclose(ga, np.sum(np.log(u) - special.digamma(a) +
                                          special.digamma(a + b)), rtol=1e-10)
    np.testing.assert_allclose(gb, np.sum(np.log1p(-u) - special.digamma(b) +
                                          special.digamma(a + b)), rtol=1e-10)
    # Student's t against central differences of SciPy's log density
    eps = 1e-6

    def diff(f, v):
        return (f(v + eps) - f(v - eps)) / (2 * eps)
    np.testing.assert_allclose(
        gdf, diff(lambda d: stats.t.logpdf(x, d, loc, sc), df), rtol=1e-6)
    np.testing.assert_allclose(
        gloc, diff(lambda m: stats.t.logpdf(x, df, m, sc).sum(), loc), rtol=1e-6)
    np.testing.assert_allclose(
        gsc, diff(lambda s_: stats.t.logpdf(x, df, loc, s_).sum(), sc), rtol=1e-6)


def test_distributions_compile_with_xla():
    x = R.uniform(0.2, 0.8, (5, 3)).astype(np.float32)

    def build():
        a = tf.placeholder(tf.float32, [3])
        g = tf.distributions.Gamma(a, 2.0)
        be = tf.distributions.Beta(a, 1.5)
        la = tf.distributions.Laplace(a, 0.5)
        st = tf.distributions.StudentT(4.0, a, 2.0)
        di = tf.distributions.Dirichlet(a)
        out = [g.log_prob(x), g.entropy(), be.log_prob(x), be.entropy(), la.log_prob(x),
               la.cdf(x), st.log_prob(x), st.entropy(), di.log_prob(x / x.sum(1, keepdims=True)),
               di.entropy(), tf.distributions.kl_divergence(be, tf.distributions.Beta(1.0, a)),
               tf.distributions.kl_divergence(g, tf.distributions.Gamma(1.0, a)),
               g.cdf(x), be.cdf(x), st.cdf(x)]
        return out, {a: np.array([0.7, 1.5, 3.0], np.float32)}
    ex, xla, sess, fetches, feed = run_both(build)
    assert_close(xla, ex, rtol=2e-5, atol=2e-5)
    all_compiled(sess, fetches, feed)   # every op of the densities lowers to XLA
    a = np.array([0.7, 1.5, 3.0])
    assert_close(xla[2], stats.beta(a, 1.5).logpdf(x).astype(np.float32), rtol=1e-4,
                 atol=1e-5)
    assert_close(xla[-3], stats.gamma(a, scale=0.5).cdf(x).astype(np.float32), rtol=1e-4,
                 atol=1e-6)
    assert_close(xla[-1], stats.t(4.0, a, 2.0).cdf(x).astype(np.float32), rtol=1e-4,
                 atol=1e-6)


def test_distribution_errors():
    with pytest.raises(ValueError, match="probs or logits"):
        tf.distributions.Multinomial(3.0, logits=[0.0, 1.0], probs=[0.5, 0.5])
    with pytest.raises(ValueError, match="probs or logits"):
        tf.distributions.Multinomial(3.0)
    with pytest.raises(InvalidArgumentError, match="rate is float64"):
        tf.distributions.Gamma(tf.constant(1.0), tf.constant(2.0, tf.float64))
    with pytest.raises(ValueError, match="at least one dimension"):
        tf.distributions.Dirichlet(1.0)
    with pytest.raises(ValueError, match="concentration1 and concentration0"):
        tf.distributions.Beta(concentration1=1.0)
    d = tf.distributions.Gamma([0.5, 2.0], 1.0, allow_nan_stats=False)
    with pytest.raises(InvalidArgumentError, match="mode not defined"):
        run(d.mode())
    t = tf.distributions.StudentT(1.0, 0.0, 1.0, allow_nan_stats=False)
    with pytest.raises(InvalidArgumentError, match="variance not defined"):
        run(t.variance())
    with pytest.raises(tf.errors.UnimplementedError, match="entropy"):
        tf.distributions.Multinomial(2.0, probs=[0.5, 0.5]).entropy()


# ---- tf.strings.format ---------------------------------------------------------------------------

def test_string_format_prints_as_tf():
    fmt = tf.strings.format
    got = run(fmt("tensor: {}, suffix", tf.range(10)),
              fmt("{}, {}", (tf.reshape(tf.range(100), [10, 10]),) * 2, summarize=2),
              fmt("{}", tf.constant(np.float32(1 / 3))),
              fmt("{} {}", [tf.constant([0.1, 2.5e-8, 1e20], tf.float32),
                            tf.constant(np.float64(0.1))]),
              fmt("{} {}", [tf.constant([True, False]), tf.constant([[-1], [2]], tf.int64)]),
              fmt("<{}>", tf.constant([b'a"b', "é\n\\".encode()])),
              fmt("{}", tf.constant(b"s")),
              fmt("x=%s;", tf.range(5), placeholder="%s", summarize=-1),
              fmt("{}", tf.zeros([0, 3])),
              fmt("{}", tf.constant([np.nan, np.inf, -np.inf], tf.float32)),
              fmt("no inputs", []),
              fmt("{}", tf.reshape(tf.range(12), [2, 2, 3]), summarize=1))
    want = [b"tensor: [0 1 2 ... 7 8 9], suffix",
            b"[[0 1 ... 8 9]\n [10 11 ... 18 19]\n ...\n [80 81 ... 88 89]\n"
            b" [90 91 ... 98 99]], [[0 1 ... 8 9]\n [10 11 ... 18 19]\n ...\n"
            b" [80 81 ... 88 89]\n [90 91 ... 98 99]]",
            b"0.333333343",
            b"[0.1 2.5e-08 1e+20] 0.1",
            b"[1 0] [[-1]\n [2]]",
            b'<["a\\"b" "\\303\\251\\n\\\\"]>',
            b'"s"',
            b"x=[0 1 2 3 4];",
            b"[]",
            b"[nan inf -inf]",
            b"no inputs",
            b"[[[0 ... 2]\n  [3 ... 5]]\n\n [[6 ... 8]\n  [9 ... 11]]]"]
    for g, w in zip(got, want):
        assert g == w, (g, w)
    # under auto-jit the op stays in the executor, fed by a compiled cluster; each float
    # is printed so that it reads back as the very float32
    x = tf.placeholder(tf.float32, [3])
    y = tf.exp(x) * 2.0 + 1.0
    (v, yv) = run(tf.strings.format("v={}", y), y, feed={x: [0.0, 1.0, 2.0]},
                  config=jit_config())
    assert v.startswith(b"v=[3 ") and v.endswith(b"]")
    assert [np.float32(float(t)) for t in v[3:-1].split()] == list(yv)


def test_string_format_errors():
    with pytest.raises(ValueError, match="num placeholders"):
        tf.strings.format("{} {}", tf.range(3))
    with pytest.raises(TypeError, match="template"):
        tf.strings.format(b"{}", tf.range(3))


# ---- Unicode -------------------------------------------------------------------------------------

WORDS = ["héllo".encode(), b"ab\xffc", b"", "𝄞x".encode()]


def _sparse_rows(v):
    rows = [[] for _ in range(v.dense_shape[0])]
    for (i, j), val in zip(v.indices, v.values):
        assert j == len(rows[i])
        rows[i].append(val)
    return rows


def test_unicode_decode_and_split():
    x = tf.constant(WORDS)
    dec, (cps, offs), chars, (chars2, offs2), scalar, scalar_split = run(
        tf.strings.unicode_decode(x, "UTF-8"),
        tf.strings.unicode_decode_with_offsets(x, "UTF-8", errors="ignore"),
        tf.strings.unicode_split(x, "UTF-8"),
        tf.strings.unicode_split_with_offsets(x, "UTF-8", replacement_char=ord("?")),
        tf.strings.unicode_decode("héllo", "UTF-8"),
        tf.strings.unicode_split("héllo", "UTF-8"))
    want = [[104, 233, 108, 108, 111], [97, 98, 0xFFFD, 99], [], [0x1D11E, 120]]
    assert _sparse_rows(dec) == want
    assert dec.dense_shape.tolist() == [4, 5] and dec.values.dtype == np.int32
    assert _sparse_rows(cps) == [[104, 233, 108, 108, 111], [97, 98, 99], [], [0x1D11E, 120]]
    assert _sparse_rows(offs) == [[0, 1, 3, 4, 5], [0, 1, 3], [], [0, 4]]
    assert _sparse_rows(chars) == [[c.encode() for c in "héllo"],
                                   [b"a", b"b", "\ufffd".encode(), b"c"], [],
                                   ["𝄞".encode(), b"x"]]
    assert _sparse_rows(chars2)[1] == [b"a", b"b", b"?", b"c"]
    assert _sparse_rows(offs2)[1] == [0, 1, 2, 3]
    assert scalar.tolist() == [104, 233, 108, 108, 111] and scalar.dtype == np.int32
    assert scalar_split.tolist() == [c.encode() for c in "héllo"]
    # 2-D input, UTF-16-BE, control characters
    y = tf.constant([["ab".encode("utf-16-be"), "é\x01".encode("utf-16-be")],
                     ["𝄞".encode("utf-16-be"), b""]])
    d2, d3 = run(tf.strings.unicode_decode(y, "UTF-16-BE", replace_control_characters=True),
                 tf.strings.unicode_decode_with_offsets(y, "UTF-16-BE")[1])
    assert d2.dense_shape.tolist() == [2, 2, 2]
    assert d2.indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0]]
    assert d2.values.tolist() == [97, 98, 233, 0xFFFD, 0x1D11E]
    assert d3.values.tolist() == [0, 2, 0, 2, 0]


def test_unicode_encode_and_transcode():
    x = tf.constant(WORDS)
    dec = tf.strings.unicode_decode(x, "UTF-8")
    dense2 = tf.constant([[104, 233], [0x1D11E, 65]])
    got = run(tf.strings.unicode_encode(dec, "UTF-8"),
              tf.strings.unicode_encode(dense2, "UTF-16-BE"),
              tf.strings.unicode_encode(tf.constant([72, 105]), "UTF-32-BE"),
              tf.strings.unicode_encode(tf.constant([72, -5, 0xD800, 0x110000, 105]), "UTF-8",
                                        errors="ignore"),
              tf.strings.unicode_encode(tf.constant([72, -5, 105]), "UTF-8",
                                        replacement_char=ord("*")),
              tf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE"),
              tf.strings.unicode_transcode(x, "UTF-8", "UTF-8", errors="ignore"),
              tf.strings.unicode_transcode(tf.constant([["\x02a".encode()]]), "UTF-8", "UTF-8",
                                           replace_control_characters=True,
                                           replacement_char=ord("#")))
    assert got[0].tolist() == [b"h\xc3\xa9llo", "ab\ufffdc".encode(), b"", "𝄞x".encode()]
    assert got[1].tolist() == ["hé".encode("utf-16-be"), "𝄞A".encode("utf-16-be")]
    assert got[2] == "Hi".encode("utf-32-be")
    assert got[3] == b"Hi" and got[4] == b"H*i"
    assert got[5].tolist() == [w.decode("utf-8", "replace").encode("utf-16-be")
                               for w in WORDS]
    assert got[6].tolist() == [b"h\xc3\xa9llo", b"abc", b"", "𝄞x".encode()]
    assert got[7].tolist() == [[b"#a"]]
    with pytest.raises(InvalidArgumentError, match="strict"):
        run(tf.strings.unicode_decode(x, "UTF-8", errors="strict"))
    with pytest.raises(InvalidArgumentError, match="strict"):
        run(tf.strings.unicode_encode([65, -1], "UTF-8", errors="strict"))
    with pytest.raises(InvalidArgumentError, match="output_encoding"):
        tf.strings.unicode_encode([65], "latin-1")
    with pytest.raises(InvalidArgumentError, match="input encoding"):
        tf.strings.unicode_decode(x, "no-such-codec")
    with pytest.raises(InvalidArgumentError, match="errors"):
        tf.strings.unicode_decode(x, "UTF-8", errors="bogus")
    with pytest.raises(InvalidTypeError, match="int32"):
        tf.strings.unicode_encode(tf.constant([1.0]), "UTF-8")
    with pytest.raises(InvalidArgumentError, match="rank >= 1"):
        tf.strings.unicode_encode(tf.constant(65), "UTF-8")


# ---- tf.io.decode_compressed ---------------------------------------------------------------------

def test_decode_compressed():
    data = [b"hello " * 50, b"", bytes(range(256))]
    z = [zlib.compress(d) for d in data]
    gz = [gzip.compress(d) for d in data]
    got = run(tf.io.decode_compressed(z, "ZLIB"), tf.decode_compressed(gz, "GZIP"),
              tf.io.decode_compressed(tf.constant([[b"raw"]])),
              tf.io.decode_compressed(tf.constant(z[0]), compression_type="ZLIB"),
              config=jit_config())
    assert got[0].tolist() == data and got[1].tolist() == data
    assert got[2].tolist() == [[b"raw"]] and got[3] == data[0]
    with pytest.raises(DataLossError, match="ZLIB"):
        run(tf.io.decode_compressed([z[0][:-5]], "ZLIB"))
    with pytest.raises(DataLossError, match="GZIP"):
        run(tf.io.decode_compressed([b"not gzip"], "GZIP"))
    with pytest.raises(InvalidArgumentError, match="Only ZLIB, GZIP"):
        tf.io.decode_compressed(z, "BZIP2")
    with pytest.raises(InvalidTypeError, match="string"):
        tf.io.decode_compressed(tf.constant([1, 2]))


# ---- tf.sysconfig, tf.load_op_library, tf.config -------------------------------------------------

def test_sysconfig_and_custom_op_libraries(tmp_path):
    inc, lib = tf.sysconfig.get_include(), tf.sysconfig.get_lib()
    assert os.path.isdir(inc) and os.path.isfile(os.path.join(lib, "__init__.py"))
    assert tf.sysconfig.get_compile_flags()[0] == "-I" + inc
    assert "-D_GLIBCXX_USE_CXX11_ABI=0" in tf.sysconfig.get_compile_flags()
    assert tf.sysconfig.get_link_flags() == ["-L" + lib]
    so = tmp_path / "zero_out.so"
    so.write_bytes(b"\x7fELF")
    for fn in (tf.load_op_library, tf.load_library, tf.load_file_system_library):
        with pytest.raises(NotFoundError, match="zero_out.so.*custom C\\+\\+ ops"):
            fn(str(so))
    with pytest.raises(NotFoundError, match="no such file"):
        tf.load_op_library(str(tmp_path / "missing.so"))


def test_config_devices_and_threads():
    from xlapy.backends.cpu.options import default_num_threads
    exp = tf.config.experimental
    phys = exp.list_physical_devices()
    cpu = exp.list_physical_devices("CPU")
    assert [d.device_type for d in cpu] == ["CPU"] and cpu[0].name == "/physical_device:CPU:0"
    assert "XLA_CPU" in [d.device_type for d in phys]
    assert exp.list_physical_devices("GPU") == []
    assert [d.name for d in exp.list_logical_devices("CPU")] == \
        ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert exp.get_visible_devices() == phys
    xla = exp.list_physical_devices("XLA_CPU")
    try:
        exp.set_visible_devices([], "XLA_CPU")
        assert exp.get_visible_devices("XLA_CPU") == [] and exp.get_visible_devices("CPU") == cpu
        assert exp.list_logical_devices("XLA_CPU") == []
        exp.set_visible_devices(xla, "XLA_CPU")
        assert exp.get_visible_devices() == phys
        with pytest.raises(ValueError, match="CPU must stay visible"):
            exp.set_visible_devices([], "CPU")
        with pytest.raises(ValueError, match="not of device_type"):
            exp.set_visible_devices(cpu, "XLA_CPU")
    finally:
        exp.set_visible_devices(phys)
    with pytest.raises(ValueError, match="non-GPU"):
        exp.set_memory_growth(cpu[0], True)
    with pytest.raises(ValueError, match="non-GPU"):
        exp.get_memory_growth(cpu[0])
    with pytest.raises(ValueError, match="Unrecognized device"):
        exp.get_memory_growth(cpu[0]._replace(name="/physical_device:GPU:7"))

    th = tf.config.threading
    before = os.environ.get("XLAPY_NUM_THREADS")
    assert th.get_intra_op_parallelism_threads() == 0
    try:
        th.set_intra_op_parallelism_threads(3)
        assert th.get_intra_op_parallelism_threads() == 3 and default_num_threads() == 3
        th.set_inter_op_parallelism_threads(2)
        assert th.get_inter_op_parallelism_threads() == 2
        with pytest.raises(ValueError, match="non-negative"):
            th.set_intra_op_parallelism_threads(-1)
    finally:
        th.set_intra_op_parallelism_threads(0)
        th.set_inter_op_parallelism_threads(0)
    assert os.environ.get("XLAPY_NUM_THREADS") == before
    assert th.get_intra_op_parallelism_threads() == 0


# ---- tf.saved_model.main_op, estimator parse specs -----------------------------------------------

def test_main_op_initializes_variables_and_tables():
    v = tf.Variable(3.0)
    loc = tf.get_local_variable("loc", initializer=tf.constant(5.0))
    table = tf.contrib.lookup.index_table_from_tensor(["a", "b"])
    add = tf.assign_add(v, 1.0)
    op = tf.saved_model.main_op.main_op()
    op2 = tf.saved_model.main_op_with_restore(add.op.name)
    assert tf.saved_model.main_op.main_op_with_restore is tf.saved_model.main_op_with_restore
    with tf.Session() as s:
        s.run(op)
        assert s.run([v, loc]) == [3.0, 5.0]
        assert s.run(table.lookup(tf.constant(["b", "a"]))).tolist() == [1, 0]
        s.run(op2)  # initializes again, then runs the "restore" op after that
        assert s.run(v) == 4.0


def test_estimator_parse_example_specs():
    fc = tf.feature_column
    age = fc.numeric_column("age", shape=(2,), default_value=0.0)
    cols = [fc.bucketized_column(age, [1.0, 2.0]),
            fc.indicator_column(fc.categorical_column_with_vocabulary_list("color",
                                                                           ["r", "g"])),
            fc.embedding_column(fc.categorical_column_with_identity("id", 10), 3),
            fc.crossed_column(["color", "city"], 20)]
    spec = tf.estimator.classifier_parse_example_spec(cols, label_key="y",
                                                      weight_column="w")
    assert sorted(spec) == ["age", "city", "color", "id", "w", "y"]
    assert spec["age"] == tf.FixedLenFeature((2,), tf.float32, 0.0)
    assert spec["y"] == tf.FixedLenFeature((1,), tf.int64, None)
    assert spec["w"] == tf.FixedLenFeature((1,), tf.float32, None)
    assert spec["id"] == tf.VarLenFeature(tf.int64)
    assert spec["color"] == tf.VarLenFeature(tf.string)
    rspec = tf.estimator.regressor_parse_example_spec([age], label_key="price",
                                                      label_dimension=3, label_default=0.5)
    assert rspec == {"age": spec["age"],
                     "price": tf.FixedLenFeature((3,), tf.float32, 0.5)}
    with pytest.raises(ValueError, match="label should not be used as feature"):
        tf.estimator.classifier_parse_example_spec([age], label_key="age")
    with pytest.raises(ValueError, match="weight_column should be"):
        tf.estimator.regressor_parse_example_spec([age], "y", weight_column=cols[1])
    with pytest.raises(ValueError, match="label_dtype"):
        tf.estimator.classifier_parse_example_spec([age], "y", label_dtype=tf.float32)


# ---- session tensor handles ----------------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
def test_session_handles_keep_values_across_runs(jit):
    a = tf.placeholder(tf.float32, [2])
    c = tf.exp(a) * 2.0
    h_t = tf.get_session_handle(c)
    with tf.Session(config=jit_config() if jit else None) as s:
        h = s.run(h_t, {a: [0.0, 1.0]})
        h2 = s.run(h_t, {a: [1.0, 1.0]})
        assert isinstance(h, TensorHandle) and isinstance(h, bytes)
        assert h.handle != h2.handle and h.handle.endswith("device:CPU:0")
        p, v = tf.get_session_tensor(h.handle, tf.float32)
        y = v + 1.0
        want = np.float32(2) * np.exp(np.float32([0.0, 1.0])) + 1
        assert_close(s.run(y, {p: h.handle}), want)
        assert_close(s.run(y, {p: h}), want)               # the handle itself feeds too
        assert_close(h2.eval(), 2 * np.exp(np.float32([1.0, 1.0])))
        dp, deleter = tf.delete_session_tensor(h.handle)
        s.run(deleter, {dp: h.handle})
        with pytest.raises(InvalidArgumentError, match="not in the session store"):
            s.run(y, {p: h.handle})
        with pytest.raises(InvalidArgumentError, match="not in the session store"):
            s.run(deleter, {dp: h.handle})
        _, wrong = tf.get_session_tensor(h2.handle, tf.int32)
        with pytest.raises(InvalidArgumentError, match="float32, not int32"):
            s.run(wrong, {wrong.op.inputs[0]: h2.handle})
        h2.delete()
        with pytest.raises(InvalidArgumentError, match="not in the session store"):
            h2.eval()
    with tf.Session() as other:  # a handle is only valid in the session that made it
        with pytest.raises(InvalidArgumentError, match="not in the session store"):
            other.run(y, {p: h.handle})
    with pytest.raises(TypeError, match="must be of type Tensor"):
        tf.get_session_handle([1.0])


# ---- tf.nn.ctc_loss_v2 ---------------------------------------------------------------------------

def _ctc_ref(logits, labels, blank):
    """-log p(labels | logits) of one sequence (logits [T, C]), by the forward recursion."""
    lp = logits - special.logsumexp(logits, axis=1, keepdims=True)
    ext = [blank]
    for lab in labels:
        ext += [int(lab), blank]
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = lp[0, ext[0]]
    if len(ext) > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, len(lp)):
        new = np.full(len(ext), -np.inf)
        for s in range(len(ext)):
            terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
        alpha = new
    return -np.logaddexp(alpha[-1], alpha[-2] if len(ext) > 1 else -np.inf)


T, B, C = 6, 3, 5
CTC_LOGITS = R.standard_normal((T, B, C))
CTC_LOGIT_LEN = np.array([6, 5, 4], np.int32)


def _ctc_case(blank):
    labels = np.array([[1, 2, 2, 0], [3, 4, 0, 0], [2, 0, 0, 0]], np.int32)
    if blank != 0:  # the same label sequences over the classes other than `blank`
        others = [k for k in range(C) if k != blank]
        labels = np.where(np.arange(4) < [[3], [2], [1]],
                          np.array(others)[np.maximum(labels - 1, 0)], 0).astype(np.int32)
    lens = np.array([3, 2, 1], np.int32)
    want = [_ctc_ref(CTC_LOGITS[:CTC_LOGIT_LEN[b], b], labels[b, :lens[b]], blank)
            for b in range(B)]
    return labels, lens, np.array(want)


def test_ctc_loss_v2_dense_and_sparse_against_forward_recursion():
    lab0, len0, want0 = _ctc_case(0)
    lab2, len2, want2 = _ctc_case(2)
    lab4, len4, want4 = _ctc_case(4)

    def build():
        x = tf.placeholder(tf.float64, [T, B, C])
        dense0 = tf.nn.ctc_loss_v2(lab0, x, len0, CTC_LOGIT_LEN)     # blank 0 by default
        dense2 = tf.nn.ctc_loss_v2(lab2, tf.transpose(x, [1, 0, 2]), len2, CTC_LOGIT_LEN,
                                   logits_time_major=False, blank_index=2)
        idx = np.array([[b, i] for b in range(B) for i in range(len4[b])], np.int64)
        sp = tf.SparseTensor(idx, lab4[idx[:, 0], idx[:, 1]].astype(np.int64), [B, 4])
        sparse_last = tf.nn.ctc_loss_v2(sp, x, None, CTC_LOGIT_LEN, blank_index=-1)
        grad = tf.gradients(tf.reduce_sum(dense2), x)[0]
        return [dense0, dense2, sparse_last, grad], {x: CTC_LOGITS}
    ex, xla, *_ = run_both(build)
    assert_close(ex[:3], [want0, want2, want4], rtol=1e-9, atol=1e-9)
    assert_close(xla, ex, rtol=1e-9, atol=1e-9)
    # the gradient against central differences of the reference
    g, eps = np.zeros_like(CTC_LOGITS), 1e-6
    for idx in [(0, 0, 2), (3, 1, 4), (2, 2, 0), (5, 2, 1)]:
        up, down = CTC_LOGITS.copy(), CTC_LOGITS.copy()
        up[idx] += eps
        down[idx] -= eps
        f = [sum(_ctc_ref(z[:CTC_LOGIT_LEN[b], b], lab2[b, :len2[b]], 2) for b in range(B))
             for z in (up, down)]
        g[idx] = (f[0] - f[1]) / (2 * eps)
        assert np.isclose(ex[3][idx], g[idx], rtol=1e-5, atol=1e-7), idx
    assert ex[3][5, 2].tolist() == [0.0] * C  # past logit_length: no gradient


def test_ctc_loss_v2_errors():
    x = tf.zeros([4, 2, 3])
    sp = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [2, 1])
    with pytest.raises(ValueError, match="blank_index must be given"):
        tf.nn.ctc_loss_v2(sp, x, None, [4, 4])
    with pytest.raises(ValueError, match="label_length is required"):
        tf.nn.ctc_loss_v2([[1], [2]], x, None, [4, 4])
    with pytest.raises(ValueError, match="3-D"):
        tf.nn.ctc_loss_v2([[1], [2]], tf.zeros([4, 3]), [1, 1], [4, 4])
    assert math.isinf(run(tf.nn.ctc_loss_v2([[1, 2, 1]], tf.zeros([2, 1, 3]), [3], [2]))[0][0])
