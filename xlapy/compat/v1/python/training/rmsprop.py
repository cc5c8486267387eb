"""tensorflow.python.training.rmsprop (see xlapy/compat/v1/python/_shim.py)."""

from xlapy.compat.v1.python._shim import delegate

__getattr__ = delegate(__name__, "xlapy.compat.v1.train.optimizers")
