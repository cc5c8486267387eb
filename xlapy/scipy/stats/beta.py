"""The beta distribution with shapes a and b (jax.scipy.stats.beta): logpdf, pdf, cdf, logcdf,
sf, logsf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family(("a", "b"), S.beta_logpdf, cdf=S.beta_cdf, sf=S.beta_sf)
logpdf, pdf, cdf, logcdf, sf, logsf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf)
