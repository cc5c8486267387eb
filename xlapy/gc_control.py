"""xlapy and Python's cyclic garbage collector: when it stays out of the way.

  with collector_paused(): ...     the collector off while a program is traced and compiled
  freeze_at_exit()                 (registered by `import xlapy`) the objects alive at exit
                                   left out of the collections of the interpreter's shutdown

Both are about time, neither about memory: the collector's passes are proportional to the
number of objects it tracks, and a process that has imported a compiler tracks many.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import os
import threading

_lock = threading.Lock()
_held: dict = {}        # thread ident -> pauses it holds
_was_enabled = [False]  # whether the collector was on when the first pause began


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while a program is traced and compiled (on
    again after, if it was on). A first call allocates in bursts (the compiler's first
    imports, the passes' and emitters' objects, llvmlite's IR): every 700 surviving
    container objects cost a young collection, every ten of those an older one, and the
    process's first full collection (about 20 ms, scanning every imported module's
    objects) landed in the first compile of the TF softmax tutorial, whose executor run
    never collects fully. Paused, what the compilation left is examined once, by the first
    young collection after it. Its cyclic garbage (instructions a pass replaced, llvmlite's
    IR) waits until then: the memory a compilation holds anyway. Nested and concurrent
    compilations restore the collector once, when the last ends; a child forked meanwhile
    keeps only its own thread's pauses (_after_fork_in_child)."""
    me = threading.get_ident()
    with _lock:
        if not _held:
            _was_enabled[0] = gc.isenabled()
            gc.disable()
        _held[me] = _held.get(me, 0) + 1
    try:
        yield
    finally:
        with _lock:
            _held[me] -= 1
            if not _held[me]:
                del _held[me]
            if not _held and _was_enabled[0]:
                gc.enable()


def _after_fork_in_child() -> None:
    """The forked child has only the forking thread: the lock another thread held at the
    fork is replaced, and the other threads' pauses, which would never end, are dropped."""
    global _lock
    _lock = threading.Lock()
    me = threading.get_ident()
    for ident in [i for i in _held if i != me]:
        del _held[ident]
    if not _held and _was_enabled[0]:
        gc.enable()


os.register_at_fork(after_in_child=_after_fork_in_child)


def exit_freeze_enabled() -> bool:
    """XLAPY_EXIT_FREEZE=0 keeps the interpreter's shutdown collections as they are."""
    return os.environ.get("XLAPY_EXIT_FREEZE", "1").strip() not in ("0", "false", "no")


def _flush_open_writers() -> None:
    """Flush every open, writable file object: a file that only a reference cycle keeps
    alive would otherwise have been flushed by the shutdown's collection (its finalizer)."""
    for obj in gc.get_objects():
        if isinstance(obj, (io.BufferedWriter, io.BufferedRandom, io.TextIOWrapper)):
            try:
                if not obj.closed and obj.writable():
                    obj.flush()
            except Exception:  # (a file that cannot flush now is left as it is)
                pass


def freeze_at_exit() -> None:
    """At exit (an atexit hook, so after the program and the hooks registered after xlapy's
    import): collect the garbage there is (its finalizers run as usual), flush the open
    files, then move every live object to the collector's permanent generation
    (gc.freeze). The shutdown still frees objects by reference counting, module by module,
    but its full collections no longer walk every object of every imported module: on the
    TF softmax tutorial the interpreter's exit took about 45 ms without XLA and 70-100 ms
    with it (the compiler's modules), and about 30 and 35 ms frozen (`time`d from the last
    atexit hook to the process's end, /tmp script). What changes: an object still alive at
    exit whose only references form a cycle is not finalized (as Python documents: __del__
    is not guaranteed for objects alive at exit); open files are flushed first for that
    reason. XLAPY_EXIT_FREEZE=0 turns this off."""
    if not exit_freeze_enabled():
        return
    gc.collect()
    _flush_open_writers()
    gc.freeze()


def register_exit_freeze() -> None:
    atexit.register(freeze_at_exit)
