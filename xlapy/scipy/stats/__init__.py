"""xlapy.scipy.stats: distributions as jax.scipy.stats provides them (bernoulli, beta,
binom, cauchy, chi2, dirichlet, expon, gamma, geom, laplace, logistic, multivariate_normal,
nbinom, norm, pareto, poisson, t, uniform, vonmises), and sem, mode, rankdata."""

from xlapy.scipy.stats import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma,
                               geom, laplace, logistic, multivariate_normal, nbinom, norm,
                               pareto, poisson, t, uniform, vonmises)
from xlapy.scipy.stats._descriptive import ModeResult, mode, rankdata, sem

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "geom", "laplace", "logistic", "multivariate_normal", "nbinom", "norm", "pareto",
           "poisson", "sem", "t", "uniform", "vonmises", "ModeResult", "mode", "rankdata"]
