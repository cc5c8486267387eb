"""JVP rules of primitives/dynamic_slice.py: dynamic_slice is linear in the operand,
dynamic_update_slice jointly in the operand and the update (the start indices fixed)."""

from __future__ import annotations

from xlapy.frontend.jvp.rules import linear
from xlapy.frontend.primitives.dynamic_slice import dynamic_slice_p, dynamic_update_slice_p

linear(dynamic_slice_p, argnums=(0,))
linear(dynamic_update_slice_p, argnums=(0, 1))
