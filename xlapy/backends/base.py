"""The one interface every backend implements: Platform, Compiler, Executable, TransferManager.

  platform = get_platform("cpu")                 # registry by name
  exe = platform.compiler.compile(module)        # Module -> Executable
  out = exe.run(*arrays)                         # NumPy in, NumPy out

Results mirror the entry root's shape: an array for an array root, a (nested) tuple of arrays
for a tuple root. `Executable.run_leaves` returns the flattened list instead.

Argument checking is shared here so every backend rejects bad inputs the same way: wrong
count, shape or dtype raise InputError naming the parameter.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Sequence

import numpy as np

from xlapy.errors import InputError, XlapyError
from xlapy.hlo.ir import Module
from xlapy.hlo.shapes import Shape


class TransferManager:
    """Moves arrays between host and the platform's memory. Host platforms keep NumPy
    arrays; they only make them contiguous and of the right dtype."""

    def to_device(self, array: np.ndarray, shape: Shape):
        return array if array.flags.c_contiguous else np.array(array, order="C")

    def to_host(self, buffer) -> np.ndarray:
        return buffer


class Executable:
    """A compiled module. Subclasses implement `_execute(list_of_arrays) -> tree`."""

    def __init__(self, module: Module, platform_name: str):
        self.module = module
        self.platform_name = platform_name
        entry = module.entry
        self.parameter_shapes: list[Shape] = [p.shape for p in entry.parameters]
        self.parameter_names: list[str] = [p.name for p in entry.parameters]
        self.result_shape: Shape = entry.root.shape

    def check_arguments(self, args: Sequence) -> list[np.ndarray]:
        """Convert and validate arguments against the entry parameters."""
        n = len(self.parameter_shapes)
        if len(args) != n:
            raise InputError(f"{self.module.name} takes {n} argument(s) "
                             f"({', '.join(self.parameter_names)}), got {len(args)}")
        out = []
        for i, (a, shape) in enumerate(zip(args, self.parameter_shapes)):
            out.append(check_argument(a, shape, f"argument {i} ({self.parameter_names[i]})"))
        return out

    def run(self, *args):
        return self._execute(self.check_arguments(args))

    __call__ = run

    def run_leaves(self, *args) -> list[np.ndarray]:
        return flatten(self.run(*args))

    def _execute(self, args: list):
        raise NotImplementedError


def check_argument(a, shape: Shape, what: str):
    if shape.is_tuple:
        if not isinstance(a, (tuple, list)) or len(a) != len(shape.tuple_shapes):
            raise InputError(f"{what}: expected a tuple of {len(shape.tuple_shapes)} arrays "
                             f"for shape {shape}")
        return tuple(check_argument(x, s, f"{what}[{j}]")
                     for j, (x, s) in enumerate(zip(a, shape.tuple_shapes)))
    arr = np.asarray(a)
    if arr.dtype != shape.dtype:
        raise InputError(f"{what}: expected dtype {shape.element_type.name} ({shape.dtype}), "
                         f"got {arr.dtype}")
    if arr.shape != shape.dims:
        raise InputError(f"{what}: expected shape {list(shape.dims)}, got {list(arr.shape)}")
    return arr if arr.flags.c_contiguous else np.array(arr, order="C")  # keeps 0-d arrays 0-d


def flatten(tree) -> list[np.ndarray]:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in flatten(t)]
    return [tree]


# ---- caches that build each value once ---------------------------------------------------
_once_lock = threading.Lock()  # guards every BuildOnce's tables (held only to look them up)


def _new_once_lock_after_fork() -> None:
    global _once_lock  # another thread may have held it at fork time
    _once_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_once_lock_after_fork)


class _Building:
    __slots__ = ("done", "thread", "pid")

    def __init__(self):
        self.done = threading.Event()
        self.thread = threading.get_ident()
        self.pid = os.getpid()


class BuildOnce:
    """A cache whose values are built once per key, however many threads ask for one at the
    same time: the first builds it, the others wait for it (a compiler's in-memory cache,
    jit's traces). A build that fails is not remembered: a waiting thread then builds itself
    (and most likely meets the same error). A build that asks for its own key again (a
    function compiling itself) raises XlapyError instead of waiting for itself. A build under
    way in the parent of a forked process is not waited for: the thread doing it does not
    exist in the child."""

    def __init__(self):
        self._values: dict = {}
        self._building: dict = {}
        self._generation = 0

    def get(self, key, default=None):
        return self._values.get(key, default)

    def __len__(self) -> int:
        return len(self._values)

    def put(self, key, value) -> None:
        with _once_lock:
            self._values[key] = value

    def clear(self) -> None:
        with _once_lock:
            self._values.clear()
            self._generation += 1  # a build under way now is not kept

    def get_or_build(self, key, build: Callable[[], object], what: str = "this value"):
        """(value, built): the cached value, or build()'s when this thread built it."""
        while True:
            with _once_lock:
                value = self._values.get(key)
                if value is not None:
                    return value, False
                b = self._building.get(key)
                if b is None or b.pid != os.getpid():
                    b = self._building[key] = _Building()
                    generation = self._generation
                    break
            if b.thread == threading.get_ident():
                raise XlapyError(f"building {what} needs {what} itself: a function that calls "
                                 "itself with the same arguments while being traced or "
                                 "compiled never finishes")
            b.done.wait()
        try:
            value = build()
            with _once_lock:
                if generation == self._generation:
                    self._values[key] = value
            return value, True
        finally:
            with _once_lock:
                if self._building.get(key) is b:
                    del self._building[key]
            b.done.set()


class Compiler:
    def compile(self, module: Module) -> Executable:
        raise NotImplementedError

    def clear_cache(self) -> None:
        """Forget compiled executables kept in memory (a backend without a cache: nothing)."""


class Platform:
    name: str = "?"
    compiler: Compiler
    transfer_manager: TransferManager = TransferManager()


_FACTORIES: dict[str, Callable[[], Platform]] = {}
_INSTANCES: dict[str, Platform] = {}


def register_platform(name: str, factory: Callable[[], Platform]) -> None:
    _FACTORIES[name] = factory


def _builtin(module: str, cls: str):
    def factory():
        import importlib
        return getattr(importlib.import_module(module), cls)()
    return factory


_BUILTIN = {"cpu": ("xlapy.backends.cpu", "CpuPlatform"),
            "interpreter": ("xlapy.backends.interpreter", "InterpreterPlatform")}


def _load_builtin_platforms() -> None:
    # Built-in backends are imported when first asked for (the cpu backend pulls in LLVM).
    # A broken cpu backend then raises: it is never quietly replaced by the interpreter.
    for name, (module, cls) in _BUILTIN.items():
        _FACTORIES.setdefault(name, _builtin(module, cls))


def get_platform(name: str | None = None) -> Platform:
    """The platform called `name` (default: XLAPY_PLATFORM, else cpu)."""
    _load_builtin_platforms()
    if name is None:
        name = os.environ.get("XLAPY_PLATFORM") or "cpu"
    if name not in _FACTORIES:
        raise XlapyError(f"unknown backend '{name}'; available: {', '.join(sorted(_FACTORIES))}")
    if name not in _INSTANCES:
        _INSTANCES[name] = _FACTORIES[name]()
    return _INSTANCES[name]


def clear_caches() -> None:
    """Empty the in-memory compilation cache of every platform created so far."""
    for p in _INSTANCES.values():
        p.compiler.clear_cache()


def list_platforms() -> list[str]:
    _load_builtin_platforms()
    return sorted(_FACTORIES)
