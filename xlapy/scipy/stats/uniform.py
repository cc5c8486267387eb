"""The continuous uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform): logpdf,
pdf, cdf, logcdf, sf, logsf, ppf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family((), S.uniform_logpdf, cdf=S.uniform_cdf, ppf=S.uniform_ppf)
logpdf, pdf, cdf, logcdf, sf, logsf, ppf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf, _DIST.ppf)
