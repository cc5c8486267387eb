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


def first_call(fn, reset=None, repeats: int = 5, idle: float = 0.15) -> list[float]:
    """Seconds of cold calls (trace + compile + run): the first call, then, when `reset`
    (the system's clear-caches function) is given, repeats - 1 more, each after reset().
    Each starts on an idle machine: after `idle` seconds of sleep, so that worker threads of
    whatever ran before (OpenBLAS and XLA's Eigen pool spin-wait for a while after a job) have
    gone to sleep and do not take cores from a compiler that uses them, and after a garbage
    collection (JAX's large heap makes a full collection inside the call cost tens of
    milliseconds, whoever triggers it). A single first call
    moves by 20-50 % between runs on a shared machine; report the median."""
    times = []
    for k in range(repeats if reset is not None else 1):
        if k:
            reset()
        gc.collect()  # the dropped programs' garbage is not collected inside the timed call
        time.sleep(idle)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def cpu_wall_median(fn, calls: int) -> tuple[float, float]:
    """(median CPU seconds, median wall seconds) per call over `calls` calls of fn; CPU
    time is the process's (time.process_time: all of its threads), so on a loaded machine
    it still compares the work done."""
    cpu, wall = [], []
    for _ in range(calls):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


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
