"""`jit`: trace a Python function to HLO, compile it for a backend, cache per signature.

    f = xlapy.jit(fn, static_argnums=(1,), backend="cpu")
    f(x, 3)                      # traced, lowered, compiled, run; cached
    f.lower(x, 3).as_text()      # the HLO module before optimization
                                 # (as_text(dialect="stablehlo"): as StableHLO, as JAX prints)
    f.lower(x, 3).compile()      # Compiled: .as_text() after optimization, .cost_analysis(),
                                 # .memory_analysis(), callable

Cache key: the pytree structure of the dynamic arguments, each leaf's shape and dtype, the
static arguments' values (they must be hashable) and the backend. XLAPY_LOG_COMPILES=1 logs
every compilation with the reason the cache missed (which argument changed, and how).

donate_argnums=(0, ...): the caller gives those arguments' memory to the call. Each
donated array is paired with a result of the same shape and dtype, and on the cpu backend
that result is computed straight into the donated array (no new allocation, no copy: a
training step `w = step(w, x)` updates w where it lies). After the call a donated array
holds that result (the returned array is the same object), so do not use its old value.
A donation the compiled program cannot honour (the input is still read after the output
is written) is dropped with an XlapyWarning; a read-only donated array is copied first.

Called with traced values (inside another jit, or under grad), a jitted function simply
traces through `fn`: the outer transformation sees its primitives.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import time
import weakref
from dataclasses import dataclass

import numpy as np

from xlapy.frontend.array import ARRAY_TYPES, ArrayImpl, as_result, is_device_array
from xlapy.backends.base import BuildOnce
from xlapy.errors import XlapyError
from xlapy.gc_control import collector_paused
from xlapy.frontend import pytree
from xlapy import config as _config
from xlapy.config import on_change, overrides_active, x64_enabled
from xlapy.frontend.core import ShapedArray, Tracer, check_finite, dtype_name
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.graph import make_graph
from xlapy.frontend.lowering import lower_to_module
from xlapy.frontend.primitives.basic import is_float

log = logging.getLogger("xlapy.jit")


def _log_compiles() -> bool:
    return os.environ.get("XLAPY_LOG_COMPILES", "") not in ("", "0")


@dataclass
class _Entry:
    executable: object
    out_tree: object
    extra_consts: list
    module: object
    lowered: "Lowered"

    def __post_init__(self):
        # a backend whose results stay on the device (gpu) calls run_device
        self.run = getattr(self.executable, "run_device", None) or self.executable.run

    @property
    def single_leaf(self) -> bool:
        return self.out_tree == pytree.LEAF


class Lowered:
    """A traced and lowered function: the HLO module before optimization."""

    def __init__(self, module, out_tree, extra_consts, backend, fn_name):
        self.module = module
        self.out_tree = out_tree
        self.extra_consts = extra_consts
        self.backend = backend
        self.fn_name = fn_name

    def as_text(self, dialect: str = "hlo", debug_info: bool = False) -> str:
        """The module as HLO text (the default) or, with dialect="stablehlo", as StableHLO
        (MLIR) text as jax.jit(f).lower(...).as_text() gives; debug_info adds loc(...)."""
        if dialect == "hlo":
            return self.module.to_string()
        if dialect == "stablehlo":
            from xlapy.hlo.stablehlo import to_stablehlo
            return to_stablehlo(self.module, print_locations=debug_info)
        from xlapy.errors import XlapyError
        raise XlapyError(f"unknown dialect {dialect!r}: use 'hlo' or 'stablehlo'")

    def compile(self) -> "Compiled":
        from xlapy.backends.base import get_platform
        platform = get_platform(self.backend)
        exe = platform.compiler.compile(self.module)
        return Compiled(exe, self)


class Compiled:
    """A compiled function: call it with the same kind of arguments as the original."""

    def __init__(self, executable, lowered: Lowered):
        self.executable = executable
        self.lowered = lowered

    def as_text(self) -> str:
        optimized = getattr(self.executable, "optimized_module", None)
        return (optimized or self.executable.module).to_string()

    def cost_analysis(self) -> dict:
        from xlapy.analysis.cost_model import module_cost
        m = getattr(self.executable, "optimized_module", None) or self.executable.module
        return module_cost(m)

    def memory_analysis(self) -> dict:
        fn = getattr(self.executable, "memory_analysis", None)
        if fn is not None:
            return fn()
        m = self.executable.module
        args = sum(p.shape.byte_size for p in m.entry.parameters)
        return {"argument_size_in_bytes": args,
                "output_size_in_bytes": m.entry.root.shape.byte_size,
                "temp_size_in_bytes": 0}

    def __call__(self, *args, **kwargs):
        flat, _ = pytree.flatten((args, kwargs))
        arrays = [x if is_device_array(x) else canonicalize_value(np.asarray(x))
                  for x in flat] + self.lowered.extra_consts
        run = getattr(self.executable, "run_device", None) or self.executable.run
        out = run(*arrays)
        one_leaf = pytree.num_leaves(self.lowered.out_tree) == 1
        leaves = list(out) if isinstance(out, tuple) and not one_leaf else [out]
        return pytree.unflatten(self.lowered.out_tree, leaves)


class JitFunction:
    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None):
        if not callable(fun):
            raise XlapyError(f"jit expects a function, got {type(fun).__name__}")
        self.fun = fun
        self.static_argnums = _as_tuple(static_argnums)
        self.static_argnames = _as_tuple(static_argnames)
        self.donate_argnums = _as_tuple(donate_argnums)
        self.backend = backend
        self._cache = BuildOnce()
        # fast path for positional NumPy arrays: (shape, dtype) per argument -> entry
        self._fast: dict = {}
        self._fast_ok = not self.static_argnums and not self.static_argnames
        self._signatures: list = []
        _LIVE.add(self)
        self.__name__ = getattr(fun, "__name__", "fn")
        # (updated=(): copying fun.__dict__ would overwrite this object's own attributes when
        # fun is a JitFunction, wraps one, or is a callable object such as custom_vjp)
        functools.update_wrapper(self, fun, updated=())
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        self._resolve_static()

    def _resolve_static(self):
        """As in JAX, a parameter named in static_argnames is static when passed by position
        too, and one numbered in static_argnums is static when passed by keyword."""
        if self._sig is None:
            return
        positional = [p.name for p in self._sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        by_keyword = {p.name for p in self._sig.parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        nums, names = list(self.static_argnums), list(self.static_argnames)
        for i, name in enumerate(positional):
            if name in names and i not in nums:
                nums.append(i)
            if i in nums and name in by_keyword and name not in names:
                names.append(name)
        self.static_argnums, self.static_argnames = tuple(nums), tuple(names)

    # ---- argument handling -----------------------------------------------------------------
    def _split(self, args, kwargs):
        n = len(args)
        static_nums = {i if i >= 0 else n + i for i in self.static_argnums}
        for i in sorted(static_nums):
            if i >= n:
                if self._param_name(i) in kwargs or self._has_default(i):
                    static_nums.discard(i)  # passed by keyword (static by name) or defaulted
                    continue
                raise XlapyError(f"jit({self.__name__}): static_argnums contains {i} but only "
                                 f"{n} positional arguments were given")
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        static = tuple((i, args[i]) for i in sorted(static_nums))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        static += tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        try:
            hash(static)
        except TypeError:
            raise XlapyError(f"jit({self.__name__}): static arguments must be hashable, got "
                             f"{[type(v).__name__ for _, v in static]}") from None
        return dyn_args, dyn_kwargs, static, static_nums

    def _param_name(self, i: int) -> str | None:
        """The name of positional parameter i (`args[k]` inside a *args), or None."""
        if self._sig is None:
            return None
        params = list(self._sig.parameters.values())
        for j, p in enumerate(params):
            if p.kind == p.VAR_POSITIONAL:
                return f"{p.name}[{i - j}]"
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                return None
            if j == i:
                return p.name
        return None

    def _has_default(self, i: int) -> bool:
        params = list(self._sig.parameters.values()) if self._sig else []
        return i < len(params) and params[i].default is not params[i].empty

    def _arg_names(self, args, kwargs, static_nums) -> list[str]:
        """A name for every dynamic leaf, in flattening order: "argument 'x'", or for a
        leaf inside a pytree "argument 'params' (params['w'][0])". Tracer errors and the
        compile log use them to say which argument a value comes from."""
        names = []
        for i, a in enumerate(args):
            if i in static_nums:
                continue
            names.extend(_leaf_names(self._param_name(i) or f"args[{i}]", a))
        for k in sorted(kwargs):
            if k in self.static_argnames:
                continue
            names.extend(_leaf_names(k, kwargs[k]))
        return names

    def _rebuild(self, static, dyn_args, dyn_kwargs):
        args = list(dyn_args)
        kwargs = dict(dyn_kwargs)
        for k, v in static:
            if isinstance(k, int):
                args.insert(k, v)
            else:
                kwargs[k] = v
        return args, kwargs

    # ---- tracing and compiling -------------------------------------------------------------
    def lower(self, *args, **kwargs) -> Lowered:
        dyn_args, dyn_kwargs, static, static_nums = self._split(args, kwargs)
        flat, in_tree = pytree.flatten((dyn_args, dyn_kwargs))
        arrays = [_as_array(x, self.__name__) for x in flat]
        return self._lower(arrays, in_tree, static, self._arg_names(args, kwargs, static_nums),
                           self._donated_leaves(args, static_nums), _weak_flags(flat))

    def _donated_leaves(self, args, static_nums) -> list[int]:
        """Flat leaf indices of the arguments named in donate_argnums."""
        if not self.donate_argnums:
            return []
        n = len(args)
        donate = {i if i >= 0 else n + i for i in self.donate_argnums}
        bad = donate & set(static_nums)
        if bad:
            raise XlapyError(f"jit({self.__name__}): argument {min(bad)} is both static and "
                             "donated")
        out, leaf = [], 0
        for i, a in enumerate(args):
            if i in static_nums:
                continue
            k = len(pytree.flatten(a)[0])
            if i in donate:
                out.extend(range(leaf, leaf + k))
            leaf += k
        return out

    def _lower(self, arrays, in_tree, static, names, donated=(), weak=None) -> Lowered:
        weak = weak or (False,) * len(arrays)
        avals = [ShapedArray(a.shape, a.dtype, w) for a, w in zip(arrays, weak)]

        def traced(*dyn_args, **dyn_kwargs):
            a, kw = self._rebuild(static, dyn_args, dyn_kwargs)
            return self.fun(*a, **kw)

        try:
            graph, consts, out_tree = make_graph(traced, avals, names, in_tree=in_tree)
            module, extra = lower_to_module(graph, consts, self.__name__)
        except RecursionError:
            raise XlapyError(
                f"jit({self.__name__}): tracing went deeper than Python's recursion limit "
                f"({sys.getrecursionlimit()} frames): {self.__name__} calls itself without "
                "end (a jitted function calling itself is traced again at every call, so "
                "the recursion needs a base case decided by static arguments), or the "
                "program is nested too deeply") from None
        if donated:
            _alias_donated(module, donated)
        extra_consts = [np.asarray(consts[i]) for i in extra]
        return Lowered(module, out_tree, extra_consts, self.backend, self.__name__)

    def __call__(self, *args, **kwargs):
        if (_config._nojit or _config._nojit_blocks) and _config.jit_disabled():
            return self.fun(*args, **kwargs)  # disable_jit: the Python function, eagerly
        if self._fast_ok and not kwargs and not _config._overrides and not _config._debug_any:
            for a in args:
                if type(a) not in ARRAY_TYPES:
                    break
            else:
                entry = self._fast.get(tuple([(a.shape, a.dtype) for a in args]))
                if entry is not None:
                    out = entry.run(*args, *entry.extra_consts)
                    if entry.single_leaf:
                        return out.view(ArrayImpl) if type(out) is np.ndarray else out
                    return pytree.unflatten(entry.out_tree, [as_result(o) for o in out])
        return self._call_slow(args, kwargs)

    def _call_slow(self, args, kwargs):
        dyn_args, dyn_kwargs, static, static_nums = self._split(args, kwargs)
        flat, in_tree = pytree.flatten((dyn_args, dyn_kwargs))
        if any(isinstance(x, Tracer) for x in flat) or _inside_vmap():
            # inside another trace: trace through (inside vmap also with constant arguments,
            # so collectives over the vmap's axis name work in fun)
            return self.fun(*args, **kwargs)
        arrays = [_as_array(x, self.__name__) for x in flat]
        weak = _weak_flags(flat)
        key = (in_tree, tuple((a.shape, a.dtype) for a in arrays), static, self.backend, weak,
               x64_enabled())
        entry = self._cache.get(key)
        if entry is None:  # (threads calling with one new signature at once trace it once)
            entry, _ = self._cache.get_or_build(key, lambda: self._compile(
                key, arrays, in_tree, static, self._arg_names(args, kwargs, static_nums),
                self._donated_leaves(args, static_nums), weak), f"jit({self.__name__})")
        # the fast path skips canonicalization: only arguments it would not change (it is
        # emptied when the x64 option changes, and neither read nor filled while an
        # enable_x64 block is open in any thread)
        if (self._fast_ok and not kwargs and not overrides_active()
                and all(type(a) in ARRAY_TYPES for a in args)
                and all(a is b for a, b in zip(arrays, args))
                and in_tree == pytree.flatten((tuple(args), {}))[1]):
            self._fast[tuple((a.shape, a.dtype) for a in args)] = entry
        out = entry.run(*arrays, *entry.extra_consts)
        n = pytree.num_leaves(entry.out_tree)
        leaves = list(out) if n != 1 else [out]
        if _config._debug_any:
            check_finite(leaves, f"jit({self.__name__})")
        return pytree.unflatten(entry.out_tree, [as_result(o) for o in leaves])

    def _compile(self, key, arrays, in_tree, static, names, donated=(), weak=None) -> _Entry:
        t0 = time.perf_counter()
        with collector_paused():  # tracing and compiling allocate in bursts (gc_control)
            lowered = self._lower(arrays, in_tree, static, names, donated, weak)
            compiled = lowered.compile()
        entry = _Entry(compiled.executable, lowered.out_tree, lowered.extra_consts,
                       lowered.module, lowered)
        if _log_compiles():
            log.warning("compiling %s for %s in %.1f ms: %s", self.__name__,
                        ", ".join(f"{dtype_name(a.dtype)}{list(a.shape)}" for a in arrays),
                        1e3 * (time.perf_counter() - t0), self._miss_reason(key, names))
        self._signatures.append((key, names))
        return entry

    def _miss_reason(self, key, names) -> str:
        if not self._signatures:
            return "first call"
        prev, _ = self._signatures[-1]
        tree, sig, static, backend, weak, x64 = key
        ptree, psig, pstatic, pbackend, pweak, px64 = prev
        if x64 != px64:
            return f"jax_enable_x64 changed from {px64} to {x64}"
        if tree != ptree:
            return "the argument structure (pytree) changed"
        if static != pstatic:
            return f"static arguments changed from {pstatic} to {static}"
        if backend != pbackend:
            return f"backend changed from {pbackend} to {backend}"
        for name, (s, d), (ps, pd) in zip(names, sig, psig):
            if d != pd:
                return f"{name} changed dtype from {dtype_name(pd)} to {dtype_name(d)}"
            if s != ps:
                return f"{name} changed shape from {list(ps)} to {list(s)}"
        if weak != pweak:
            return "a Python scalar argument became an array, or the reverse"
        return "a new signature"

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()
        self._signatures.clear()


def _inside_vmap() -> bool:
    from xlapy.frontend.core import active_traces
    return any(getattr(t, "frame", None) is not None for t in active_traces())


def _alias_donated(module, donated: list[int]) -> None:
    """As JAX does: each donated parameter is paired with the first output of the same
    shape and dtype not yet taken (recorded as the module's input_output_alias)."""
    from xlapy.hlo.aliasing import Alias, set_module_aliases
    entry = module.entry
    root = entry.root.shape
    outs = [((k,) if root.is_tuple else (), s) for k, s in
            enumerate(root.tuple_shapes if root.is_tuple else [root])]
    taken, aliases = set(), []
    for p in donated:
        ps = entry.parameters[p].shape
        for idx, s in outs:
            if idx not in taken and not s.is_tuple and s.dims == ps.dims \
                    and s.element_type == ps.element_type:
                taken.add(idx)
                aliases.append(Alias(idx, p, ()))
                break
    set_module_aliases(module, aliases)


def _leaf_names(base: str, value) -> list[str]:
    """"argument 'x'" for a leaf argument, "argument 'p' (p['w'][0])" for a leaf inside a
    pytree argument, in flattening order."""
    pairs, _ = pytree.flatten_with_path(value)
    return [f"argument '{base}'" if not path else
            f"argument '{base}' ({base}{pytree.keystr(path)})" for path, _ in pairs]


def _weak_flags(flat) -> tuple:
    """Which leaves are Python ints or floats (weakly typed under jit, as in JAX)."""
    return tuple(type(x) in (int, float) for x in flat)


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _as_array(x, fn_name: str) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return canonicalize_value(x)
    if is_device_array(x):  # (on its device: passed as it is; its type takes the fast path)
        ARRAY_TYPES.add(type(x))
        return x
    if type(x) is int or type(x) is float or type(x) is complex:
        return np.asarray(canonicalize_value(x))  # OverflowError for ints beyond int32
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or (arr.dtype.kind not in "biufc" and not is_float(arr.dtype)):
        raise XlapyError(f"jit({fn_name}): argument of type {type(x).__name__} is not an array; "
                         "mark it static with static_argnums/static_argnames")
    return canonicalize_value(arr)



_LIVE: weakref.WeakSet = weakref.WeakSet()


def _drop_fast_paths() -> None:
    for f in list(_LIVE):
        f._fast = {}


on_change(_drop_fast_paths)


def clear_caches() -> None:
    """Forget every compiled program held in memory (as jax.clear_caches): each jitted
    function's traces and executables and each backend's compilation cache. The next call
    traces and compiles again (or loads from the disk cache, which this leaves alone). The cpu
    backend's recycled output buffers are memory, not programs, and stay (at most 256 MB;
    `xlapy.backends.cpu.runtime.output_pool.clear()` lets them go)."""
    from xlapy.backends.base import clear_caches as clear_backends
    for f in list(_LIVE):
        f.clear_cache()
    clear_backends()


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None):
    """Compile `fun` with xlapy. Usable as @jit or @jit(static_argnums=...)."""
    if fun is None:
        return lambda f: JitFunction(f, static_argnums, static_argnames, donate_argnums, backend)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, backend)
