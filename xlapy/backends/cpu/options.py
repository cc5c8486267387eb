"""The cpu backend's settings from the environment, read where they are used.

  XLAPY_NUM_THREADS     threads for large kernels (default: all cores)
  XLAPY_GEMM            auto | xlapy | blas: which gemm runs f32/f64 dots (dot_plan.py)
  XLAPY_CACHE_DIR       where compiled code is cached (default ~/.cache/xlapy)
  XLAPY_DISABLE_CACHE   1: neither read nor write the disk cache

This module is the bottom of the cpu package: it imports nothing else from it.
"""

from __future__ import annotations

import hashlib
import os
import pathlib

from xlapy.errors import XlapyError


def default_num_threads() -> int:
    value = os.environ.get("XLAPY_NUM_THREADS")
    if value:
        try:
            n = int(value)
        except ValueError:
            raise XlapyError(f"XLAPY_NUM_THREADS must be a positive integer, "
                             f"got '{value}'") from None
        return max(n, 1)
    n = os.cpu_count() or 1
    # processes of one MPI job on this machine share its cores (mpirun sets these)
    local = os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") or os.environ.get("MPI_LOCALNRANKS")
    if local and local.isdigit() and int(local) > 1:
        n = max(1, n // int(local))
    return n


def gemm_choice() -> str:
    """XLAPY_GEMM: auto (the default: xlapy's own gemm for products of at least
    dot_plan.OWN_GEMM_MIN_FLOPS where xlapy's thread pool runs, BLAS for smaller ones, whose
    packing overhead OpenBLAS's small-matrix paths avoid), xlapy (the own gemm for every
    f32/f64 gemm) or blas (NumPy's OpenBLAS for all)."""
    choice = os.environ.get("XLAPY_GEMM", "auto").strip().lower()
    if choice not in ("auto", "xlapy", "blas"):
        raise XlapyError(f"XLAPY_GEMM must be 'auto', 'xlapy' or 'blas', got '{choice}'")
    return choice


def cache_dir() -> pathlib.Path | None:
    """The disk cache's directory, or None when XLAPY_DISABLE_CACHE is set."""
    if os.environ.get("XLAPY_DISABLE_CACHE", "") not in ("", "0"):
        return None
    root = os.environ.get("XLAPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xlapy")
    return pathlib.Path(root)


_SOURCE_HASH: list = []
# the packages whose code turns an HLO module into machine code (the layers at and below
# the backends, which import nothing above them: tests/test_layering.py), and the top-level
# modules; the frontends (frontend, numpy, lax, compat, tools) only build the HLO module,
# whose text is part of every key
CODEGEN_PACKAGES = ("hlo", "analysis", "passes", "backends")


def source_fingerprint() -> str:
    """A hash of the xlapy source files that generate code: the disk cache never serves
    code compiled by another version of the compiler (a changed pass or emitter changes
    every key). Computed once per process, on the first compile (about 3 ms)."""
    if not _SOURCE_HASH:
        root = pathlib.Path(__file__).resolve().parents[2]
        h = hashlib.sha256()
        top = sorted(f for f in os.listdir(root) if f.endswith(".py"))
        paths = [os.path.join(root, f) for f in top]
        for pkg in CODEGEN_PACKAGES:
            for dirpath, dirnames, files in os.walk(os.path.join(root, pkg)):
                dirnames.sort()
                paths.extend(os.path.join(dirpath, f) for f in sorted(files)
                             if f.endswith(".py"))
        for path in paths:
            h.update(os.path.relpath(path, root).encode())
            try:
                with open(path, "rb") as f:
                    h.update(f.read())
            except OSError:
                pass
        _SOURCE_HASH.append(h.hexdigest()[:16])
    return _SOURCE_HASH[0]
