"""Python's cyclic garbage collector held off while xlapy compiles.

A compilation allocates tens of thousands of short-lived objects (HLO instructions, llvmlite
IR values, strings) and frees nearly all of them by reference counting; the cyclic
collector, triggered every 700 allocations, would meanwhile scan them and, every hundredth
time, every object the process holds. Compiling with it paused is faster (`.venv/bin/python
benchmarks/compile_breakdown.py --gc`); the cycles a compilation leaves are collected at the
next collection after it.

  with gc_paused():
      ...

Does nothing when the collector is already off (the caller's choice is kept). Pauses may
overlap (threads compiling at once): the collector runs again when the last one ends. A
thread that turns the collector off itself while a compilation is under way will find it
on again afterwards.
"""

from __future__ import annotations

import contextlib
import gc
import threading

ENABLED = True   # benchmarks/compile_breakdown.py --gc switches it

_lock = threading.Lock()
_depth = 0


@contextlib.contextmanager
def gc_paused():
    global _depth
    with _lock:
        paused = ENABLED and (_depth > 0 or gc.isenabled())
        if paused:
            _depth += 1
            gc.disable()
    try:
        yield
    finally:
        if paused:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    gc.enable()
