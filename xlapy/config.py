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
    nans = None  # a thread's override (debug_nans context), or None
    infs = None  # a thread's override (debug_infs context), or None


_local = _Local()
_x64 = _env_flag("XLAPY_ENABLE_X64", "JAX_ENABLE_X64")
_overrides = 0  # enable_x64 blocks open in any thread
_lock = threading.Lock()
_nojit = _env_flag("JAX_DISABLE_JIT")
_nojit_blocks = 0  # disable_jit blocks open in any thread (jit's call checks this first)
_listeners: list = []  # called after an option changes (jit drops its fast-path caches)
_nans = _env_flag("JAX_DEBUG_NANS")
_infs = _env_flag("JAX_DEBUG_INFS")
_debug_blocks = 0  # debug_nans / debug_infs blocks open in any thread
_debug_any = _nans or _infs  # whether any thread may check: read by the hot paths


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


def _update_debug_any() -> None:
    global _debug_any
    _debug_any = _nans or _infs or _debug_blocks > 0


def debug_checks() -> tuple:
    """(check NaNs, check infs) in this thread: jax_debug_nans / jax_debug_infs. When on,
    a jitted function's outputs and each eager operation's result are checked and a NaN
    (an inf) raises FloatingPointError, as in JAX."""
    n, i = _local.nans, _local.infs
    return (_nans if n is None else n), (_infs if i is None else i)


_OPTIONS = ("jax_enable_x64", "jax_disable_jit", "jax_debug_nans", "jax_debug_infs")


def update(name: str, value) -> None:
    """Set an option: update("jax_enable_x64", True). Unknown names raise AttributeError,
    as in JAX."""
    global _x64, _nojit, _nans, _infs
    if name not in _OPTIONS:
        raise AttributeError(f"Unrecognized config option: {name} (xlapy knows: "
                             f"{', '.join(_OPTIONS)})")
    if name == "jax_disable_jit":
        _nojit = bool(value)
        return
    if name in ("jax_debug_nans", "jax_debug_infs"):
        if name == "jax_debug_nans":
            _nans = bool(value)
        else:
            _infs = bool(value)
        _update_debug_any()
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


@contextlib.contextmanager
def _debug_block(attr: str, value: bool):
    global _debug_blocks
    old = getattr(_local, attr)
    with _lock:
        _debug_blocks += 1
        setattr(_local, attr, bool(value))
        _update_debug_any()
    try:
        yield
    finally:
        with _lock:
            _debug_blocks -= 1
            setattr(_local, attr, old)
            _update_debug_any()


def debug_nans(new_val: bool = True):
    """Within the block, this thread checks results for NaNs (as jax.debug_nans): a
    jitted function's outputs and each eager operation's result; a NaN raises
    FloatingPointError naming where it appeared."""
    return _debug_block("nans", new_val)


def debug_infs(new_val: bool = True):
    """As debug_nans, for infinities (jax.debug_infs)."""
    return _debug_block("infs", new_val)


def __getattr__(name):
    # the module is the config object: xlapy.config.jax_enable_x64 reads the option
    if name == "jax_enable_x64":
        return x64_enabled()
    if name == "jax_disable_jit":
        return jit_disabled()
    if name in ("jax_debug_nans", "jax_debug_infs"):
        return debug_checks()[name == "jax_debug_infs"]
    raise AttributeError(f"module 'xlapy.config' has no attribute '{name}' (options: "
                         f"{', '.join(_OPTIONS)})")
