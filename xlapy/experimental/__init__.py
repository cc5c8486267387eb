"""xlapy.experimental (jax.experimental): enable_x64 / disable_x64 blocks, and the ode
module (xlapy.experimental.ode.odeint)."""

from __future__ import annotations

import contextlib

from xlapy import config as _config

__all__ = ["disable_x64", "enable_x64", "ode"]


@contextlib.contextmanager
def enable_x64(new_val: bool = True):
    """64-bit types on in this thread within the block (jax.experimental.enable_x64)."""
    with _config.enable_x64(new_val):
        yield


@contextlib.contextmanager
def disable_x64():
    """64-bit types off in this thread within the block (jax.experimental.disable_x64)."""
    with _config.enable_x64(False):
        yield


def __getattr__(name):
    if name == "ode":
        import importlib
        return importlib.import_module("xlapy.experimental.ode")
    raise AttributeError(f"module 'xlapy.experimental' has no attribute '{name}' (it has: "
                         f"{', '.join(__all__)})")
