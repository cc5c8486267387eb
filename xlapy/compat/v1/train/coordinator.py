"""tf.train.Coordinator: the thread-coordination boilerplate TF 1.x scripts wrap their
loops in (the queue runners it coordinates: queue_runner.py).

Coordinator is TF's: threads ask should_stop(), any of them request_stop(exception), and
join() waits for the registered threads and re-raises the first exception reported.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from xlapy.compat.v1.errors import OutOfRangeError


class Coordinator:
    def __init__(self, clean_stop_exception_types=None):
        self._clean = tuple(clean_stop_exception_types or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info = None
        self._registered: set = set()
        self._joined = False

    def request_stop(self, ex=None):
        with self._lock:
            if ex is not None and self._exc_info is None:
                if isinstance(ex, tuple):
                    info = ex
                else:
                    info = (type(ex), ex, ex.__traceback__)
                if not issubclass(info[0], self._clean):
                    self._exc_info = info
            self._stop_event.set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        try:
            yield
        except Exception:  # every exception stops the threads, as TF's
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        threads = set(threads or []) | self._registered
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.time() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.time()))
        alive = [t.name for t in threads if t.is_alive()]
        self._joined = True
        if self._exc_info is not None:
            raise self._exc_info[1].with_traceback(self._exc_info[2])
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: "
                               f"{' '.join(alive)}")

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        if self._exc_info is not None:
            raise self._exc_info[1].with_traceback(self._exc_info[2])
