"""tf.summary.FileWriterCache: one FileWriter per log directory, shared by whoever writes
there (MonitoredTrainingSession's summary, step counter and checkpoint hooks), so a
training run writes one event file per directory, as TF's SummaryWriterCache."""

from __future__ import annotations

import os
import threading

__all__ = ["FileWriterCache"]


class FileWriterCache:
    _cache: dict = {}          # newest use last
    _lock = threading.RLock()
    _atexit = False
    MAX_OPEN = 64              # beyond: the least recently used is closed (its thread, file)

    @staticmethod
    def get(logdir):
        """The FileWriter of logdir, made (with the default graph) on first use; one closed
        since is reopened."""
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.summary.writer import FileWriter
        key = os.path.abspath(os.fspath(logdir))
        with FileWriterCache._lock:
            w = FileWriterCache._cache.get(key)
            if w is None:
                w = FileWriter(logdir)
                if not FileWriterCache._atexit:  # after tensorboardX's (multiprocessing's)
                    import atexit                 # exit handlers: runs before them
                    atexit.register(FileWriterCache.clear)
                    FileWriterCache._atexit = True
                try:
                    w.add_graph(get_default_graph())
                except Exception as e:  # the events still get written
                    from xlapy.compat.v1 import logging
                    logging.warning("FileWriterCache: the graph is not written to %s: %s",
                                    logdir, e)
                FileWriterCache._cache[key] = w
            elif w._closed:
                w.reopen()
            FileWriterCache._cache[key] = FileWriterCache._cache.pop(key)
            while len(FileWriterCache._cache) > FileWriterCache.MAX_OPEN:
                FileWriterCache._cache.pop(next(iter(FileWriterCache._cache))).close()
            return w

    @staticmethod
    def clear():
        """Closes and forgets every cached FileWriter."""
        with FileWriterCache._lock:
            for w in FileWriterCache._cache.values():
                w.close()
            FileWriterCache._cache.clear()
