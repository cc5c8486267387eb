"""XLAPY_GUARD_PAGES=1: every buffer a compiled program is handed ends at an unmapped page.

A debugging mode for the generated code's memory accesses (as glibc's MALLOC_CHECK_ or
Electric Fence are for C): each argument is copied into, each output and the scratch arena
allocated in, memory of its own whose last byte is followed by an inaccessible page (and
whose first is preceded by one), so a kernel that reads or writes past either end of a
buffer stops at once with SIGSEGV (Python's faulthandler names the call) instead of reading
whatever follows, which is harmless until a buffer happens to end at a page boundary.
XLAPY_GUARD_PAGES=start places each buffer right after the first inaccessible page instead,
for reads and writes before a buffer's start. Buffers inside the arena are not separated
from each other. Slow (a few system calls per buffer per call); off by default.

  enabled()                       whether XLAPY_GUARD_PAGES asks for it
  empty(shape, dtype, at_end)     a new guarded array (row-major); at_end None: the mode's
  copy(a)                         a guarded, row-major copy of an array
"""

from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np

PAGE = mmap.PAGESIZE


def _mode() -> str:
    return os.environ.get("XLAPY_GUARD_PAGES", "0").strip().lower()


def enabled() -> bool:
    return _mode() not in ("", "0", "false", "no")


_mprotect = None


def _protect(addr: int, size: int) -> None:
    global _mprotect
    if _mprotect is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _mprotect = libc.mprotect
    if _mprotect(addr, size, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed for XLAPY_GUARD_PAGES")


def empty(shape, dtype, at_end: bool | None = None) -> np.ndarray:
    """A row-major array in memory of its own between two inaccessible pages, placed against
    the second (at_end) or right after the first. The array keeps the mapping alive."""
    if at_end is None:
        at_end = _mode() != "start"
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    pages = -(-max(nbytes, 1) // PAGE)
    region = mmap.mmap(-1, (pages + 2) * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    _protect(base, PAGE)
    _protect(base + (pages + 1) * PAGE, PAGE)
    start = PAGE + ((pages * PAGE - nbytes) // dtype.alignment * dtype.alignment
                    if at_end else 0)
    flat = np.frombuffer(region, dtype=np.uint8, count=nbytes, offset=start)
    return flat.view(dtype).reshape(shape)


def copy(a) -> np.ndarray:
    a = np.asarray(a)
    out = empty(a.shape, a.dtype)
    out[...] = a
    return out
