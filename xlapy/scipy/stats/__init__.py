"""xlapy.scipy.stats: distributions as jax.scipy.stats provides them (norm, logistic,
bernoulli, multivariate_normal)."""

from xlapy.scipy.stats import bernoulli, logistic, multivariate_normal, norm

__all__ = ["bernoulli", "logistic", "multivariate_normal", "norm"]
