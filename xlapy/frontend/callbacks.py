"""Host callbacks in the API: xlapy.debug.print, xlapy.debug.callback, xlapy.pure_callback
(jax.debug.print, jax.debug.callback, jax.pure_callback).

They run Python while the program runs, on the runtime values as NumPy arrays: eagerly,
under jit (the cpu backend calls back into Python from the compiled code; the interpreter
calls the function), inside lax.scan / while_loop / cond bodies (each time the body runs).
Rules under transformations: frontend/primitives/callback.py.

Each (function, format, pytree structure) gets one wrapper (kept for the process), so
tracing a program again gives the same callback ids and the same HLO (jit's caches hit).
"""

from __future__ import annotations

import threading

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import ShapedArray, get_aval
from xlapy.frontend.dtypes import canonicalize_dtype
from xlapy.frontend.primitives.callback import call

_wrappers: dict = {}
_lock = threading.Lock()


def _wrapper(key, make):
    """make(), once per key (a fresh one when key is not hashable)."""
    try:
        hash(key)
    except TypeError:
        return make()
    with _lock:
        w = _wrappers.get(key)
        if w is None:
            w = _wrappers[key] = make()
        return w


def _leaves(args, kwargs, what: str):
    leaves, tree = pytree.flatten((args, kwargs))
    out = []
    for x in leaves:
        try:
            get_aval(x)
        except Exception:
            raise XlapyError(f"{what}: the arguments must be arrays (or pytrees of arrays), "
                             f"got {type(x).__name__}") from None
        out.append(x)
    return out, tree


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Print fmt.format(*args, **kwargs) with the values the arrays have when the program
    runs (in program order; every iteration inside a loop body)."""
    if not isinstance(fmt, str):
        raise XlapyError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    leaves, tree = _leaves(args, kwargs, "debug.print")

    def make():
        def printer(*arrays):
            a, kw = pytree.unflatten(tree, list(arrays))
            print(fmt.format(*a, **kw))
            return []
        return printer
    call(_wrapper(("print", fmt, tree), make), leaves, [], f"debug.print({fmt!r})",
         effect=True)


def debug_callback(callback, *args, ordered: bool = False, **kwargs) -> None:
    """Call callback(*args, **kwargs) with the runtime values (NumPy arrays), for its
    effect; what it returns is ignored."""
    if not callable(callback):
        raise XlapyError(f"debug.callback: {type(callback).__name__} is not callable")
    leaves, tree = _leaves(args, kwargs, "debug.callback")

    def make():
        def run(*arrays):
            a, kw = pytree.unflatten(tree, list(arrays))
            callback(*a, **kw)
            return []
        return run
    name = f"debug.callback({getattr(callback, '__name__', type(callback).__name__)})"
    call(_wrapper(("callback", callback, tree), make), leaves, [], name, effect=True)


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """callback(*args, **kwargs) computed in Python on the runtime values: it must return
    arrays of the shapes and dtypes of result_shape_dtypes (a pytree of objects with .shape
    and .dtype, e.g. xlapy.ShapeDtypeStruct). Without side effects: unused, it is removed.
    vmap_method: how vmap calls it (None: vmap is an error; "sequential", "expand_dims",
    "broadcast_all": see frontend/primitives/callback.py)."""
    if not callable(callback):
        raise XlapyError(f"pure_callback: {type(callback).__name__} is not callable")
    name = f"pure_callback({getattr(callback, '__name__', type(callback).__name__)})"
    specs, out_tree = pytree.flatten(result_shape_dtypes)
    try:
        result_avals = [ShapedArray(tuple(int(d) for d in s.shape),
                                    canonicalize_dtype(np.dtype(s.dtype))) for s in specs]
    except (AttributeError, TypeError) as e:
        raise XlapyError(f"{name}: result_shape_dtypes must be a pytree of objects with "
                         f"shape and dtype (xlapy.ShapeDtypeStruct): {e}") from None
    leaves, tree = _leaves(args, kwargs, "pure_callback")

    def make():
        def run(*arrays):
            a, kw = pytree.unflatten(tree, list(arrays))
            out = callback(*a, **kw)
            try:
                flat = pytree.flatten_up_to(out_tree, out)
            except Exception as e:
                raise XlapyError(f"the result does not have the structure of "
                                 f"result_shape_dtypes: {e}") from None
            # Python scalars and lists take the declared dtype; arrays must match it
            return [o if isinstance(o, (np.ndarray, np.generic)) else np.asarray(o, r.dtype)
                    for o, r in zip(flat, result_avals)]
        return run
    key = ("pure", callback, tree, out_tree, tuple((a.shape, a.dtype) for a in result_avals))
    outs = call(_wrapper(key, make), leaves, result_avals, name, effect=False,
                vmap_method=vmap_method)
    return pytree.unflatten(out_tree, list(outs))


__all__ = ["debug_print", "debug_callback", "pure_callback"]
