"""Large constants outside the object code: the memory an external constant symbol
(backends/llvm/elemental.literal_global) points at.

    held = hold({symbol: array, ...})   # keep `held` as long as the code that reads them

The symbol is named for a hash of the bytes, so one buffer serves every executable that
uses the same bytes and a symbol never points at other bytes. Each buffer is a 64-byte
aligned copy (the code may read it with aligned vector loads: the declaration says align
64), registered with LLVM by name before the code that mentions it is loaded; it lives as
long as some executable holds it, and is copied and registered again when a later program
needs the same bytes after that. The copy is read-only.
"""

from __future__ import annotations

import threading
import weakref

import llvmlite.binding as llvm
import numpy as np


ALIGN = 64
_live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # symbol -> buffer
_lock = threading.Lock()


def as_bytes(data) -> np.ndarray:
    """The bytes of an array (any NumPy dtype, bf16 included) or bytes object, as uint8."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(data, dtype=np.uint8)


def _aligned_copy(data) -> np.ndarray:
    raw = as_bytes(data)
    block = np.empty(raw.size + ALIGN, dtype=np.uint8)
    start = -block.ctypes.data % ALIGN
    buf = block[start:start + raw.size]
    buf[...] = raw
    buf.flags.writeable = False
    return buf


def hold(constants: dict | None) -> list:
    """Point each symbol at a buffer holding its bytes; the buffers, to keep alive."""
    held = []
    for symbol, data in (constants or {}).items():
        with _lock:
            buf = _live.get(symbol)
            if buf is None:
                buf = _aligned_copy(data)
                llvm.add_symbol(symbol, buf.ctypes.data)
                _live[symbol] = buf
        held.append(buf)
    return held
