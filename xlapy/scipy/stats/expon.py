"""The exponential distribution (jax.scipy.stats.expon): logpdf, pdf, cdf, logcdf, sf, logsf,
ppf, isf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family((), S.expon_logpdf, cdf=S.expon_cdf, sf=S.expon_sf, ppf=S.expon_ppf)
logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf, _DIST.ppf, _DIST.isf)
