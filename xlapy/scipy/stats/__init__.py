"""xlapy.scipy.stats: distributions as jax.scipy.stats provides them (bernoulli, beta,
cauchy, chi2, expon, gamma, geom, laplace, logistic, multivariate_normal, norm, pareto,
poisson, t, uniform), and sem."""

from xlapy.scipy.stats import (bernoulli, beta, cauchy, chi2, expon, gamma, geom, laplace,
                               logistic, multivariate_normal, norm, pareto, poisson, t, uniform)
from xlapy.scipy.stats._descriptive import sem

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "geom", "laplace",
           "logistic", "multivariate_normal", "norm", "pareto", "poisson", "sem", "t",
           "uniform"]
