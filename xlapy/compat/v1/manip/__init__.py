"""tf.manip: TF 1.x's aliases of array manipulation ops."""

from xlapy.compat.v1.ops.api import gather_nd, reverse, scatter_nd
from xlapy.compat.v1.ops.array_extra_ops import roll
from xlapy.compat.v1.ops.array_ops import reshape, tile
from xlapy.compat.v1.ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd

__all__ = ["batch_to_space_nd", "gather_nd", "reshape", "reverse", "roll", "scatter_nd",
           "space_to_batch_nd", "tile"]
