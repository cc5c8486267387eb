"""The cpu backend's settings from the environment, read where they are used.

  XLAPY_NUM_THREADS     threads for large kernels (default: every core this process may
                        run on: usable_cores)
  XLAPY_GEMM            auto | xlapy | blas: which gemm runs f32/f64 dots (dot_plan.py)
  XLAPY_CACHE_DIR       where compiled code is cached (default ~/.cache/xlapy)
  XLAPY_RUNTIME_CACHE_DIR  where the runtime's own objects are cached (default: next to
                        xlapy's code, see runtime_cache_dirs)
  XLAPY_DISABLE_CACHE   1: neither read nor write the disk caches

This module is the bottom of the cpu package: it imports nothing else from it.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile
import time

from xlapy.errors import XlapyError


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity (taskset, a container's cpuset,
    a job scheduler's binding), not every core of the machine. A pool with more threads
    than that has workers that the OS deschedules while they hold a unit of a job, which
    the caller then waits for (as beside a busy neighbour); XLA's default thread count
    follows the affinity the same way."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):   # (no sched_getaffinity: macOS, Windows)
        return os.cpu_count() or 1


def default_num_threads() -> int:
    value = os.environ.get("XLAPY_NUM_THREADS")
    if value:
        try:
            n = int(value)
        except ValueError:
            raise XlapyError(f"XLAPY_NUM_THREADS must be a positive integer, "
                             f"got '{value}'") from None
        return max(n, 1)
    n = usable_cores()
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


def runtime_cache_dirs() -> list[pathlib.Path]:
    """Where what depends on the installation alone (not on the programs compiled) is
    cached, in the order to look: the runtime's own objects (codegen.cached_object: the
    trampoline, the thread pool, the launcher, the gemm kernels) and the memo of the source
    fingerprint. First the installation's own directory: __pycache__ next to this file,
    where Python keeps the installation's bytecode (numba keeps its compiled functions in
    __pycache__ too), or XLAPY_RUNTIME_CACHE_DIR; it lives and goes with the installation,
    so a new or emptied program cache (cache_dir) does not build the runtime again. Then
    cache_dir(), written where the installation is read-only. Empty with
    XLAPY_DISABLE_CACHE. Writers try the directories in order (_write_memo,
    codegen.cached_object)."""
    program_cache = cache_dir()
    if program_cache is None:
        return []
    own = os.environ.get("XLAPY_RUNTIME_CACHE_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    return [pathlib.Path(own), program_cache]


_SOURCE_HASH: list = []
# the packages whose code turns an HLO module into machine code (the layers at and below
# the backends, which import nothing above them: tests/test_layering.py), and the top-level
# modules; the frontends (frontend, numpy, lax, compat, tools) only build the HLO module,
# whose text is part of every key
CODEGEN_PACKAGES = ("hlo", "analysis", "passes", "backends")
# a file changed less than this many seconds before its contents are hashed keeps the memo
# from being written (see source_fingerprint)
SETTLE_SECONDS = 2.0


def source_fingerprint() -> str:
    """A hash of the contents of the xlapy source files that generate code: the disk cache
    never serves code compiled by another version of the compiler (a changed pass or
    emitter changes every key). Computed once per process, on the first compile.

    Reading and hashing the sources (about 1.4 MB) took 5.5 ms CPU, 9 ms wall: half of a
    warm-cache first compile. The contents' hash is therefore memoized in the disk cache
    under a key made of each file's path, size, inode, mtime and ctime (one stat each,
    about 1.5 ms for all); a process whose files stat the same reads the hash from the memo.
    Why that is sound: any write to a file, and any rename or replacement of it, updates its
    ctime, which (unlike the mtime) no program can set back, so edited sources never stat as
    they did when they were hashed; except within one tick of the file system's clock (a
    few ms on Linux): a file written in the same tick as the memo's hashing could change
    unseen. As git does for its index ("racy git"), no memo is written while any file's
    ctime or mtime is within SETTLE_SECONDS of the clock; its contents are hashed again then.
    The memo is kept with the runtime's objects (runtime_cache_dirs) and is as trusted as
    the cache entries it keys (cache_file.py): those directories must be private."""
    if not _SOURCE_HASH:
        _SOURCE_HASH.append(_memoized_source_hash())
    return _SOURCE_HASH[0]


def _source_paths(root: str) -> list[str]:
    """The .py files of root and of its CODEGEN_PACKAGES, in the order os.walk (top-down,
    names sorted, symbolic links to directories not followed) lists them. Walked with
    os.scandir, without entering __pycache__ directories (which hold no sources, but the
    bytecode and the runtime's cached objects: half the directories): about half the time
    of os.walk, which every process's first compile spends (the cache key)."""
    paths = [os.path.join(root, f) for f in sorted(os.listdir(root)) if f.endswith(".py")]

    def walk(top: str) -> None:
        try:
            with os.scandir(top) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        subdirs = []
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if not is_dir:
                if e.name.endswith(".py"):
                    paths.append(e.path)
            elif e.name != "__pycache__" and not e.is_symlink():
                subdirs.append(e.path)
        for d in subdirs:
            walk(d)

    for pkg in CODEGEN_PACKAGES:
        walk(os.path.join(root, pkg))
    return paths


def _hash_contents(root: str, paths: list[str]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(os.path.relpath(path, root).encode())
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            pass
    return h.hexdigest()[:16]


def _memoized_source_hash(root: str | None = None) -> str:
    root = root or str(pathlib.Path(__file__).resolve().parents[2])
    paths = _source_paths(root)
    dirs = runtime_cache_dirs()
    if not dirs:
        return _hash_contents(root, paths)
    h = hashlib.sha256(f"{root}\0".encode())
    newest = 0
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return _hash_contents(root, paths)  # a file went away while listed: no memo
        h.update(f"{path}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\n"
                 .encode())
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    name = f"sources-{h.hexdigest()[:32]}"
    for d in dirs:
        try:
            found = (d / name).read_text()
            if len(found) == 16 and all(c in "0123456789abcdef" for c in found):
                return found
        except (OSError, UnicodeDecodeError):
            pass
    value = _hash_contents(root, paths)
    if newest < (time.time() - SETTLE_SECONDS) * 1e9:
        _write_memo(dirs, name, value)
    return value


def _write_memo(dirs: list[pathlib.Path], name: str, value: str) -> None:
    """Into the first directory that takes it, atomically (a reader sees the whole memo or
    none); where none can be written, the sources are only hashed again next time."""
    for d in dirs:
        try:
            d.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=d, prefix=name + ".", suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(value)
                os.replace(tmp, d / name)
            except BaseException:
                os.unlink(tmp)
                raise
            return
        except OSError:
            continue
