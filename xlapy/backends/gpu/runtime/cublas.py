"""cuBLAS through ctypes (nvidia-cublas-cu12's libcublas.so.12): f32, f16 and bf16 dots as
one strided-batched GEMM with f32 accumulation.

Row-major C[m, n] = A[m, k] B[k, n] is column-major C^T = B^T A^T: cuBLAS is called with
the operands swapped and (m, n) exchanged, so no transposes are made.
"""

from __future__ import annotations

import ctypes
import functools
import os

from xlapy.backends.gpu.runtime.program import Gemm
from xlapy.errors import XlapyError

CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_OP_N = 0
CUBLAS_GEMM_DEFAULT = -1
DATA_TYPES = {"f32": CUDA_R_32F, "f16": CUDA_R_16F, "bf16": CUDA_R_16BF}
ITEM_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    # CUDA 12's or 13's cuBLAS (the v2 API xlapy calls is the same in both): pip's wheels
    # (nvidia-cublas-cu12: nvidia/cublas/lib; CUDA 13's nvidia-cublas: nvidia/cu13/lib)
    # first, then the system's
    sonames = ["libcublas.so.12", "libcublas.so.13"]
    names = []
    for pkg_name in ("nvidia.cublas", "nvidia.cu13"):
        try:
            pkg = __import__(pkg_name, fromlist=["__path__"])
        except ImportError:
            continue
        for d in list(pkg.__path__):
            names += [os.path.join(d, "lib", so) for so in sonames]
    names += sonames + ["libcublas.so"]
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    raise XlapyError("cuBLAS (libcublas.so.12 or .13) was not found: pip install 'xlapy[gpu]' "
                     "(nvidia-cublas-cu12)")


def strided_gemm_args(t: Gemm) -> dict:
    """The column-major problem cuBLAS solves for the row-major dot (tested on the CPU)."""
    return {"m": t.n, "n": t.m, "k": t.k,
            "a_ld": t.n, "a_stride": t.k * t.n,     # B, k x n row-major = n x k col-major
            "b_ld": t.k, "b_stride": t.m * t.k,     # A
            "c_ld": t.n, "c_stride": t.m * t.n}


def _ok(status: int, what: str) -> None:
    if status != 0:
        raise XlapyError(f"cuBLAS {what} failed with status {status}")


class Handle:
    def __init__(self, stream: int):
        lib = library()
        self.lib = lib
        self.handle = ctypes.c_void_p()
        _ok(lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        _ok(lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(stream)), "cublasSetStream")

    def gemm(self, t: Gemm, out: int, lhs: int, rhs: int) -> None:
        if t.dtype not in DATA_TYPES:
            raise XlapyError(f"cuBLAS dots take f32, f16 or bf16, not {t.dtype}")
        a = strided_gemm_args(t)
        dt = DATA_TYPES[t.dtype]
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        f = self.lib.cublasGemmStridedBatchedEx
        _ok(f(self.handle, CUBLAS_OP_N, CUBLAS_OP_N, a["m"], a["n"], a["k"],
              ctypes.byref(alpha),
              ctypes.c_void_p(rhs), dt, a["a_ld"], ctypes.c_longlong(a["a_stride"]),
              ctypes.c_void_p(lhs), dt, a["b_ld"], ctypes.c_longlong(a["b_stride"]),
              ctypes.byref(beta),
              ctypes.c_void_p(out), dt, a["c_ld"], ctypes.c_longlong(a["c_stride"]),
              t.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx")
