"""xlapy.config: JAX's configuration options that xlapy honours (as jax.config).

    xlapy.config.update("jax_enable_x64", True)   # 64-bit floats and ints
    xlapy.config.jax_enable_x64                    # read it
    with xlapy.enable_x64(True): ...               # for a block, in this thread only
    xlapy.config.update("jax_disable_jit", True)  # jitted functions run eagerly
    with xlapy.disable_jit(): ...                  # for a block, in this thread only

jax_enable_x64 (default off, as in JAX; JAX_ENABLE_X64=1 or XLAPY_ENABLE_X64=1 in the
environment turns it on at import): with it off, xlapy.numpy creates float32 / int32 /
uint32 arrays where NumPy would make 64-bit ones (zeros, arange, array of Python floats,
mean of ints, ...), and every 64-bit value entering a computation (an argument of jit,
grad or an eager xlapy.numpy call, a captured constant, a dtype parameter) is converted
to its 32-bit counterpart, as JAX canonicalizes dtypes. Asking for a 64-bit dtype
explicitly (dtype=float64, astype(int64)) warns with JAX's text. With it on, xlapy keeps
64-bit values and follows NumPy's promotion.

This module imports nothing from xlapy: every layer may read it.
"""

from __future__ import annotations

import contextlib
import os
import threading

_TRUE = ("1", "true", "yes", "on", "t", "y")


def _env_flag(*names) -> bool:
    for n in names:
        v = os.environ.get(n)
        if v is not None:
            return v.strip().lower() in _TRUE
    return False


class _Local(threading.local):
    x64 = None  # a thread's override (enable_x64 context), or None
    nojit = None  # a thread's override (disable_jit context), or None


_local = _Local()
_x64 = _env_flag("XLAPY_ENABLE_X64", "JAX_ENABLE_X64")
_overrides = 0  # enable_x64 blocks open in any thread
_lock = threading.Lock()
_nojit = _env_flag("JAX_DISABLE_JIT")
_nojit_blocks = 0  # disable_jit blocks open in any thread (jit's call checks this first)
_listeners: list = []  # called after an option changes (jit drops its fast-path caches)


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled in this thread."""
    o = _local.x64
    return _x64 if o is None else o


def overrides_active() -> bool:
    """Whether any thread runs inside an enable_x64 block (jit's fast path, which skips
    canonicalization, is off meanwhile)."""
    return _overrides > 0


def on_change(fn) -> None:
    """Call fn() whenever an option changes (for caches that depend on the options)."""
    _listeners.append(fn)


def _changed() -> None:
    for fn in list(_listeners):
        fn()


def jit_disabled() -> bool:
    """Whether jit runs functions eagerly (jax_disable_jit / disable_jit) in this thread."""
    o = _local.nojit
    return _nojit if o is None else o


_OPTIONS = ("jax_enable_x64", "jax_disable_jit")


def update(name: str, value) -> None:
    """Set an option: update("jax_enable_x64", True). Unknown names raise AttributeError,
    as in JAX."""
    global _x64, _nojit
    if name not in _OPTIONS:
        raise AttributeError(f"Unrecognized config option: {name} (xlapy knows: "
                             f"{', '.join(_OPTIONS)})")
    if name == "jax_disable_jit":
        _nojit = bool(value)
        return
    _x64 = bool(value)
    _changed()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, this thread calls jitted functions as plain Python functions on
    concrete values (as jax.disable_jit): print shows values, pdb can step through them."""
    global _nojit_blocks
    old = _local.nojit
    with _lock:
        _nojit_blocks += 1
        _local.nojit = bool(disable)
    try:
        yield
    finally:
        with _lock:
            _nojit_blocks -= 1
            _local.nojit = old


@contextlib.contextmanager
def enable_x64(new_val: bool = True):
    """Within the block, this thread runs with jax_enable_x64 = new_val (as
    jax.enable_x64). Functions jitted inside are compiled for that setting."""
    # (no listener call: a block is seen through overrides_active(), which jit's fast path
    # reads on every call; notifying every jitted function twice per block cost the TF 1.x
    # session, which runs each step in a block, about 30 us a step)
    global _overrides
    old = _local.x64
    with _lock:
        _overrides += 1
        _local.x64 = bool(new_val)
    try:
        yield
    finally:
        with _lock:
            _overrides -= 1
            _local.x64 = old


def __getattr__(name):
    # the module is the config object: xlapy.config.jax_enable_x64 reads the option
    if name == "jax_enable_x64":
        return x64_enabled()
    if name == "jax_disable_jit":
        return jit_disabled()
    raise AttributeError(f"module 'xlapy.config' has no attribute '{name}' (options: "
                         f"{', '.join(_OPTIONS)})")
