"""xlapy.scipy.integrate (jax.scipy.integrate): trapezoid, the composite trapezoidal rule
(xlapy.numpy.trapezoid)."""

from __future__ import annotations

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y (sampled at x, or spaced dx) along axis by the trapezoidal rule."""
    import xlapy.numpy as xnp
    return xnp.trapezoid(y, x=x, dx=dx, axis=axis)
