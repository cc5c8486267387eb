"""tf.distributions / tf.contrib.distributions: densities, entropies, moments and KL
divergences against SciPy, samples by their statistics, reparameterized gradients, and a
VAE-style loss compiled with XLA."""

import numpy as np
import pytest
from scipy import stats

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .helpers import assert_close, run_both, single_cluster

R = np.random.default_rng(5)


def run(*fetches):
    with tf.Session() as s:
        return s.run(list(fetches))


def test_normal_against_scipy():
    loc = np.array([0.0, 1.5, -2.0], np.float32)
    scale = np.array([1.0, 0.5, 3.0], np.float32)
    x = R.standard_normal((4, 3)).astype(np.float32) * 2
    d = tf.distributions.Normal(loc, scale)
    lp, p, c, h, m, sd, var = run(d.log_prob(x), d.prob(x), d.cdf(x), d.entropy(), d.mean(),
                                  d.stddev(), d.variance())
    ref = stats.norm(loc, scale)
    assert_close(lp, ref.logpdf(x).astype(np.float32), rtol=1e-5)
    assert_close(p, ref.pdf(x).astype(np.float32), rtol=1e-5, atol=1e-7)
    assert_close(c, ref.cdf(x).astype(np.float32), rtol=1e-5, atol=1e-7)
    assert_close(h, ref.entropy().astype(np.float32), rtol=1e-5)
    assert_close(m, loc)
    assert_close(sd, scale)
    assert_close(var, scale ** 2)
    assert d.batch_shape.as_list() == [3] and d.event_shape.as_list() == []
    assert d.reparameterization_type == tf.distributions.FULLY_REPARAMETERIZED


def test_normal_samples_and_reparameterized_gradient():
    loc = tf.Variable(np.float32(1.0))
    scale = tf.Variable(np.float32(2.0))
    d = tf.distributions.Normal(loc, scale)
    s = d.sample([20000], seed=1)
    mean_sq = tf.reduce_mean(tf.square(s))  # E[s^2] = loc^2 + scale^2
    g_loc, g_scale = tf.gradients(mean_sq, [loc, scale])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sv, gl, gs = sess.run([s, g_loc, g_scale])
    assert sv.shape == (20000,)
    assert abs(sv.mean() - 1.0) < 0.06 and abs(sv.std() - 2.0) < 0.06
    assert abs(gl - 2.0) < 0.1 and abs(gs - 4.0) < 0.2  # d/dloc = 2 loc, d/dscale = 2 scale


def test_sample_shape_is_sample_then_batch():
    d = tf.distributions.Normal(np.zeros([2, 3], np.float32), 1.0)
    (v,) = run(d.sample([4, 5]))
    assert v.shape == (4, 5, 2, 3)
    u = tf.distributions.Uniform(np.float32(-1.0), np.array([1.0, 3.0], np.float32))
    (w,) = run(u.sample(1000, seed=3))
    assert w.shape == (1000, 2)
    assert w[:, 0].min() >= -1 and w[:, 0].max() < 1 and w[:, 1].max() < 3
    assert abs(w[:, 1].mean() - 1.0) < 0.15


def test_mvn_diag_against_scipy_and_kl():
    loc = R.standard_normal((2, 3)).astype(np.float32)
    sd = R.uniform(0.5, 2, (2, 3)).astype(np.float32)
    x = R.standard_normal((2, 3)).astype(np.float32)
    p = tf.contrib.distributions.MultivariateNormalDiag(loc, sd)
    q = tf.contrib.distributions.MultivariateNormalDiag(np.zeros(3, np.float32),
                                                        np.ones(3, np.float32))
    lp, h, kl, smp = run(p.log_prob(x), p.entropy(), tf.distributions.kl_divergence(p, q),
                         p.sample(3))
    want_lp = [stats.multivariate_normal(loc[i], np.diag(sd[i] ** 2)).logpdf(x[i])
               for i in range(2)]
    want_h = [stats.multivariate_normal(loc[i], np.diag(sd[i] ** 2)).entropy()
              for i in range(2)]
    # KL(N(m, s^2) || N(0, 1)) = 1/2 sum(s^2 + m^2 - 1 - log s^2)
    want_kl = 0.5 * (sd ** 2 + loc ** 2 - 1 - np.log(sd ** 2)).sum(-1)
    assert_close(lp, np.float32(want_lp), rtol=1e-5)
    assert_close(h, np.float32(want_h), rtol=1e-5)
    assert_close(kl, want_kl.astype(np.float32), rtol=1e-5)
    assert smp.shape == (3, 2, 3)
    assert p.event_shape.as_list() == [3] and p.batch_shape.as_list() == [2]


def test_normal_kl_against_numerical_integral():
    p = tf.distributions.Normal(np.float32(0.3), np.float32(0.7))
    q = tf.distributions.Normal(np.float32(-1.0), np.float32(1.9))
    (kl,) = run(tf.distributions.kl_divergence(p, q))
    xs = np.linspace(-10, 10, 200001)
    a, b = stats.norm(0.3, 0.7), stats.norm(-1.0, 1.9)
    want = np.trapezoid(a.pdf(xs) * (a.logpdf(xs) - b.logpdf(xs)), xs)
    assert abs(kl - want) < 1e-5


def test_bernoulli_and_categorical_against_scipy():
    logits = np.array([-1.0, 0.0, 2.5], np.float32)
    b = tf.distributions.Bernoulli(logits=logits)
    b2 = tf.distributions.Bernoulli(probs=np.array([0.3, 0.5, 0.9], np.float32))
    ks = np.array([1, 0, 1], np.int32)
    pr = 1 / (1 + np.exp(-logits))
    lp, h, mean, mode, kl, draws = run(b.log_prob(ks), b.entropy(), b.mean(), b.mode(),
                                       tf.distributions.kl_divergence(b, b2),
                                       b.sample(4000, seed=2))
    assert_close(lp, stats.bernoulli(pr).logpmf(ks).astype(np.float32), rtol=1e-5)
    assert_close(h, stats.bernoulli(pr).entropy().astype(np.float32), rtol=1e-5)
    assert_close(mean, pr, rtol=1e-6)
    assert mode.tolist() == [0, 0, 1] and draws.dtype == np.int32
    q = np.array([0.3, 0.5, 0.9])
    want_kl = pr * np.log(pr / q) + (1 - pr) * np.log((1 - pr) / (1 - q))
    assert_close(kl, want_kl.astype(np.float32), rtol=1e-4, atol=1e-6)
    assert np.abs(draws.mean(0) - pr).max() < 0.04

    lg = R.standard_normal((2, 4)).astype(np.float32)
    c = tf.distributions.Categorical(logits=lg)
    c2 = tf.distributions.Categorical(probs=np.full([4], 0.25, np.float32))
    ks = np.array([3, 1], np.int32)
    lp, h, mode, kl, draws = run(c.log_prob(ks), c.entropy(), c.mode(),
                                 tf.distributions.kl_divergence(c, c2), c.sample(6000, seed=4))
    prob = np.exp(lg) / np.exp(lg).sum(-1, keepdims=True)
    assert_close(lp, np.log(prob[[0, 1], ks]).astype(np.float32), rtol=1e-5)
    assert_close(h, stats.entropy(prob, axis=-1).astype(np.float32), rtol=1e-5)
    assert mode.tolist() == prob.argmax(-1).tolist()
    assert_close(kl, (prob * np.log(prob / 0.25)).sum(-1).astype(np.float32), rtol=1e-5)
    assert draws.shape == (6000, 2)
    freq = np.stack([np.bincount(draws[:, i], minlength=4) / 6000 for i in range(2)])
    assert np.abs(freq - prob).max() < 0.03


def test_uniform_density_and_cdf():
    u = tf.distributions.Uniform(np.float32(1.0), np.float32(3.0))
    x = np.array([0.5, 1.0, 2.0, 3.0, 3.5], np.float32)
    lp, c, h, m, v = run(u.log_prob(x), u.cdf(x), u.entropy(), u.mean(), u.variance())
    # TF's support is [low, high): the density at high is 0 (SciPy's is closed)
    want = stats.uniform(1, 2).logpdf(x).astype(np.float32)
    want[3] = -np.inf
    assert_close(lp, want)
    assert_close(c, stats.uniform(1, 2).cdf(x).astype(np.float32))
    assert_close(np.float32([h, m, v]), np.float32([np.log(2), 2.0, 4 / 12]), rtol=1e-6)


def test_errors():
    with pytest.raises(InvalidArgumentError, match="probs or logits, but not both"):
        tf.distributions.Bernoulli(logits=[0.0], probs=[0.5])
    with pytest.raises(InvalidArgumentError, match="probs or logits"):
        tf.distributions.Categorical()
    with pytest.raises(UnimplementedError, match="No KL"):
        tf.distributions.kl_divergence(tf.distributions.Normal(0.0, 1.0),
                                       tf.distributions.Uniform())
    with pytest.raises(UnimplementedError, match="no mean"):
        tf.distributions.Categorical(logits=[0.0, 1.0]).mean()


def test_vae_loss_compiles_into_one_cluster():
    xv = R.standard_normal((8, 5)).astype(np.float32)

    def build():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float32, [8, 5])
        h = tf.layers.dense(x, 4, kernel_initializer=tf.constant_initializer(0.1))
        mu, log_sd = h[:, :2], h[:, 2:]
        q = tf.contrib.distributions.MultivariateNormalDiag(mu, tf.exp(log_sd))
        prior = tf.contrib.distributions.MultivariateNormalDiag(tf.zeros([2]), tf.ones([2]))
        kl = tf.reduce_mean(tf.distributions.kl_divergence(q, prior))
        rec = tf.layers.dense(q.mean(), 5, kernel_initializer=tf.constant_initializer(0.2))
        like = tf.reduce_mean(tf.reduce_sum(
            tf.distributions.Normal(rec, 1.0).log_prob(x), axis=1))
        loss = kl - like
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        return [loss, train], {x: xv}
    ex, xla, sess, fetches, feed = run_both(build)
    assert_close(xla[0], ex[0], rtol=1e-5)
    single_cluster(sess, fetches, feed)
