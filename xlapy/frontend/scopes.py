"""Context managers and wrappers of JAX's top level that change how code is traced:
named_scope, named_call, ensure_compile_time_eval, default_device.

named_scope(name) / named_call(fun, name=...): JAX puts the name into the op_name metadata
of the HLO it emits, for profilers. xlapy's HLO carries no such metadata, so they check
their arguments as JAX does and otherwise run the code unchanged.

ensure_compile_time_eval(): inside the block, operations whose operands are all concrete
(NumPy arrays, Python numbers) are computed right away even under jit, instead of being
staged into the compiled program (omnistaging); results of traced operands stay traced.

default_device(device): xlapy has one host CPU device, so the block runs as before; a
device that is not a CPU device is an error.
"""

from __future__ import annotations

import contextlib
import functools

from xlapy.errors import XlapyError
from xlapy.frontend import core


@contextlib.contextmanager
def named_scope(name: str):
    """A name for the operations traced in the block (jax.named_scope)."""
    if not isinstance(name, str):
        raise XlapyError(f"named_scope: the name must be a string, got "
                         f"{type(name).__name__}")
    yield


def named_call(fun, *, name: str | None = None):
    """fun, its operations named `name` (or fun's name) when traced (jax.named_call)."""
    if not callable(fun):
        raise XlapyError(f"named_call: expects a function, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise XlapyError(f"named_call: the name must be a string, got {type(name).__name__}")
    scope = name if name is not None else getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Operations on concrete values run eagerly in the block, even under jit."""
    state = core._state  # (this thread's traces)
    old = state.const_eval_level
    state.const_eval_level = len(state.active)
    try:
        yield
    finally:
        state.const_eval_level = old


@contextlib.contextmanager
def default_device(device):
    """The device new arrays are placed on in the block (jax.default_device): xlapy's only
    device is the host CPU, so any CPU device (or None) is accepted."""
    if device is not None and getattr(device, "platform", None) != "cpu":
        raise XlapyError(f"default_device: xlapy has only the host CPU device, got "
                         f"{device!r}")
    yield
