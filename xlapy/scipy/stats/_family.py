"""Location-scale families: a distribution given by its standard form's log-density (and,
where it has them, cdf, sf and ppf) of z = (x - loc) / scale and its shape parameters gets
jax.scipy.stats' functions: logpdf(x, *shapes, loc=0, scale=1), pdf, cdf, logcdf, sf, logsf,
ppf, isf. Arguments are promoted to one float type as in JAX."""

from __future__ import annotations

import xlapy.numpy as xnp
from xlapy.scipy.special._common import floats


class Family:
    """The functions of one distribution; `shapes` names its shape parameters in order."""

    def __init__(self, shapes: tuple[str, ...], logpdf, cdf=None, sf=None, ppf=None):
        self.shapes = shapes
        self._logpdf, self._cdf, self._sf, self._ppf = logpdf, cdf, sf, ppf

    def _args(self, x, args, kwargs):
        names = self.shapes + ("loc", "scale")
        if len(args) > len(names):
            raise TypeError(f"at most {len(names)} parameters ({', '.join(names)}), "
                            f"got {len(args)}")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in values:
                raise TypeError(f"unexpected or repeated parameter {k!r}")
            values[k] = v
        missing = [n for n in self.shapes if n not in values]
        if missing:
            raise TypeError(f"missing shape parameter(s) {', '.join(missing)}")
        xs = floats(x, *(values[n] for n in self.shapes), values.get("loc", 0),
                    values.get("scale", 1))
        return xs[0], xs[1:-2], xs[-2], xs[-1]

    def logpdf(self, x, *args, **kwargs):
        x, shapes, loc, scale = self._args(x, args, kwargs)
        return self._logpdf((x - loc) / scale, *shapes) - xnp.log(scale)

    def pdf(self, x, *args, **kwargs):
        return xnp.exp(self.logpdf(x, *args, **kwargs))

    def cdf(self, x, *args, **kwargs):
        x, shapes, loc, scale = self._args(x, args, kwargs)
        return self._cdf((x - loc) / scale, *shapes)

    def logcdf(self, x, *args, **kwargs):
        return xnp.log(self.cdf(x, *args, **kwargs))

    def sf(self, x, *args, **kwargs):
        x, shapes, loc, scale = self._args(x, args, kwargs)
        z = (x - loc) / scale
        return self._sf(z, *shapes) if self._sf else 1.0 - self._cdf(z, *shapes)

    def logsf(self, x, *args, **kwargs):
        return xnp.log(self.sf(x, *args, **kwargs))

    def ppf(self, q, *args, **kwargs):
        q, shapes, loc, scale = self._args(q, args, kwargs)
        return self._ppf(q, *shapes) * scale + loc

    def isf(self, q, *args, **kwargs):
        return self.ppf(1.0 - floats(q)[0], *args, **kwargs)
