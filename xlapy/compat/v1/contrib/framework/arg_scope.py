"""arg_scope: default keyword arguments for layer functions within a `with` block (slim's
idiom: `with arg_scope([conv2d, fully_connected], weights_regularizer=l2(1e-4)): ...`).
A function takes part when wrapped by add_arg_scope; arguments given at the call win over
the scope's, and an inner scope's over an outer one's."""

from __future__ import annotations

import contextlib
import functools
import threading

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

_STATE = threading.local()


def _stack() -> list:
    if not hasattr(_STATE, "stack"):
        _STATE.stack = [{}]
    return _STATE.stack


def _key(func) -> str:
    return getattr(func, "_arg_scope_key", None) or f"{func.__module__}.{func.__name__}"


def current_arg_scope() -> dict:
    return _stack()[-1]


def add_arg_scope(func):
    """func, taking its defaults from the enclosing arg_scope blocks that name it."""
    key = _key(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        scoped = current_arg_scope().get(key)
        if scoped:
            kwargs = dict(scoped, **kwargs)
        return func(*args, **kwargs)
    wrapper._arg_scope_key = key
    return wrapper


def has_arg_scope(func) -> bool:
    return hasattr(func, "_arg_scope_key")


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Within the block, the functions of list_ops_or_scope get kwargs as defaults; a dict
    (what an earlier `with arg_scope(...) as sc` gave) restores that scope."""
    stack = _stack()
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise InvalidArgumentError("arg_scope: a saved scope takes no keyword arguments")
        stack.append(dict(list_ops_or_scope))
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise InvalidTypeError("arg_scope takes a list or tuple of functions, or a scope")
        new = {k: dict(v) for k, v in stack[-1].items()}
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise InvalidArgumentError(f"{getattr(op, '__name__', op)} is not decorated "
                                           "with @add_arg_scope")
            new[_key(op)] = dict(new.get(_key(op), {}), **kwargs)
        stack.append(new)
    try:
        yield stack[-1]
    finally:
        stack.pop()
