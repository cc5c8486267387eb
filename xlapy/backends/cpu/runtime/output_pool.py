"""Recycled output buffers, shared by the executables of a process.

A result the caller has dropped is reused as a later call's output buffer of the same shape
and dtype, by any executable, instead of mapping fresh memory and page-faulting it in: a
fresh 32 MB output costs 4.0 ms of page faults on this project's VM against 0.25 ms
recycled (medians of 25, `.venv/bin/python benchmarks/runtime_costs.py`; NumPy asks for
transparent huge pages, and when the kernel has to compact memory for them, single
allocations have taken tens of milliseconds), which the first call of a new program (a row
softmax 8192x1024) paid on top of its compilation.

    out = take(dims, dtype)     # a free recycled array, or a new one
    keep(out)                   # after the call: recycle it once the caller drops it
    recyclable(dims, dtype)     # whether that shape is ever kept (small ones are not)

A buffer is handed out only when nothing but the pool refers to it (its reference count
says so), so an array the caller still holds, passes back in, or keeps a view of (a view
refers to its base), is never written. Kept: arrays of at least RECYCLE_BYTES, DEPTH per
(shape, dtype), CAP_BYTES in all (the least recently used shapes are let go first). Compiled
programs do not own these buffers: `xlapy.clear_caches()` forgets programs, not memory;
`clear()` lets every kept buffer go.
"""

from __future__ import annotations

import collections
import sys
import threading

import numpy as np

RECYCLE_BYTES = 1 << 16
DEPTH = 2
CAP_BYTES = 1 << 28

_pools: collections.OrderedDict = collections.OrderedDict()   # (dims, dtype) -> [arrays]
_bytes = 0
_lock = threading.Lock()


def recyclable(dims: tuple, dtype) -> bool:
    """Whether outputs of this shape and dtype are kept at all (executables ask once, so
    their calls skip the pool for small outputs)."""
    return int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize >= RECYCLE_BYTES


def take(dims: tuple, dtype) -> np.ndarray:
    global _bytes
    key = (dims, np.dtype(dtype))
    with _lock:
        pool = _pools.get(key)
        if pool:
            # the most recently kept free buffer first (still in the caches); oldest-first
            # would alternate between two buffers even once results are dropped
            for i in reversed(range(len(pool))):
                # references: the pool's list and getrefcount's own argument
                if sys.getrefcount(pool[i]) <= 2:
                    buf = pool.pop(i)
                    _bytes -= buf.nbytes
                    return buf
    return np.empty(dims, dtype)


def keep(out: np.ndarray) -> None:
    global _bytes
    if out.nbytes < RECYCLE_BYTES or out.base is not None:
        return
    key = (out.shape, out.dtype)
    with _lock:
        pool = _pools.setdefault(key, [])
        _pools.move_to_end(key)
        pool.append(out)
        _bytes += out.nbytes
        if len(pool) > DEPTH:
            _bytes -= pool.pop(0).nbytes
        while _bytes > CAP_BYTES and _pools:
            old_key, old = next(iter(_pools.items()))
            _bytes -= old.pop(0).nbytes
            if not old:
                del _pools[old_key]


def kept_bytes() -> int:
    return _bytes


def clear() -> None:
    global _bytes
    with _lock:
        _pools.clear()
        _bytes = 0
