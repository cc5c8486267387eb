"""Student's t distribution with df degrees of freedom (jax.scipy.stats.t): logpdf, pdf, cdf,
logcdf, sf, logsf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family(("df",), S.t_logpdf, cdf=S.t_cdf, sf=S.t_sf)
logpdf, pdf, cdf, logcdf, sf, logsf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf)
