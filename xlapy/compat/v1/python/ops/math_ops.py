"""tensorflow.python.ops.math_ops (see xlapy/compat/v1/python/_shim.py)."""

from xlapy.compat.v1.python._shim import delegate

__getattr__ = delegate(__name__, "xlapy.compat.v1.ops.math_ops", "xlapy.compat.v1")
