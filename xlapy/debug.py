"""xlapy.debug (jax.debug): print and callback from inside traced programs.

  xlapy.debug.print("x = {}", x)        printed with x's runtime value, in program order
  xlapy.debug.callback(fn, *args)       fn called with the runtime values (NumPy arrays)

See xlapy/frontend/callbacks.py.
"""

import xlapy.numpy  # noqa: F401  (installs the array operators on traced values)
from xlapy.frontend.callbacks import debug_callback as callback
from xlapy.frontend.callbacks import debug_print as print

__all__ = ["print", "callback"]
