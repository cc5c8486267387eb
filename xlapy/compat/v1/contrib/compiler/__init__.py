"""tf.contrib.compiler."""

from xlapy.compat.v1.contrib.compiler import jit
