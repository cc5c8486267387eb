"""Compiling the parts of a split module (split.py) concurrently, one thread each.

llvmlite guards every LLVM call with one process-wide lock, so two threads cannot compile at
once through it. LLVM itself compiles concurrently as long as each thread has its own
LLVMContext and TargetMachine (XLA's parallel codegen and ORC's concurrent compilation rely on
this). While a split module compiles, the calling thread holds llvmlite's lock, which keeps
every other thread out of LLVM, and the compiling threads, each in a fresh context with its
own target machine, pass through it (_PassThroughLock). Each context is closed on the thread
that used it, before it stops passing the lock.

The helper threads persist (daemon threads blocked on a queue, recreated after a fork).
`wake(n)`, called when a compilation starts, gets n of them running before the LLVM work is
ready: a thread that has slept for a while, or a core that has been idle, can take
milliseconds to get scheduled again (measured: up to 4 ms on this project's 2-core VM after
0.15 s idle), which the compiler's own Python work (HLO passes, IR emission) then hides.

  available()                      whether llvmlite's lock can be passed (else: serially)
  wake(n)                          start / wake n helper threads (when a compilation starts)
  compile_all(texts, pipelines, dump)  [(object, optimized IR, assembly)], texts' order
"""

from __future__ import annotations

import functools
import os
import queue
import threading

import llvmlite.binding as llvm


class _PassThroughLock:
    """Stands in for llvmlite's lock object: threads marked `free` skip it."""

    def __init__(self, inner):
        self.inner = inner
        self.local = threading.local()

    def acquire(self, blocking=True, timeout=-1):
        if getattr(self.local, "free", False):
            return True
        return self.inner.acquire(blocking, timeout)

    def release(self):
        if not getattr(self.local, "free", False):
            self.inner.release()

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()


@functools.lru_cache(maxsize=None)
def _pass_through_lock() -> _PassThroughLock | None:
    try:
        from llvmlite.binding import ffi
        holder = ffi.lib._lock
        inner = holder._lock
        if not (hasattr(inner, "acquire") and hasattr(inner, "release")):
            return None
        lock = _PassThroughLock(inner)
        holder._lock = lock
        return lock
    except AttributeError:  # another llvmlite layout: compile serially
        return None


def available() -> bool:
    return _pass_through_lock() is not None


def llvmlite_lock():
    """The lock llvmlite holds around every LLVM call (codegen.py holds it across a fork),
    or None for an llvmlite laid out otherwise."""
    passing = _pass_through_lock()
    if passing is not None:
        return passing.inner
    try:
        from llvmlite.binding import ffi  # (its private lock: see _pass_through_lock)
        inner = ffi.lib._lock._lock
    except AttributeError:
        return None
    return inner if hasattr(inner, "acquire") and hasattr(inner, "release") else None


# ---- helper threads ------------------------------------------------------------------------
_helpers: list[queue.SimpleQueue] = []
_helpers_lock = threading.Lock()


def _helper(q: queue.SimpleQueue) -> None:
    while True:
        job = q.get()
        if job is not None:  # None: a wake-up, nothing to do
            job()


def _start_helpers(n: int) -> list[queue.SimpleQueue]:
    """The queues of the first n helper threads, starting those that do not exist yet."""
    with _helpers_lock:
        while len(_helpers) < n:
            q: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=_helper, args=(q,), daemon=True,
                             name=f"xlapy-llvm-{len(_helpers) + 1}").start()
            _helpers.append(q)
        return _helpers[:n]


def wake(n: int) -> None:
    """Make sure n helper threads exist and nudge them awake."""
    if n > 0 and available():
        for q in _start_helpers(n):
            q.put(None)


def _after_fork() -> None:  # the threads did not survive into the child
    global _helpers_lock
    _helpers.clear()
    _helpers_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)

_worker_tms: list = []  # one target machine per part (index 0: the calling thread's)


def compile_all(texts: list[str], pipelines: list[str], dump: bool, compile_one,
                new_target_machine) -> list:
    """compile_one(text, target machine, pipeline, dump, context) of every text (codegen.py),
    the first on this thread and one helper thread for each other, each with a target
    machine of its own from new_target_machine(); called with codegen's lock held."""
    lock = _pass_through_lock()
    while len(_worker_tms) < len(texts):
        _worker_tms.append(new_target_machine())
    try:
        helpers = _start_helpers(len(texts) - 1)
    except RuntimeError:  # no thread can be started (a resource limit): one after another
        return [compile_one(t, _worker_tms[0], p, dump) for t, p in zip(texts, pipelines)]
    results: list = [None] * len(texts)
    errors: list = []
    done = [threading.Event() for _ in texts]

    def work(k: int) -> None:
        lock.local.free = k > 0
        try:
            ctx = llvm.create_context()
            try:
                results[k] = compile_one(texts[k], _worker_tms[k], pipelines[k], dump, ctx)
            except BaseException as e:  # re-raised on the calling thread, without the
                errors.append(e.with_traceback(None))  # frames that hold ctx's modules
            ctx.close()  # here, while this thread may still pass the lock
        finally:
            lock.local.free = False
            done[k].set()

    lock.acquire()
    try:
        for k, q in enumerate(helpers, start=1):
            q.put(functools.partial(work, k))
        work(0)
    finally:
        try:  # also after an interrupt: no helper may still be using a target machine
            for d in done[1:]:
                d.wait()
        finally:
            lock.release()
    if errors:
        raise errors[0]
    return results
