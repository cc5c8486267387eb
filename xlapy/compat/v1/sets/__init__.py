"""tf.sets: set operations on the last dimension of dense or sparse tensors."""

from __future__ import annotations

from xlapy.compat.v1.ops.mathx_sets import set_difference, set_intersection, set_size, set_union
from xlapy.compat.v1.ops.mathx_sets import set_difference as difference
from xlapy.compat.v1.ops.mathx_sets import set_intersection as intersection
from xlapy.compat.v1.ops.mathx_sets import set_size as size
from xlapy.compat.v1.ops.mathx_sets import set_union as union

__all__ = ["difference", "intersection", "set_difference", "set_intersection", "set_size",
           "set_union", "size", "union"]
