"""tensorflow.python.training.learning_rate_decay (see xlapy/compat/v1/python/_shim.py)."""

from xlapy.compat.v1.python._shim import delegate

__getattr__ = delegate(__name__, "xlapy.compat.v1.train.learning_rate_decay")
