"""Host callbacks from compiled code: the Python side of the custom-call
`xlapy_host_callback` (hlo/host_callbacks.py; the emitter is emitters/host_callback.py).

    void xlapy_host_callback(i64 id, ptr operands, ptr results)

is a ctypes CFUNCTYPE function (made once per process, registered with LLVM by name when
the first object calling it is loaded, so cached objects stay valid across processes).
`operands` and `results` are tables of the buffers' addresses, row-major, of the shapes
registered with the id. ctypes takes the GIL (the program runs without it), the operands
are wrapped as NumPy arrays and copied (a callback may keep them: the program reuses its
buffers), the function runs, its checked results are copied into the program's buffers.

An exception never crosses back into the compiled code: it is kept for the calling thread,
later callbacks of the same run do nothing, and the executable raises it when the program
returns (`raise_pending`). The call happens on the thread that runs the program: the
emitter places it in the program's sequential code, never in a kernel the thread pool runs.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading

import llvmlite.binding as llvm
import numpy as np

from xlapy.backends.cpu.runtime.loader import register_lazy
from xlapy.hlo import host_callbacks

SYMBOL = "xlapy_host_callback"
_PROTO = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p),
                          ctypes.POINTER(ctypes.c_void_p))
_state = threading.local()


def _view(addr, dims: tuple, dtype: np.dtype) -> np.ndarray:
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes == 0 or not addr:
        return np.zeros(dims, dtype)
    buf = (ctypes.c_char * nbytes).from_address(addr)
    return np.frombuffer(buf, dtype).reshape(dims)


def _run(callback_id, operands, results) -> None:
    try:
        if getattr(_state, "error", None) is not None:
            return  # an earlier callback of this run failed: the run's results are void
        cb = host_callbacks.lookup(int(callback_id))
        args = [_view(operands[k], d, dt).copy() for k, (d, dt) in enumerate(cb.in_avals)]
        outs = host_callbacks.invoke(int(callback_id), args)
        for k, (o, (d, dt)) in enumerate(zip(outs, cb.out_avals)):
            if o.size:
                np.copyto(_view(results[k], d, dt), o)
    except BaseException as e:
        _state.error = e


@functools.lru_cache(maxsize=None)
def _function():
    return _PROTO(_run)


def _register() -> None:
    llvm.add_symbol(SYMBOL, ctypes.cast(_function(), ctypes.c_void_p).value)


register_lazy([SYMBOL], _register)


def raise_pending() -> None:
    """Raise (and forget) the exception a callback of this thread's last run raised."""
    e = getattr(_state, "error", None)
    if e is not None:
        _state.error = None
        if isinstance(e, host_callbacks.CallbackError):
            raise e
        raise host_callbacks.CallbackError(f"host callback failed: {type(e).__name__}: "
                                           f"{e}") from e


def clear_pending() -> None:
    _state.error = None


__all__ = ["SYMBOL", "raise_pending", "clear_pending"]
