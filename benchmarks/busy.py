"""A CPU-bound neighbour process for measuring under load (issue 17's busy-machine mode).

    with neighbour():      # one process spinning on pure-Python arithmetic until the block ends
        ...

It stands for another job on a shared machine: it takes one core's worth of time from
whichever core the scheduler gives it, so that threads which busy-wait (OpenBLAS's, a
thread pool's) lose their time slices to it as they would beside a real neighbour.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

_SPIN = "import time\nx = 0\nwhile True:\n    x = (x * 1103515245 + 12345) % 2147483648\n"


@contextlib.contextmanager
def neighbour(processes: int = 1):
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(processes)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
            p.wait()
