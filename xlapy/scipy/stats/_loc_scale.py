"""Functions of location-scale families: f(x, loc, scale) from the standard f."""

from __future__ import annotations

from xlapy.scipy.special._common import floats


def standardized(fn, name: str):
    """fn((x - loc) / scale), e.g. a cdf from the standard one."""
    def f(x, loc=0, scale=1):
        x, loc, scale = floats(x, loc, scale)
        return fn((x - loc) / scale)
    f.__name__ = f.__qualname__ = name
    return f


def quantile(fn, name: str):
    """fn(q) * scale + loc, e.g. a ppf from the standard one."""
    def f(q, loc=0, scale=1):
        q, loc, scale = floats(q, loc, scale)
        return fn(q) * scale + loc
    f.__name__ = f.__qualname__ = name
    return f
