"""The watchdog of the compiled collectives (runtime/collectives.py): a process waiting in
MPI longer than XLAPY_MPI_TIMEOUT seconds (60 by default) ends the job with a message naming
what it waited for, instead of hanging forever when another process died, raised, hangs or
runs another program.

  xlapy_mpi_state      i64 words the generated wrappers write: BUSY (the plan in MPI now,
                       0 none), CALLS (calls made: a new call restarts the clock)
  guarded(what)        Python's own blocking MPI calls, watched the same way
  watch()              starts the watchdog thread (once, with the first plan that talks to
                       other processes)
  names                plan address -> "all-reduce r", for the message

The thread polls every 0.1 s; the compiled program runs without the GIL, so it can.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import llvmlite.binding as llvm

STATE_SYMBOL = "xlapy_mpi_state"
BUSY, CALLS = 0, 1
_GUARD = 1   # the busy word while Python itself waits in MPI (never a plan's address)

_state = (ctypes.c_int64 * 4)()
llvm.add_symbol(STATE_SYMBOL, ctypes.addressof(_state))
names: dict = {}
_thread: list = []


def timeout() -> float:
    return float(os.environ.get("XLAPY_MPI_TIMEOUT", 60))


class guarded:
    """Python's own blocking MPI calls (communicator splits, the fingerprint exchange) under
    the watchdog: `what` is the message when they do not return within the timeout."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        watch()
        names[_GUARD] = self.what
        _state[CALLS] += 1
        _state[BUSY] = _GUARD

    def __exit__(self, *exc):
        _state[BUSY] = 0
        return False


def watch() -> None:
    if not _thread:
        t = threading.Thread(target=_loop, name="xlapy-mpi-watchdog", daemon=True)
        _thread.append(t)
        t.start()


def _loop() -> None:
    seen, since = (0, 0), time.monotonic()
    while True:
        time.sleep(0.1)
        now = (_state[BUSY], _state[CALLS])
        if now != seen:
            seen, since = now, time.monotonic()
            continue
        if now[0] and time.monotonic() - since > timeout():
            name = names.get(now[0] & ((1 << 64) - 1), "a collective")
            abort(f"{name}: MPI did not complete within {timeout():g} s "
                  "(XLAPY_MPI_TIMEOUT): another process died, raised, hangs or runs another "
                  "program")


def abort(message: str, code: int = 1) -> None:
    """Print `message` and end every process of the job (MPI_Abort)."""
    MPI = sys.modules.get("mpi4py.MPI")   # (imported by whoever started MPI calls)
    rank = MPI.COMM_WORLD.rank if MPI is not None else 0
    print(f"xlapy: rank {rank}: {message}", file=sys.stderr, flush=True)
    if MPI is not None:
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)
