"""One threading system for gemms and kernels: while an executable with pool-split gemms
runs, the BLAS library runs single-threaded.

A large dot is emitted as independent sub-gemms over slices of the output, run on xlapy's
thread pool (gemm.py). Each sub-gemm must then run on its own thread only: OpenBLAS's
pthreads build has no per-thread setting (its openblas_set_num_threads_local changes the
process-wide count), so `serial_blas()` sets the process-wide count to 1 for the duration
of the run and restores it afterwards. Nested and concurrent runs are counted under a lock;
only the outermost restores. While such a run is in flight, another Python thread's NumPy
matmul also runs single-threaded: correct, only slower, and only for that window.

Why: with OpenBLAS threading its own gemms and xlapy threading its kernels, the two pools'
workers compete for the same cores (OpenBLAS workers spin for a long time after each call);
on a two-core machine the kernels that follow a gemm ran 3-6x slower than alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading

_lock = threading.Lock()
_depth = 0
_saved = 0
_fns: list = []  # [get, set] ctypes functions of the BLAS that xlapy_sgemm calls, or empty


def register(lib) -> None:
    """Called by jit.py with the ctypes library whose gemm xlapy calls (NumPy's OpenBLAS)."""
    try:
        get = lib.scipy_openblas_get_num_threads64_
        set_ = lib.scipy_openblas_set_num_threads64_
    except AttributeError:
        return
    get.restype, get.argtypes = ctypes.c_int, []
    set_.restype, set_.argtypes = None, [ctypes.c_int]
    _fns[:] = [get, set_]


def available() -> bool:
    """Whether the gemm's thread count can be controlled (else gemms keep BLAS threading)."""
    from xlapy.backends.cpu import jit
    jit._init()
    return bool(_fns)


@contextlib.contextmanager
def serial_blas():
    global _depth, _saved
    if not _fns:
        yield
        return
    get, set_ = _fns
    with _lock:
        if _depth == 0:
            _saved = get()
            if _saved != 1:
                set_(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved != 1:
                set_(_saved)
