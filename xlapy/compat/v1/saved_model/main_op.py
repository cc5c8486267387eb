"""tf.saved_model.main_op: the main op a SavedModel's loader runs after the restore."""

from xlapy.compat.v1.ops.misc_more3 import main_op, main_op_with_restore

__all__ = ["main_op", "main_op_with_restore"]
