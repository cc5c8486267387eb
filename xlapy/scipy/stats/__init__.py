"""xlapy.scipy.stats: distributions as jax.scipy.stats provides them (bernoulli, beta,
cauchy, chi2, expon, gamma, laplace, logistic, multivariate_normal, norm, poisson, t,
uniform)."""

from xlapy.scipy.stats import (bernoulli, beta, cauchy, chi2, expon, gamma, laplace, logistic,
                               multivariate_normal, norm, poisson, t, uniform)

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]
