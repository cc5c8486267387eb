"""A caching allocator of device memory, one per context (the CUDA context's, or the
emulator's host memory): blocks freed by a call or a dropped DeviceArray go back to a free
list of their size class and the next request of that class takes them, so a steady stream
of calls allocates nothing from the driver after the first.

  pool = CachingAllocator(raw_alloc, raw_free)
  addr = pool.alloc(nbytes)      a block of at least nbytes (its size class)
  pool.free(addr)                back to its free list (not to the driver)
  pool.release()                 the free lists' blocks back to the driver
  pool.close()                   release(); later frees go straight to the driver

Size classes: powers of two from 512 bytes to 1 MiB, multiples of 2 MiB above. Every
user of a context's memory runs on the context's one stream, so a block freed while work
that reads it is still queued is only handed to work queued after it (stream order), as
in XLA's and PyTorch's allocators. When the driver refuses an allocation, the free lists
are released and the allocation tried once more.
"""

from __future__ import annotations

import threading
from typing import Callable

from xlapy.errors import XlapyError

SMALL_LIMIT = 1 << 20
LARGE_GRANULE = 2 << 20
MIN_BLOCK = 512


def size_class(nbytes: int) -> int:
    """The bytes a request of nbytes gets (at least MIN_BLOCK)."""
    n = max(int(nbytes), 1)
    if n <= SMALL_LIMIT:
        return max(MIN_BLOCK, 1 << (n - 1).bit_length())
    return -(-n // LARGE_GRANULE) * LARGE_GRANULE


class CachingAllocator:
    def __init__(self, raw_alloc: Callable[[int], int], raw_free: Callable[[int], None]):
        self._raw_alloc = raw_alloc
        self._raw_free = raw_free
        self._lock = threading.Lock()
        self._free: dict[int, list[int]] = {}   # size class -> free blocks
        self._size: dict[int, int] = {}         # every block the pool made -> its size class
        self._live: set[int] = set()
        self.closed = False
        self.raw_allocs = 0                     # blocks taken from the driver
        self.reuses = 0                         # requests served from a free list

    def alloc(self, nbytes: int) -> int:
        size = size_class(nbytes)
        with self._lock:
            if self.closed:
                raise XlapyError("device memory requested after its context was closed")
            blocks = self._free.get(size)
            if blocks:
                addr = blocks.pop()
                self.reuses += 1
                self._live.add(addr)
                return addr
        try:
            addr = self._raw_alloc(size)
        except XlapyError:
            self.release()           # the cached blocks may be what the device lacks
            addr = self._raw_alloc(size)
        with self._lock:
            self.raw_allocs += 1
            self._size[addr] = size
            self._live.add(addr)
        return addr

    def free(self, addr: int) -> None:
        with self._lock:
            if addr not in self._live:
                raise XlapyError(f"device block {addr:#x} freed twice or never allocated")
            self._live.discard(addr)
            if not self.closed:
                self._free.setdefault(self._size[addr], []).append(addr)
                return
            del self._size[addr]
        self._raw_free(addr)

    def release(self) -> None:
        """Give the cached (free) blocks back to the driver; live blocks stay."""
        with self._lock:
            blocks = [a for lst in self._free.values() for a in lst]
            self._free.clear()
            for a in blocks:
                del self._size[a]
        for a in blocks:
            self._raw_free(a)

    def close(self) -> None:
        """Context teardown: the cache released; blocks still live are freed to the driver
        when they are dropped."""
        with self._lock:
            self.closed = True
        self.release()

    def stats(self) -> dict:
        with self._lock:
            cached = sum(self._size[a] for lst in self._free.values() for a in lst)
            live = sum(self._size[a] for a in self._live)
            return {"raw_allocs": self.raw_allocs, "reuses": self.reuses,
                    "cached_bytes": cached, "live_bytes": live, "live_blocks": len(self._live)}
