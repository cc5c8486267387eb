"""The chi-squared distribution with df degrees of freedom (jax.scipy.stats.chi2): logpdf, pdf,
cdf, logcdf, sf, logsf."""

from xlapy.scipy.stats import _standard as S
from xlapy.scipy.stats._family import Family

_DIST = Family(("df",), S.chi2_logpdf, cdf=S.chi2_cdf, sf=S.chi2_sf)
logpdf, pdf, cdf, logcdf, sf, logsf = (
    _DIST.logpdf, _DIST.pdf, _DIST.cdf, _DIST.logcdf, _DIST.sf, _DIST.logsf)
