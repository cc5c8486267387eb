"""BLAS and LAPACK for generated code, registered with LLVM by name when first needed.

  xlapy_sgemm / xlapy_dgemm     NumPy's bundled OpenBLAS (ILP64, symbols scipy_sgemm_64_...)
  (and _cgemm / _zgemm)
                                when present: the gemm NumPy's matmul uses, so xlapy's dots
                                run at exactly NumPy's speed; else the LP64 Fortran BLAS
                                inside scipy (scipy.linalg.cython_blas)
  xlapy_spotrf / xlapy_dpotrf   LAPACK from scipy (scipy.linalg.cython_lapack): potrf,
  ...                           getrf, geqrf, orgqr, syevd, gesdd, gesvd, gees, gehrd, sytrd,
                                gtsv, geev (and the complex getrf, potrf, geqrf, ungqr,
                                heevd, gesdd, gesvd, geev); xlapy_strsm / xlapy_dtrsm
                                (and ctrsm, ztrsm) from scipy.linalg.cython_blas
  xlapy_blas_get_threads / _set_threads   NumPy's OpenBLAS's thread count (xlapy's gemm
                                calls run single-threaded: thread_guard_available)

Generated code passes BLAS integers of blas_int_bits() bits (part of the cache key).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import llvmlite.binding as llvm
import numpy

from xlapy.backends.cpu.runtime.loader import register_lazy

GEMMS = ("sgemm", "dgemm", "cgemm", "zgemm")
LAPACK = tuple(t + r for r in ("potrf", "getrf", "geqrf", "orgqr", "syevd", "gesdd", "gesvd",
                               "gees", "gehrd", "sytrd", "gtsv", "geev") for t in "sd") + (
    "cgeev", "zgeev", "cgetrf", "zgetrf", "cpotrf", "zpotrf", "cgeqrf", "zgeqrf", "cungqr",
    "zungqr", "cheevd", "zheevd", "cgesdd", "zgesdd", "cgesvd", "zgesvd")
LAPACK_BLAS = ("strsm", "dtrsm", "ctrsm", "ztrsm")   # BLAS routines of the LAPACK custom-calls


def capsule_pointer(capsule) -> int:
    """The C pointer inside a Cython __pyx_capi__ capsule (scipy's BLAS/LAPACK functions)."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype = ctypes.c_void_p
    get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_ptr(capsule, get_name(capsule))


def _openblas_symbols(names: dict) -> dict | None:
    """{key: address of symbol} for names {key: symbol} in NumPy's bundled OpenBLAS (the
    first of its libraries that has them all), or None."""
    pattern = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs",
                           "libscipy_openblas64_*.so")
    for path in glob.glob(pattern):
        try:
            lib = ctypes.CDLL(path)
            return {k: ctypes.cast(getattr(lib, sym), ctypes.c_void_p).value
                    for k, sym in names.items()}
        except (OSError, AttributeError):
            continue
    return None


@functools.lru_cache(maxsize=None)
def _numpy_openblas() -> dict | None:
    """{name: address} of NumPy's bundled OpenBLAS gemms, or None."""
    return _openblas_symbols({n: f"scipy_{n}_64_" for n in GEMMS})


GET_THREADS, SET_THREADS = "xlapy_blas_get_threads", "xlapy_blas_set_threads"
OPENBLAS_THREADED_MNK = 1 << 16   # OpenBLAS may split gemms with m*n*k from about here


@functools.lru_cache(maxsize=None)
def _openblas_threads() -> dict | None:
    """{symbol: address} of NumPy's OpenBLAS thread-count getter and setter, or None."""
    return _openblas_symbols({GET_THREADS: "scipy_openblas_get_num_threads64_",
                              SET_THREADS: "scipy_openblas_set_num_threads64_"})


def thread_guard_available() -> bool:
    """Whether generated code can run OpenBLAS's gemms on the calling thread alone: around
    each call it sets OpenBLAS's thread count to 1 and back (NumPy's OpenBLAS, pthreads
    build: the setter only stores the count; its worker threads stay parked), so they
    never wake up to spin against xlapy's pool."""
    return _numpy_openblas() is not None and _openblas_threads() is not None


def _register_threads() -> None:
    for name, addr in (_openblas_threads() or {}).items():
        llvm.add_symbol(name, addr)


def blas_int_bits() -> int:
    """Integer width of the gemm registered as xlapy_sgemm/xlapy_dgemm."""
    return 64 if _numpy_openblas() else 32


def _register_gemms() -> None:
    found = _numpy_openblas()
    if found:
        for name, addr in found.items():
            llvm.add_symbol(f"xlapy_{name}", addr)
        return
    from scipy.linalg import cython_blas  # LP64 Fortran BLAS inside scipy
    for name in GEMMS:
        llvm.add_symbol(f"xlapy_{name}", capsule_pointer(cython_blas.__pyx_capi__[name]))


def _register_lapack() -> None:
    from scipy.linalg import cython_lapack  # imported only when a factorization is compiled
    from scipy.linalg import cython_blas
    for name in LAPACK:
        llvm.add_symbol(f"xlapy_{name}", capsule_pointer(cython_lapack.__pyx_capi__[name]))
    for name in LAPACK_BLAS:
        llvm.add_symbol(f"xlapy_{name}", capsule_pointer(cython_blas.__pyx_capi__[name]))


register_lazy([f"xlapy_{n}" for n in GEMMS], _register_gemms)
register_lazy([f"xlapy_{n}" for n in LAPACK + LAPACK_BLAS], _register_lapack)
register_lazy([GET_THREADS, SET_THREADS], _register_threads)
