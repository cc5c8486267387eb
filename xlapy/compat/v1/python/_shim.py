"""The modules under xlapy.compat.v1.python mirror TensorFlow's `tensorflow.python.*` import
paths (`from tensorflow.python.framework import ops` becomes `from xlapy.compat.v1.python.
framework import ops`). Each is a thin module whose attributes come from the xlapy.compat.v1
modules that implement them, looked up when first used (PEP 562 module __getattr__)."""

from __future__ import annotations

import importlib


def delegate(module_name: str, *sources: str):
    """A module __getattr__ that finds `name` in the first of `sources` (module paths) that
    has it, or raises AttributeError naming the mirrored module."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        for src in sources:
            mod = importlib.import_module(src)
            if hasattr(mod, name):
                return getattr(mod, name)
        raise AttributeError(f"module '{module_name}' has no attribute '{name}' (xlapy.compat.v1 "
                             f"does not provide it)")
    return __getattr__
