"""The Laplace distribution (jax.scipy.stats.laplace): logpdf, pdf, cdf, logcdf, sf, logsf,
ppf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family((), S.laplace_logpdf, cdf=S.laplace_cdf, sf=S.laplace_sf, ppf=S.laplace_ppf)
logpdf, pdf, cdf, logcdf, sf, logsf, ppf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf, _DIST.ppf)
