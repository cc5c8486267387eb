"""The Cauchy distribution (jax.scipy.stats.cauchy): logpdf, pdf, cdf, logcdf, sf, logsf, ppf,
isf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family((), S.cauchy_logpdf, cdf=S.cauchy_cdf, sf=S.cauchy_sf, ppf=S.cauchy_ppf)
logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf, _DIST.ppf, _DIST.isf)
