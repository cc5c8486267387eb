"""Timing harness shared by the benchmark scripts.

`measure(fn, min_time=0.3)` warms up, then runs fn repeatedly for at least min_time
seconds (and at least 3 times) and reports the MINIMUM and the median per-call time: the
minimum is the least noisy estimate on a shared machine; the median is printed beside it.
Ratios are always taken against anchors measured in the same process, so absolute machine
speed and load cancel out as far as possible.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass


@dataclass
class Timing:
    best: float
    median: float
    runs: int


def measure(fn, min_time: float = 0.3, min_runs: int = 3, warmup: int = 1) -> Timing:
    for _ in range(warmup):
        fn()
    times = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        while len(times) < min_runs or time.perf_counter() - start < min_time:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            if len(times) > 10000:
                break
    finally:
        if gc_was:
            gc.enable()
    return Timing(min(times), statistics.median(times), len(times))


def first_call(fn) -> float:
    """Seconds for a first call (compilation included)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


def best(fn, n: int = 30) -> float:
    """The minimum time of n calls of fn after one warm-up call (for scripts that time a
    fixed number of calls rather than a time budget)."""
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
