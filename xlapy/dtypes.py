"""xlapy.dtypes: dtype helpers as jax.dtypes has them.

float0 is the dtype of the tangents of integer and boolean values (zero bytes per element),
as JAX's; canonicalize_dtype maps a dtype to the one computations use under the current
jax_enable_x64 setting (float64 -> float32, int64 -> int32, uint64 -> uint32 when off).
"""

from __future__ import annotations

from xlapy.frontend.dtypes import canonicalize_dtype
from xlapy.frontend.forward import float0

__all__ = ["canonicalize_dtype", "float0"]


def __getattr__(name):
    raise AttributeError(f"module 'xlapy.dtypes' has no attribute '{name}' (it has: "
                         f"{', '.join(__all__)})")
