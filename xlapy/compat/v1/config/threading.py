"""tf.config.threading: the thread counts. The intra-op count is xlapy's thread count for
the compiled clusters' large kernels (XLAPY_NUM_THREADS, read by each compilation: it
applies to clusters compiled after the call); 0 restores the default (every core this
process may use). The inter-op count is recorded only: the executor runs one op at a time."""

from __future__ import annotations

import os

__all__ = ["get_inter_op_parallelism_threads", "get_intra_op_parallelism_threads",
           "set_inter_op_parallelism_threads", "set_intra_op_parallelism_threads"]

_ENV = "XLAPY_NUM_THREADS"
_state: dict = {"intra": 0, "inter": 0, "env_before": None}


def _count(num_threads, what) -> int:
    if isinstance(num_threads, bool) or int(num_threads) != num_threads or num_threads < 0:
        raise ValueError(f"{what} must be a non-negative integer (0: the system picks), got "
                         f"{num_threads!r}")
    return int(num_threads)


def get_intra_op_parallelism_threads() -> int:
    """The intra-op thread count set (0: the default, every usable core)."""
    return _state["intra"]


def set_intra_op_parallelism_threads(num_threads) -> None:
    """Run the kernels of clusters compiled from now on with num_threads threads (0: the
    default)."""
    n = _count(num_threads, "num_threads")
    if _state["intra"] == 0:
        _state["env_before"] = os.environ.get(_ENV)
    if n > 0:
        os.environ[_ENV] = str(n)
    elif _state["intra"] != 0:
        before = _state["env_before"]
        if before is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = before
    _state["intra"] = n


def get_inter_op_parallelism_threads() -> int:
    """The inter-op thread count set (0: the default)."""
    return _state["inter"]


def set_inter_op_parallelism_threads(num_threads) -> None:
    """Record the inter-op thread count (xlapy's executor runs one op at a time)."""
    _state["inter"] = _count(num_threads, "num_threads")
