"""The disk cache of compiled programs (~/.cache/xlapy, or XLAPY_CACHE_DIR;
XLAPY_DISABLE_CACHE=1 turns it off): the object code and what the executable needs to run
it, keyed by the compiler's fingerprint of the module, options and target, so another
process that compiles the same module skips LLVM entirely."""

from __future__ import annotations

import os
import pickle

from xlapy.backends.cpu.executable import ExecutableSpec
from xlapy.backends.cpu.options import cache_dir


def load(key: str) -> ExecutableSpec | None:
    root = cache_dir()
    if root is None:
        return None
    path = root / f"{key}.xlapy"
    try:
        with open(path, "rb") as f:
            spec = pickle.load(f)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError):
        return None
    return spec if isinstance(spec, ExecutableSpec) else None


def store(key: str, spec: ExecutableSpec) -> None:
    root = cache_dir()
    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f"{key}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(spec, f)
        os.replace(tmp, root / f"{key}.xlapy")
    except OSError:
        pass  # a read-only or full cache directory only costs a recompile
