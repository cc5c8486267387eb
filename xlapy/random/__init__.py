"""xlapy.random: JAX's random API, with the same streams bit for bit.

Keys are threefry2x32 keys (JAX's default): `PRNGKey(seed)` gives a legacy uint32[2] key,
`key(seed)` a typed key array; `split`, `fold_in`, `key_data`, `wrap_key_data` as in JAX.
Samplers follow JAX's algorithms exactly, so for the same key they return JAX's values
(bit for bit for the integer samplers, uniform, normal and the f32 transforms of uniform
floats; see tests/random). Called eagerly, each sampler runs a compiled program (one per
shape and dtype); inside jit it traces into the caller's program, where the threefry hash
and the float construction fuse into one kernel.
"""

from xlapy.random._common import RandomError
from xlapy.random._continuous import (bits, cauchy, exponential, gumbel, laplace, logistic,
                                      lognormal, normal, rademacher, truncated_normal,
                                      uniform)
from xlapy.random._binomial import binomial, multinomial
from xlapy.random._discrete import bernoulli, categorical, choice, permutation, randint
from xlapy.random._gamma import (beta, chisquare, dirichlet, f, gamma, generalized_normal,
                                 loggamma, t)
from xlapy.random._more import (ball, double_sided_maxwell, geometric, maxwell,
                                multivariate_normal, orthogonal, pareto, poisson, rayleigh,
                                triangular, wald, weibull_min)
from xlapy.random._keys import (KEY_DTYPE, PRNGKey, PRNGKeyArray, clone, fold_in, key,
                                key_data, key_dtype, key_impl, split, wrap_key_data)

__all__ = [
    "RandomError", "PRNGKey", "PRNGKeyArray", "KEY_DTYPE", "key", "key_data", "key_dtype",
    "key_impl", "wrap_key_data", "split", "fold_in", "clone", "bits", "uniform", "normal",
    "truncated_normal", "exponential", "laplace", "logistic", "gumbel", "cauchy",
    "lognormal", "rademacher", "bernoulli", "randint", "permutation", "choice",
    "categorical", "binomial", "multinomial", "gamma", "loggamma", "beta", "dirichlet",
    "chisquare", "f", "t",
    "generalized_normal", "pareto", "weibull_min", "maxwell", "double_sided_maxwell",
    "rayleigh", "wald", "geometric", "triangular", "poisson", "multivariate_normal", "ball",
    "orthogonal",
]
