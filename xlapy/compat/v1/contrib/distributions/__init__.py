"""tf.contrib.distributions: tf.distributions' classes under their contrib names (VAE code
of the era used contrib.distributions.Normal and MultivariateNormalDiag)."""

from xlapy.compat.v1.distributions import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED,
                                           Bernoulli, Categorical, Distribution,
                                           MultivariateNormalDiag, Normal, RegisterKL,
                                           Uniform, kl_divergence)

kl = kl_divergence
