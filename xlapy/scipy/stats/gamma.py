"""The gamma distribution with shape a (jax.scipy.stats.gamma): logpdf, pdf, cdf, logcdf, sf,
logsf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family(("a",), S.gamma_logpdf, cdf=S.gamma_cdf, sf=S.gamma_sf)
logpdf, pdf, cdf, logcdf, sf, logsf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf)
