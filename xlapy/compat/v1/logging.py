"""tf.logging: TensorFlow 1.x's logging functions on Python's logger named "tensorflow".

Messages print as `INFO:tensorflow:message` on stderr; the default verbosity is WARN, as in
TF 1.x. set_verbosity(tf.logging.INFO) shows info messages.
"""

from __future__ import annotations

import logging as _logging
import sys

DEBUG, INFO, WARN, ERROR, FATAL = (_logging.DEBUG, _logging.INFO, _logging.WARN,
                                   _logging.ERROR, _logging.FATAL)



class _StderrHandler(_logging.StreamHandler):
    """Writes to whatever sys.stderr is when a message is logged (redirections apply)."""

    stream = property(lambda self: sys.stderr, lambda self, value: None)


_logger = _logging.getLogger("tensorflow")
if not _logger.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(_logging.Formatter("%(levelname)s:tensorflow:%(message)s"))
    _logger.addHandler(_handler)
    _logger.propagate = False
    _logger.setLevel(WARN)

_counts: dict = {}


def get_logger():
    return _logger


def set_verbosity(v) -> None:
    _logger.setLevel(v)


def get_verbosity() -> int:
    return _logger.getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    _logger.fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)


def _caller_key():
    f = sys._getframe(2)
    return f.f_code.co_filename, f.f_lineno


def log_every_n(level, msg, n, *args):
    """Log on the first call from this line and every n-th one after it."""
    key = _caller_key()
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count % max(int(n), 1) == 0:
        _logger.log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Log only the first n calls from this line."""
    key = _caller_key()
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count < n:
        _logger.log(level, msg, *args)


def log_if(level, msg, condition, *args):
    if condition:
        _logger.log(level, msg, *args)


def flush():
    for h in _logger.handlers:
        h.flush()
