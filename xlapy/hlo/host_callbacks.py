"""Host callbacks: Python functions that programs call while they run (jax.debug.print,
jax.debug.callback, jax.pure_callback).

A program refers to its callbacks by an integer id: the HLO custom-call

    %r = (f32[3]) custom-call(f32[3] %x), custom_call_target="xlapy_host_callback",
         backend_config="{\"callback_id\": 7}", custom_call_has_side_effect=true

calls the function registered under id 7 in this process. `register` keeps the callable
with the shapes and dtypes of its operands and results (its avals, as (dims, dtype) pairs)
for the life of the process; registering the same callable with the same avals again gives
the same id, so re-tracing a program gives the same HLO text (and its compilation caches
hit). The ids mean something only in the process that registered them. The compiled code
keeps only the id and looks the callable up when it runs, so a program compiled in another
process from the same HLO text (the disk cache) calls what the id means in this one, which
is what this process's HLO says: the cached code stays right.

`invoke(id, operands)` runs the callable on NumPy arrays and checks its results against the
registered avals (an XlapyError naming the callback otherwise), for the interpreter and
the cpu runtime alike.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy as np

from xlapy.errors import XlapyError

TARGET = "xlapy_host_callback"


class CallbackError(XlapyError):
    """A host callback raised, or returned results of the wrong shape or dtype."""


@dataclass(frozen=True)
class HostCallback:
    fn: object                   # called with NumPy arrays, returns a sequence of arrays
    in_avals: tuple              # ((dims, dtype), ...)
    out_avals: tuple
    name: str                    # for messages: debug.print, pure_callback(f), ...
    effect: bool                 # ordered side effect (debug.print / debug.callback)


_lock = threading.Lock()
_by_id: list[HostCallback] = []
_ids: dict = {}


def _avals(avals) -> tuple:
    return tuple((tuple(int(d) for d in dims), np.dtype(dt)) for dims, dt in avals)


def register(fn, in_avals, out_avals, name: str, effect: bool) -> int:
    """The id of fn with these operand/result avals ((dims, dtype) pairs)."""
    cb = HostCallback(fn, _avals(in_avals), _avals(out_avals), str(name), bool(effect))
    key = (id(fn), cb.in_avals, cb.out_avals, cb.name, cb.effect)
    with _lock:
        k = _ids.get(key)
        if k is not None and _by_id[k].fn is fn:
            return k
        _by_id.append(cb)
        _ids[key] = len(_by_id) - 1
        return len(_by_id) - 1


def lookup(callback_id: int) -> HostCallback:
    if not 0 <= callback_id < len(_by_id):
        raise CallbackError(f"host callback id {callback_id} is not registered in this process "
                            "(a module with host callbacks runs only in the process that "
                            "traced it)")
    return _by_id[callback_id]


def backend_config(callback_id: int) -> str:
    return json.dumps({"callback_id": int(callback_id)})


def callback_id_of(instr) -> int:
    """The id in a custom-call instruction's backend_config."""
    try:
        text = str(instr.attrs["backend_config"])
        if text.startswith('"'):  # XLA's quoted form, backend_config="{\"callback_id\": 7}"
            text = json.loads(text)
        return int(json.loads(text)["callback_id"])
    except (KeyError, ValueError, TypeError):
        raise CallbackError(f"{instr.where()}{TARGET} custom-call without a callback_id in its "
                            f"backend_config: {instr}") from None


def _describe(avals) -> str:
    return ", ".join(f"{dt.name}{list(d)}" for d, dt in avals) or "nothing"


def invoke(callback_id: int, operands) -> list:
    """Run callback `callback_id` on NumPy arrays; its results, checked, as arrays of the
    registered shapes and dtypes."""
    cb = lookup(callback_id)
    try:
        out = cb.fn(*operands)
    except Exception as e:
        raise CallbackError(f"host callback {cb.name} raised {type(e).__name__}: {e}") from e
    if not cb.out_avals:
        return []
    if not isinstance(out, (list, tuple)) or len(out) != len(cb.out_avals):
        got = f"{len(out)} values" if isinstance(out, (list, tuple)) else type(out).__name__
        raise CallbackError(f"host callback {cb.name} must return {len(cb.out_avals)} arrays "
                            f"({_describe(cb.out_avals)}), got {got}")
    res = []
    for k, (o, (dims, dt)) in enumerate(zip(out, cb.out_avals)):
        a = np.asarray(o)
        if a.shape != dims or a.dtype != dt:
            raise CallbackError(f"host callback {cb.name}: result {k} is {a.dtype.name}"
                                f"{list(a.shape)}, but the declared result is "
                                f"{dt.name}{list(dims)}")
        res.append(a)
    return res


__all__ = ["TARGET", "CallbackError", "HostCallback", "register", "lookup", "invoke",
           "backend_config", "callback_id_of"]
