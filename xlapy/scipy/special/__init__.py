"""xlapy.scipy.special: special functions as jax.scipy.special provides them: jittable,
differentiable (through their approximations) and, outside jit, evaluated eagerly.
Integer inputs become the default float type (float32 unless x64), as in JAX."""

from xlapy.scipy.special._bessel import i0, i0e, i1, i1e
from xlapy.scipy.special._erf import erf, erfc, erfinv, log_ndtr, ndtr, ndtri
from xlapy.scipy.special._gamma import (beta, betaln, digamma, factorial, gamma, gammaln,
                                        gammasgn, multigammaln, polygamma, zeta)
from xlapy.scipy.special._incomplete import betainc, gammainc, gammaincc
from xlapy.scipy.special._misc import (entr, expit, kl_div, log_softmax, logit, logsumexp,
                                       rel_entr, softmax, xlog1py, xlogy)

loggamma = gammaln  # real arguments

__all__ = [
    "erf", "erfc", "erfinv", "log_ndtr", "ndtr", "ndtri", "beta", "betaln", "digamma", "factorial",
    "gamma", "gammaln", "gammasgn", "loggamma", "multigammaln", "polygamma", "zeta", "i0", "i0e",
    "i1", "i1e", "betainc", "gammainc", "gammaincc", "entr", "expit", "kl_div", "log_softmax",
    "logit", "logsumexp", "rel_entr", "softmax", "xlog1py", "xlogy"]
